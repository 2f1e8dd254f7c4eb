"""SGEMM on AVX-512: schedule, check against numpy, time against BLAS.

    python apps/sgemm_avx512/run.py [--sizes 256 512 1024] [--reps 5] [--steps]

Prints the schedule (the procedure before the final unrolling; ``--steps``
prints every stage, ``--full`` the final unrolled kernel), checks the kernel
against numpy through the interpreter and the compiled C, then prints one
timing table: the naive procedure compiled by exo_hl, the quickstart's 4x16
auto-vectorized kernel, this AVX-512 kernel and numpy's single-threaded BLAS.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

# single-threaded BLAS, so the baseline matches our single-threaded kernels
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.sgemm_avx512.schedule import (KC, MR, NR, sgemm,  # noqa: E402
                                        stages)


def quickstart_kernel():
    """The quickstart app's scheduled 4x16 kernel (compiler vectorized)."""
    qdir = REPO / "apps" / "sgemm_quickstart"
    sys.path.insert(0, str(qdir))
    try:
        spec = importlib.util.spec_from_file_location(
            "sgemm_quickstart_schedule", qdir / "schedule.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.schedule()
    finally:
        sys.path.remove(str(qdir))


def best_time(fn, reps):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def check_exact(p, runner, m, n, k, rng):
    """``runner`` equals numpy exactly on small-integer data (every partial
    sum is an exactly representable integer, so order does not matter)."""
    A = rng.integers(-3, 4, (m, k)).astype(np.float32)
    B = rng.integers(-3, 4, (k, n)).astype(np.float32)
    C = rng.integers(-3, 4, (m, n)).astype(np.float32)
    want = C + A @ B
    runner(M=m, N=n, K=k, A=A, B=B, C=C)
    return np.array_equal(C, want)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    step = int(np.lcm(NR, KC))     # M is free: the remainder rows have a kernel
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024],
                    help=f"M = N = K values (multiples of {step})")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--steps", action="store_true",
                    help="print every stage of the schedule")
    ap.add_argument("--full", action="store_true",
                    help="print the final (unrolled) kernel")
    args = ap.parse_args(argv)
    for n in args.sizes:
        if n % step:
            ap.error(f"size {n} is not a multiple of {step}")

    t0 = time.perf_counter()
    st = stages()
    t_sched = time.perf_counter() - t0
    fast = st[-1][1].rename("sgemm_avx512")
    if args.steps:
        for what, p in st:
            print(f"# --- {what}\n{p}\n")
    elif args.full:
        print(fast)
    else:
        print(f"# the schedule before unrolling (--full prints the final "
              f"kernel)\n{st[-2][1]}")
    print(f"\nscheduling took {t_sched:.2f} s "
          f"({len(fast.derivation()) - 1} checked rewrites)\n")

    rng = np.random.default_rng(0)
    compiled = fast.compile()
    tiny = (MR + 1, NR, KC)    # one 6-row block and one remainder row
    assert check_exact(fast, fast.interpret, *tiny, rng), \
        "interpret result differs from numpy"
    print(f" interpret: equal to numpy on a {MR + 1}x{NR}x{KC} problem")
    for m, n, k in ((2 * MR, 2 * NR, 2 * KC), (4 * MR + 5, 3 * NR, KC),
                    (3, NR, KC)):
        assert check_exact(fast, compiled, m, n, k, rng), \
            f"compiled C differs from numpy on {m}x{n}x{k}"
        print(f"compiled C: equal to numpy on a {m}x{n}x{k} problem")

    kernels = [("naive exo_hl (C)", sgemm.compile()),
               ("quickstart 4x16 (auto-vec)", quickstart_kernel().compile()),
               ("AVX-512 6x64 (this app)", compiled)]
    labels = [k for k, _ in kernels] + ["numpy / BLAS, 1 thread"]
    table = {}
    errs = {}
    for n in args.sizes:
        A = rng.standard_normal((n, n), dtype=np.float32)
        B = rng.standard_normal((n, n), dtype=np.float32)
        C0 = rng.standard_normal((n, n), dtype=np.float32)
        flops = 2.0 * n ** 3
        for label, fn in kernels:
            C = C0.copy()
            reps = 1 if label.startswith("naive") else args.reps
            t = best_time(lambda: fn(n, n, n, A, B, C), reps)
            table[label, n] = flops / t / 1e9
        C = C0.copy()
        t = best_time(lambda: np.add(C, A @ B, out=C), args.reps)
        table[labels[-1], n] = flops / t / 1e9
        ref = C0.astype(np.float64) + A.astype(np.float64) @ B
        C = C0.copy()
        compiled(n, n, n, A, B, C)
        errs[n] = float(np.max(np.abs(C - ref)) / np.max(np.abs(ref)))

    print(f"\nSGEMM, M = N = K, GFLOP/s (best of {args.reps}; naive: 1 run)")
    print(f"  {'kernel':<28}" + "".join(f"{n:>10}" for n in args.sizes))
    for label in labels:
        print(f"  {label:<28}" + "".join(f"{table[label, n]:10.2f}"
                                         for n in args.sizes))
    print("  relative error of AVX-512 vs float64 reference: " +
          ", ".join(f"{n}: {e:.1e}" for n, e in errs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
