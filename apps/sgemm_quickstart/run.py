"""Quickstart: schedule SGEMM, check it, compile it, and time it.

    python apps/sgemm_quickstart/run.py [--size 512]

Prints the scheduled procedure, checks it against numpy through both the
reference interpreter and the compiled C, then times the naive and the
scheduled C side by side with numpy (its BLAS, one thread, with
OPENBLAS_CORETYPE unset) as the baseline, each also as a percentage of this
core's measured FP32 FMA peak.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo
sys.path.insert(0, HERE)

# single-threaded BLAS (our kernels are single-threaded), OPENBLAS_CORETYPE
# unset; before numpy (or exo_hl, which imports it) is loaded
from apps.common.blas_env import blas_description, configure_blas  # noqa
BLAS_NOTES = configure_blas()

import numpy as np  # noqa: E402

from apps.common.peak import best_fma_peak  # noqa: E402
from kernel import sgemm  # noqa: E402
from schedule import schedule  # noqa: E402


def best_time(fn, reps):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=512,
                    help="M = N = K (multiple of 32)")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    n = args.size
    if n % 32:
        ap.error("--size must be a multiple of 32")

    for line in BLAS_NOTES:
        print(line)
    t0 = time.perf_counter()
    fast = schedule()
    t_sched = time.perf_counter() - t0
    print(fast)
    print(f"\nscheduling took {t_sched * 1e3:.0f} ms "
          f"({len(fast.derivation()) - 1} checked rewrites)\n")

    rng = np.random.default_rng(0)
    # small integers keep every reordered sum exact, so results compare equal
    small = [rng.integers(-3, 4, (m, k)).astype(np.float32)
             for m, k in ((32, 16), (16, 64), (32, 64))]
    want = small[2] + small[0] @ small[1]
    for name, run in (("interpret", fast.interpret),
                      ("compiled C", fast.compile())):
        C = small[2].copy()
        run(M=32, N=64, K=16, A=small[0], B=small[1], C=C)
        assert np.array_equal(C, want), f"{name} result differs from numpy"
        print(f"{name:>10}: equal to numpy on a 32x64x16 problem")

    A = rng.standard_normal((n, n), dtype=np.float32)
    B = rng.standard_normal((n, n), dtype=np.float32)
    C0 = rng.standard_normal((n, n), dtype=np.float32)
    flops = 2.0 * n ** 3
    rows = []
    for label, fn in (("naive exo_hl (C)", sgemm.compile()),
                      ("scheduled exo_hl (C)", fast.compile())):
        C = C0.copy()
        t = best_time(lambda: fn(n, n, n, A, B, C), args.reps)
        rows.append((label, t))
    C = C0.copy()
    rows.append(("numpy / BLAS, 1 thread", best_time(
        lambda: np.add(C, A @ B, out=C), args.reps)))
    check = C0 + A @ B
    C = C0.copy()
    fast.compile()(n, n, n, A, B, C)
    err = float(np.max(np.abs(C - check)) / np.max(np.abs(check)))
    isa, peak = best_fma_peak()
    print(f"\nBLAS: {blas_description()}")
    if isa is None:
        print(f"FMA peak: not measured ({peak})")
        peak = None
    else:
        print(f"FMA peak ({isa}, 1 core, measured): {peak:.1f} GFLOP/s")
    print(f"\nSGEMM {n}x{n}x{n}, best of {args.reps} "
          f"(relative error of scheduled vs numpy: {err:.1e})")
    for label, t in rows:
        g = flops / t / 1e9
        pct = f"{100 * g / peak:5.1f}% of peak" if peak else ""
        print(f"  {label:<24} {t * 1e3:9.2f} ms   {g:7.2f} GFLOP/s   {pct}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
