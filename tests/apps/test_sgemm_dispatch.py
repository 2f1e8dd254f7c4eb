"""Every kernel of the SGEMM app a user can get through ``api.sgemm``
(``api.Dispatch``: one-thread, threaded rows with dynamic and with static
row blocks, the column split on narrow block kernels, the narrow kernels
with B packed and read in place, each threaded and one-thread, and each
one's alpha/beta form) on the shapes around its tails and the
description's thresholds (M, N, K = 1, MR +- 1, 2 MR - 1, odd hundreds,
N = 255/256/257/511/513/1040, K = KC +- 1, 8192), 1 and 2 OpenMP
threads, equal to numpy exactly on small-integer data. The description
is a small one (2x8 tile, KC = 16: quick to build) whose thresholds put
N = 255..1040 on every branch; the app's own model description runs the
same sweep in the fuzzer (tests/apps/test_sgemm_dispatch_fuzz.py)."""
from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

from apps.common.blas_env import openmp_threads, set_openmp_threads
from apps.sgemm import api

from tests.apps.sgemm_dispatch_tools import (EVERY_KERNEL, check_products,
                                             edge_shapes, installed, ints,
                                             kernel_name, suffix)

#: every dispatch parameter on, thresholds where the brief's N land:
#: N <= 256 narrow (B in place for M <= 8, N <= 16), N = 512.. on the
#: column split of 256 (even on 2 threads), 384 on the one of 192,
#: 257..511 else on the row split, static below N = 400; on one thread
#: the column split for M K <= 4096
POINT = {"shape": "2x8", "kc": 16, "nc": 32, "par_min": 1 << 14,
         "nc_cols": 256, "nc_cols_alt": 192, "cols_one_mk": 1 << 12,
         "cols_narrow": True, "narrow_n": 256,
         "narrow_kc": 24, "narrow_shape": "3x8", "narrow_b_m": 8,
         "narrow_b_n": 16, "narrow_b_par_min": 1 << 9, "dynamic": True,
         "dynamic_min_n": 400}


def _shapes(isa):
    Ms, Ns, Ks = edge_shapes(isa)
    out = []
    for m, n, k in itertools.product(Ms, Ns, Ks):
        # K = 8192 with a few M and N (the others cost time, not cases)
        if k == 8192 and (m > 3 or n not in (1, 17, 257, 513)):
            continue
        if m * n * k <= 4e7:
            out.append((m, n, k))
    return out


@pytest.fixture
def restore_threads():
    before = openmp_threads()
    yield
    set_openmp_threads(before or os.cpu_count() or 1)


def test_every_kernel_on_edge_shapes(restore_threads):
    rng = np.random.default_rng(10)
    with installed("avx2", POINT) as isa:
        shapes = _shapes(isa)
        assert len(shapes) > 300
        met = check_products("avx2", shapes, rng)
    assert set(met) == set(EVERY_KERNEL), met


def test_empty_products_and_alpha_zero_as_blas():
    """Sizes of 0 and ``alpha == 0`` do as BLAS's sgemm: M or N = 0
    changes nothing, K = 0 or alpha = 0 leaves ``beta * C`` (zero for
    beta = 0, C not read) without reading A or B (a NaN or an infinity
    there does not reach C; the kernel would have made ``0 * inf`` a
    NaN); empty arrays of the wrong type or a read-only C still refused."""
    rng = np.random.default_rng(1)
    with installed("avx2", POINT):
        for m, n, k in ((0, 3, 4), (3, 0, 4), (3, 4, 0), (0, 0, 0)):
            A = np.ones((m, k), np.float32)
            B = np.ones((k, n), np.float32)
            out = api.sgemm(A, B, isa="avx2")
            assert out.shape == (m, n) and not out.any()
            C = ints(rng, m, n) if m * n else np.ones((m, n), np.float32)
            C0 = C.copy()
            assert api.sgemm(A, B, C, isa="avx2") is C
            assert np.array_equal(C, C0)
            for beta, want in ((0.0, np.zeros_like(C0)), (1.0, C0),
                               (-0.5, np.float32(-0.5) * C0)):
                C[...] = C0
                api.sgemm(A, B, C, alpha=3.0, beta=beta, isa="avx2")
                assert np.array_equal(C, want)
            with pytest.raises(TypeError, match="C-contiguous"):
                api.sgemm(A.astype(np.float64), B, isa="avx2")
            ro = np.zeros((m, n), np.float32)
            ro.flags.writeable = False
            with pytest.raises(ValueError, match="read-only"):
                api.sgemm(A, B, ro, isa="avx2")
        A = ints(rng, 5, 7)
        A[1, 2], A[3, 4] = np.inf, np.nan
        B = ints(rng, 7, 6)
        C0 = ints(rng, 5, 6)
        for beta, want in ((0.0, np.zeros_like(C0)),
                           (2.0, np.float32(2.0) * C0), (1.0, C0)):
            C = C0.copy()
            api.sgemm(A, B, C, alpha=0.0, beta=beta, isa="avx2")
            assert np.array_equal(C, want)
            C[...] = np.nan
            api.sgemm(A, B, C, alpha=-0.0, beta=0.0, isa="avx2")
            assert np.array_equal(C, np.zeros_like(C0))
        big = ints(rng, 9, 12)
        for A in (big[:, :5], big[::2, :], big[::-1, :], big.T):
            B = ints(rng, A.shape[1], 4)
            with pytest.raises(TypeError, match="C-contiguous"):
                api.sgemm(A, B, isa="avx2")
        # a C-contiguous view that starts inside a buffer is fine
        A = big[3:7]
        B = ints(rng, 12, 5)
        assert np.array_equal(api.sgemm(A, B, isa="avx2"), A @ B)


def test_descriptions_the_schedule_cannot_build_are_refused():
    """``tuning.variant`` (and so ``tuning.valid``) refuses what the
    schedule cannot build, instead of an error deep in the build (found
    by the dispatch fuzzer): a tile of one row or a k block of one (a
    split by 1 has no tail loop for the tail kernels: IndexError in
    ``stages``), the same for the narrow kernels; and the column split
    on narrow blocks gets blocks of whole narrow tiles (``nc_cols`` was
    rounded to the square tile's NR, and ``by_columns`` then raised
    ValueError for a block of 24 columns of a 16-wide narrow tile); the
    goto order with MC = MR (one row block per A block) likewise."""
    import dataclasses

    from apps.sgemm import tuning
    from apps.sgemm.schedule import by_columns
    from exo_hl import SchedulingError
    for params in ({"shape": "1x8"}, {"kc": 1}, {"narrow_shape": "1x8"},
                   {"narrow_kc": 1}):
        with pytest.raises(SchedulingError, match="at least 2"):
            tuning.variant("avx2", dict(params, isa="avx2"))
        assert "at least 2" in tuning.valid(dict(params, isa="avx2"))
    # the goto order splits the row blocks by MC / MR (StopIteration in
    # _goto_order for MC = MR)
    goto = {"isa": "avx2", "shape": "4x8", "kc": 8, "mc": 4,
            "order": "goto"}
    assert "at least 2 MR" in tuning.valid(goto)
    assert tuning.valid(dict(goto, mc=8)) is None
    params = {"shape": "2x8", "kc": 8, "narrow_shape": "2x16",
              "narrow_n": 32, "nc_cols": 24, "cols_narrow": True}
    isa = tuning.variant("avx2", params)
    assert isa.nc_cols == 16 and isa.cols_nr == 16
    assert tuning.variant("avx2", dict(params, cols_narrow=False)) \
        .nc_cols == 24
    with pytest.raises(ValueError, match="narrow tile"):
        dataclasses.replace(isa, nc_cols=24)
    assert "for jc in par(0, N / 16):" in str(by_columns(isa, isa.nc_cols))


def _with_specials(rng, x, p):
    """``x`` with a fraction ``p`` of its elements +-inf or NaN."""
    hit = rng.random(x.shape) < p
    x[hit] = rng.choice(np.array([np.inf, -np.inf, np.nan], np.float32),
                        int(hit.sum()))
    return x


def _product(A, B, C, alpha=1.0, beta=1.0):
    """alpha (A @ B) + beta C in float64, every term summed (inf - inf
    and 0 * inf are NaN whatever the order): exact on small integers."""
    with np.errstate(all="ignore"):
        t = (A.astype(np.float64)[:, :, None]
             * B.astype(np.float64)[None, :, :]).sum(axis=1)
        return (alpha * t + beta * C.astype(np.float64)).astype(np.float32)


def test_every_kernel_touches_only_its_arrays(restore_threads):
    """A, B and C flush against an inaccessible page after them, then
    before them (``tests/guard_pages``): a kernel that reads or writes
    past a tail (B read in place, a masked tile of C) would crash here;
    comparing values cannot see a read. Every kernel, 1 and 2 threads,
    plain and alpha/beta. Some elements are +-inf or NaN: a padded or
    masked tail that multiplied them by zero, or a zero padding of K read
    against a neighbouring row, would put NaN where IEEE arithmetic puts
    none (or the reverse); the result is compared element for element
    with the float64 sum of every product, NaNs equal."""
    from tests.guard_pages import guarded
    rng = np.random.default_rng(12)
    met = set()
    with installed("avx2", POINT) as isa:
        shapes = [s for s in _shapes(isa) if s[0] * s[1] * s[2] <= 1e6]
        picked = [shapes[i] for i in
                  rng.choice(len(shapes), 26, replace=False)]
        picked += [(1, 1, 1), (3, 17, 1), (9, 15, 17), (17, 513, 3)]
        plain, scaled = api.compiled("avx2")
        for threads, at in itertools.product((1, 2), ("end", "start")):
            assert set_openmp_threads(threads)
            for i, (m, n, k) in enumerate(picked):
                p = (0.0, 0.002, 0.03)[i % 3]
                A = guarded((m, k), np.float32, at,
                            _with_specials(rng, ints(rng, m, k), p))
                B = guarded((k, n), np.float32, at,
                            _with_specials(rng, ints(rng, k, n), p))
                C = guarded((m, n), np.float32, at,
                            _with_specials(rng, ints(rng, m, n), p / 4))
                want, C0 = _product(A, B, C), C.copy()
                met.add(suffix(kernel_name(plain.pick(m, n, k)), "avx2"))
                got = api.sgemm(A, B, C, isa="avx2")
                assert np.array_equal(got, want, equal_nan=True), \
                    (m, n, k, threads, at)
                C[...] = C0
                got = api.sgemm(A, B, C, alpha=2.0, beta=-1.0, isa="avx2")
                assert np.array_equal(got, _product(A, B, C0, 2.0, -1.0),
                                      equal_nan=True), (m, n, k, threads, at)
    assert met == set(EVERY_KERNEL), met
