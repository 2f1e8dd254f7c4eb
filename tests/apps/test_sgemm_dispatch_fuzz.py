"""Fuzzer of the SGEMM app's kernel choice: random descriptions (a tile,
KC, NC, MC, packing, prefetch, loop order, row-block sharing, and the
app's dispatch thresholds: ``par_min``, ``nc_cols`` / ``cols_narrow`` /
``cols_one_mk`` / ``nc_cols_alt``, the
narrow kernels' tile, KC, ``narrow_n`` and B-in-place limits,
``dynamic_min_n``) and random shapes drawn around that description's
tails and thresholds, run through ``api.sgemm`` (every kernel
``Dispatch`` can pick, and its alpha/beta form) on 1 and 2 OpenMP
threads against numpy, exactly (small-integer data).

The verdict per description: ``tuning.variant`` refuses it with a
``SchedulingError``, or every kernel the shapes reach builds and every
product is exact. Anything else (a wrong product, another exception
while building: a description accepted that the schedule cannot build)
fails.

Two generators: ``draw_small`` (small tiles and blocks, cheap to build:
the suite's fixed sample) and ``draw_space`` (a point of the tuning
search space, ``tuning.space`` through ``tuning.valid``, with dispatch
thresholds scaled to the drawn shapes: the slow test and the long run).
``EXO_HL_SGEMM_DISPATCH_FUZZ_S=<seconds>`` runs fresh seeds for that
long."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from apps.common.blas_env import openmp_threads, set_openmp_threads
from apps.sgemm import tuning
from exo_hl import SchedulingError

from tests.apps.sgemm_dispatch_tools import (check_products, edge_shapes,
                                             installed)

LONG_ENV = "EXO_HL_SGEMM_DISPATCH_FUZZ_S"

#: avx2 tiles the small generator draws (NR a multiple of 8 lanes, and
#: one that is not: refused)
SMALL_TILES = ("1x8", "2x8", "3x8", "2x16", "3x16", "4x8", "2x12")

# Found by it (each now refused by ``tuning.variant``, with a test in
# test_sgemm_dispatch.py): MR or KC of 1 and the narrow kernels' (seeds
# 11, 12, 22, 23: IndexError in stages), nc_cols not a multiple of the
# narrow tile with cols_narrow (ValueError in by_columns), order='goto'
# with MC = MR (seed 53: StopIteration in _goto_order).


def _pick(rng, xs):
    return xs[int(rng.integers(len(xs)))]


def _thresholds(rng, mr, nr, kc):
    """The app's dispatch parameters, drawn so that small shapes cross
    them (and, now and then, parameters the description must refuse or
    handle: an nc_cols that is no multiple of the narrow tile's NR, a
    narrow KC at or below the prefetch distance)."""
    nmr, nnr = _pick(rng, [(0, 0), (0, 0), (1, 8), (3, 8), (2, 16),
                           (4, 16)])
    out = {"par_min": _pick(rng, [0, 1 << 10, 1 << 14, 1 << 18]),
           "nc_cols": _pick(rng, [0, nr, 2 * nr, 3 * nr, 64, 256]),
           "cols_narrow": bool(rng.integers(2)),
           "cols_one_mk": _pick(rng, [0, 0, 1 << 8, 1 << 20]),
           "nc_cols_alt": _pick(rng, [0, 0, nr, 3 * nr, 48]),
           "narrow_n": _pick(rng, [0, nr, 24, 64, 256]),
           "narrow_kc": _pick(rng, [0, kc - 1, kc + 1, 2 * kc, 24]),
           "narrow_b_m": _pick(rng, [0, 1, 8, 64]),
           "narrow_b_n": _pick(rng, [0, 8, 16, 64]),
           "narrow_b_par_min": _pick(rng, [0, 1 << 9, 1 << 13]),
           "dynamic_min_n": _pick(rng, [0, 40, 400])}
    if nmr:
        out["narrow_shape"] = f"{nmr}x{nnr}"
    return out


def draw_small(rng) -> dict:
    """A description with a small tile and small blocks."""
    mr, nr = (int(x) for x in _pick(rng, SMALL_TILES).split("x"))
    kc = _pick(rng, [8, 16, 17, 24])
    p = {"shape": f"{mr}x{nr}", "kc": kc,
         "nc": _pick(rng, [0, 0, nr, 2 * nr, 4 * nr]),
         "mc": _pick(rng, [0, 0, mr, 3 * mr]),
         "pack_a": bool(rng.integers(4)), "pack_b": bool(rng.integers(4)),
         "prefetch": _pick(rng, [0, 0, 2, kc - 1]),
         "order": _pick(rng, ["rows", "rows", "goto"]),
         "dynamic": bool(rng.integers(2))}
    p.update(_thresholds(rng, mr, nr, kc))
    return p


def draw_space(rng) -> dict:
    """A valid point of ``tuning.space('avx2')`` with thresholds that
    small shapes cross."""
    space = tuning.space("avx2")
    while True:
        p = {k: _pick(rng, v) for k, v in space.items()}
        if tuning.valid(p) is None:
            break
    p = dict(p)
    del p["isa"]
    mr, nr = (int(x) for x in p["shape"].split("x"))
    p.update(_thresholds(rng, mr, nr, p["kc"]))
    return p


def draw_shapes(rng, isa, n: int) -> list:
    """``n`` shapes, each size drawn from the description's edge values
    (``edge_shapes``) or at random, and cheap (M N K at most 2e7)."""
    Ms, Ns, Ks = edge_shapes(isa, big_k=_pick(rng, [2 * isa.kc + 3, 8192]))
    out = []
    while len(out) < n:
        m, nn, k = (_pick(rng, xs) if rng.integers(4) else
                    int(rng.integers(1, 700))
                    for xs in (Ms, Ns, Ks))
        if m * nn * k <= 2e7:
            out.append((m, nn, k))
    return out


def run_point(params, rng, n_shapes, stats):
    """One description: refused, or exact on every drawn shape."""
    try:
        isa = tuning.variant("avx2", params)
    except SchedulingError:
        stats["refused"] += 1
        return
    with installed("avx2", params):
        met = check_products("avx2", draw_shapes(rng, isa, n_shapes), rng)
    stats["points"] += 1
    for k, v in met.items():
        stats["kernels"][k] = stats["kernels"].get(k, 0) + v


def fuzz(draw, seeds, n_shapes, budget_s=None):
    stats = {"points": 0, "refused": 0, "kernels": {}}
    t0, before = time.time(), openmp_threads()
    try:
        for seed in seeds:
            if budget_s is not None and time.time() - t0 > budget_s:
                break
            rng = np.random.default_rng(seed)
            params = draw(rng)
            try:
                run_point(params, rng, n_shapes, stats)
            except Exception as e:
                raise AssertionError(f"seed {seed}: {params}: {e!r}") from e
    finally:
        set_openmp_threads(before or os.cpu_count() or 1)
    return stats


def _seeds(fixed):
    long_run = os.environ.get(LONG_ENV)
    if not long_run:
        return fixed, None
    start = int(time.time()) % 10**6
    return range(start, start + 10**6), float(long_run)


def test_small_descriptions():
    """The suite's fixed sample: small descriptions with every kind of
    dispatch (their kernels built on first use)."""
    seeds, budget = _seeds([0, 11, 16])
    stats = fuzz(draw_small, seeds, 40, budget)
    print(stats)
    assert budget is not None or (stats["points"] >= 2 and
                                  stats["refused"] >= 1)
    assert len(stats["kernels"]) >= 5, stats


@pytest.mark.slow
def test_tuning_space_points():
    """A point of the tuning search space with the dispatch thresholds
    drawn so small shapes reach its kernels."""
    seeds, budget = _seeds([5])
    stats = fuzz(draw_space, seeds, 30, budget)
    print(stats)
    assert stats["points"] >= 1
