"""Effect-analysis benchmark: solver throughput, cache hit rate, and the
reorder check on every adjacent loop pair of a 6-deep tiled gemm.

Run: python benchmarks/effects_bench.py
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from exo_hl import DRAM, f32, proc, seq, size
from exo_hl.effects import api
from exo_hl.effects import smt


@proc
def tiled_gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
               B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert M % 8 == 0
    assert N % 8 == 0
    assert K % 8 == 0
    for io in seq(0, M / 8):
        for jo in seq(0, N / 8):
            for ko in seq(0, K / 8):
                for ii in seq(0, 8):
                    for jj in seq(0, 8):
                        for kk in seq(0, 8):
                            C[8 * io + ii, 8 * jo + jj] += (
                                A[8 * io + ii, 8 * ko + kk] *
                                B[8 * ko + kk, 8 * jo + jj])


@proc
def stencil(N: size, A: f32[N + 2, N + 2] @ DRAM, B: f32[N + 2, N + 2] @ DRAM):
    for i in seq(0, N):
        for j in seq(0, N):
            B[i + 1, j + 1] = A[i, j + 1] + A[i + 2, j + 1]
            A[i + 1, j + 1] = B[i + 1, j]


def reorder_all(p):
    ir = p.ir()
    out = []
    for depth in range(5):
        path = (0, ) * (depth + 1)
        t0 = time.perf_counter()
        r = api.can_reorder_loops(ir, path)
        out.append((path, bool(r), time.perf_counter() - t0))
    return out


def main():
    api.clear_cache()
    st = api.stats()
    st.reset()
    print("reorder check on each adjacent loop pair of a 6-deep tiled gemm")
    t0 = time.perf_counter()
    for path, ok, dt in reorder_all(tiled_gemm):
        print(f"  outer loop at depth {len(path) - 1}: "
              f"{'ok' if ok else 'REJECTED'}  {dt * 1e3:7.2f} ms")
    print(f"  total (cold): {(time.perf_counter() - t0) * 1e3:.1f} ms")
    t0 = time.perf_counter()
    reorder_all(tiled_gemm)
    print(f"  total (warm cache): {(time.perf_counter() - t0) * 1e3:.1f} ms")

    # throughput on queries that reach the solver
    st.reset()
    api.clear_cache()
    ir = stencil.ir()
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < 2.0:
        api.can_fission(ir, (0, 0), 1)
        api.can_reorder_loops(ir, (0, ))
        api.loop_is_parallel(ir, (0, 0))
        n += 1
        if n % 5 == 0:
            api.clear_cache()   # keep the solver busy, not just the cache
    dt = time.perf_counter() - t0
    print(f"\nqueries: {st.queries} in {dt:.2f} s = {st.queries / dt:.0f} "
          f"queries/s ({st.solver_calls} reached z3, "
          f"{st.solver_calls / max(st.solver_time, 1e-9):.0f} z3 calls/s)")
    print(f"cache hit rate: {st.cache_hits / max(st.queries, 1):.1%}; "
          f"decided by simplification alone: {st.trivial}; "
          f"unknown: {st.unknown}")

    # --- bounds checking of a 100-statement procedure -------------------
    bench_bounds()


# ---------------------------------------------------------------------------
# bounds checking (exo_hl.effects.bounds)


def _bounds_src(nstmts):
    """A ~nstmts-statement procedure: loops with offsets, guards, windows and
    calls with preconditions, all in bounds."""
    lines = ["@instr('copy16;')",
             "def copy16(n: size, src: [f32][n] @ DRAM, dst: [f32][n] @ DRAM):",
             "    assert n <= 16",
             "    for i in seq(0, n):",
             "        dst[i] = src[i]",
             "",
             "def big(n: size, m: size, A: f32[n + 8, m], B: f32[n + 8, m]):",
             "    assert m >= 16"]
    k = 0
    while k < nstmts:
        c = k % 8
        lines += [f"    for i{k} in seq(0, n):",
                  f"        for j{k} in seq(0, m - {c}):",
                  f"            A[i{k} + {c}, j{k} + {c}] += B[i{k}, j{k}]",
                  f"            if i{k} + j{k} < m:",
                  f"                B[i{k} + 8, j{k}] = A[i{k}, j{k}]",
                  f"        w{k} = A[i{k}, 0:16]",
                  f"        copy16(16, w{k}, B[i{k} + {c}, 0:16])"]
        k += 7
    return "\n".join(lines) + "\n"


def bench_bounds(nstmts=100, reps=5):
    """Time exo_hl.effects.bounds.check_proc on a generated procedure."""
    from exo_hl.core_ir.traversal import walk_stmts
    from exo_hl.effects import bounds
    from exo_hl.frontend.decorators import parse_procs_source

    src = _bounds_src(nstmts)
    t0 = time.perf_counter()
    big = parse_procs_source(src, {}, "<bounds-bench>")[-1].ir()
    parse_dt = time.perf_counter() - t0
    nst = sum(1 for _ in walk_stmts(big.body))
    nob = len(bounds.obligations(big)[1])
    cold = []
    for _ in range(reps):
        api.clear_cache()          # every cache (exo_hl.caches.clear_all)
        t0 = time.perf_counter()
        bounds.check_proc(big)
        cold.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    bounds.check_proc(big)
    warm = time.perf_counter() - t0
    print(f"\nbounds check of a {nst}-statement procedure "
          f"({nob} obligations): cold cache {min(cold) * 1e3:.1f} ms "
          f"(best of {reps}), warm {warm * 1e3:.1f} ms; "
          f"parse + check {parse_dt * 1e3:.1f} ms")
    return min(cold), warm


if __name__ == "__main__":
    main()
