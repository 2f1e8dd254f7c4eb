"""Helpers for the tests of the SGEMM app's kernel choice (``api.Dispatch``)
on every kernel a user can get: the app's entry point ``api.sgemm`` run
on a description of the test's (``installed``), shapes drawn around each
threshold and tail of that description (``edge_shapes``), results checked
against numpy exactly on small-integer data (every partial sum an exact
integer, whatever the summation order), and which kernel ran recorded
(``kernel_name``), so a test can require that every kernel was met."""
from __future__ import annotations

import contextlib

import numpy as np

from apps.common.blas_env import set_openmp_threads
from apps.sgemm import api, tuning

#: the kernels a description with every dispatch parameter has, by the
#: suffix of their name after ``sgemm_<isa>`` / ``sgemm_alpha_beta_<isa>``
EVERY_KERNEL = ("", "_1t", "_static", "_cols", "_cols_alt", "_narrow",
                "_narrow_1t", "_narrow_bip", "_narrow_bip_1t")


def clear_api_caches():
    for f in (api.compiled, api._narrow_dispatch, api._scheduled,
              api.narrow_procedures, api.alpha_beta_procedures,
              api.narrow_alpha_beta_procedures, api.static_procedure,
              api.static_alpha_beta_procedure, api.configuration,
              api.columns_alt_procedures):
        getattr(f, "cache_clear", lambda: None)()


@contextlib.contextmanager
def installed(isa_name: str, params: dict):
    """``api`` runs the description ``tuning.variant(isa_name, params)``
    for ``isa_name`` inside the block (its caches cleared on entry and
    exit, so no kernel of another description is reused)."""
    isa = tuning.variant(isa_name, params)
    saved = api.configuration
    clear_api_caches()
    api.configuration = lambda name: (isa, "test description") \
        if name == isa_name else saved(name)
    try:
        yield isa
    finally:
        api.configuration = saved
        clear_api_caches()


def kernel_name(kernel) -> str:
    """The procedure name of a ``RawKernel`` or ``Deferred`` (built)."""
    if isinstance(kernel, api.Deferred):
        kernel = kernel.kernel()
    return kernel.compiled.proc.name


def suffix(name: str, isa_name: str) -> str:
    for head in (f"sgemm_alpha_beta_{isa_name}", f"sgemm_{isa_name}"):
        if name.startswith(head):         # (the cols kernel's alpha/beta
            rest = name[len(head):]       # one drops '_narrow')
            return {"_cols_narrow": "_cols",
                    "_cols_narrow_alt": "_cols_alt"}.get(rest, rest)
    raise AssertionError(name)


def edge_shapes(isa, big_k: int = 8192) -> tuple:
    """(Ms, Ns, Ks) around every threshold and tail of ``isa``: 1, MR - 1,
    MR + 1, 2 MR - 1 (one row block and its tail; the same for the narrow
    tile), ``narrow_b_m`` +- 1; N at the register, NR, ``narrow_b_n``,
    ``narrow_n``, ``nc_cols`` multiples (1 and 2 blocks, a tail),
    ``dynamic_min_n``; K = 1, KC +- 1, ``narrow_kc`` +- 1, ``big_k``."""
    mrs = {isa.mr, isa.narrow_mr or isa.mr}
    Ms = {1, 101, 301}
    for mr in mrs:
        Ms |= {mr - 1, mr + 1, 2 * mr - 1, 2 * mr}
    if isa.narrow_b_m:
        Ms |= {isa.narrow_b_m, isa.narrow_b_m + 1}
    nrs = {isa.nr, isa.narrow_nr or isa.nr}
    Ns = {1, isa.lanes - 1, isa.lanes + 1, 255, 256, 257, 511, 513, 1040}
    for nr in nrs:
        Ns |= {nr - 1, nr + 1}
    for t in (isa.narrow_b_n, isa.narrow_n, isa.dynamic_min_n):
        if t:
            Ns |= {t - 1, t, t + 1}
    if isa.nc_cols:
        Ns |= {2 * isa.nc_cols, 2 * isa.nc_cols + 1, 4 * isa.nc_cols + 3,
               isa.nc_cols, isa.nc_cols + isa.nc_cols // 2}
    if isa.nc_cols_alt:
        Ns |= {2 * isa.nc_cols_alt, 4 * isa.nc_cols_alt + 1}
    Ks = {1, isa.kc - 1, isa.kc + 1, big_k}
    if isa.narrow_kc:
        Ks |= {isa.narrow_kc - 1, isa.narrow_kc + 1}
    pos = lambda s: sorted(x for x in s if x >= 1)        # noqa: E731
    return pos(Ms), pos(Ns), pos(Ks)


def ints(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32)


def check_products(isa_name, shapes, rng, thread_counts=(1, 2),
                   scaled_every=3):
    """Runs ``api.sgemm`` on every shape (and every ``scaled_every``-th
    with alpha = 2, beta = -3) on each thread count; returns {kernel
    suffix: count} of the kernels ``Dispatch`` picked, and raises
    ``AssertionError`` naming the first wrong product."""
    met = {}
    plain, scaled = api.compiled(isa_name)
    for threads in thread_counts:
        assert set_openmp_threads(threads)
        for i, (m, n, k) in enumerate(shapes):
            A, B, C = ints(rng, m, k), ints(rng, k, n), ints(rng, m, n)
            name = kernel_name(plain.pick(m, n, k))
            met[suffix(name, isa_name)] = met.get(
                suffix(name, isa_name), 0) + 1
            got = api.sgemm(A, B, C.copy(), isa=isa_name)
            assert np.array_equal(got, C + A @ B), \
                (name, threads, m, n, k)
            if scaled_every and i % scaled_every == 0:
                name = kernel_name(scaled.pick(m, n, k))
                got = api.sgemm(A, B, C.copy(), alpha=2.0, beta=-3.0,
                                isa=isa_name)
                assert np.array_equal(got, 2 * (A @ B) - 3 * C), \
                    (name, threads, m, n, k)
                new = api.sgemm(A, B, isa=isa_name)
                assert np.array_equal(new, A @ B), (threads, m, n, k)
    return met
