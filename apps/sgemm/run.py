"""SGEMM on AVX2 or AVX-512: schedule, check against numpy, time against BLAS.

    python apps/sgemm/run.py [--isa avx2|avx512|auto] [--sizes 256 512 1024]
                             [--reps 7] [--clock wall|cpu] [--steps | --full]

Picks the instruction set (``auto``: the best one this CPU has), prints the
schedule (``--steps``: every stage; ``--full``: the final unrolled kernel),
checks the kernel against numpy (the interpreter on a tiny problem, the
compiled C on a few shapes including remainder rows; small-integer data, so
results must be exactly equal), measures this core's FMA peak, then prints
one row per size: exo_hl GFLOP/s, numpy's BLAS (OpenBLAS, one thread)
GFLOP/s, their ratio, and both as a percentage of the measured peak.

On a CPU without the requested instruction set it exits with status 2 and
a one-line message, unless emulation is on (``EXO_HL_EMULATE=1``): then the
kernel runs through the emulation layer, and its timings mean nothing.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common.blas_env import blas_description, configure_blas  # noqa

BLAS_NOTES = configure_blas()        # before numpy is imported

import numpy as np  # noqa: E402

from apps.common.peak import PeakUnavailable, fma_peak  # noqa: E402
from apps.sgemm.api import choose_isa  # noqa: E402
from apps.sgemm.schedule import ISAS, stages  # noqa: E402


#: ``--clock``: wall time, or the CPU time of this thread (single-threaded
#: kernels and BLAS both run in it), which leaves out the time slices other
#: processes take on a busy machine
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def best_times(fns, reps, clock=time.perf_counter):
    """Best time of each of ``fns``, run interleaved ``reps`` times (load
    from other processes then hits all of them alike)."""
    best = [math.inf] * len(fns)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            t = clock()
            fn()
            best[i] = min(best[i], clock() - t)
    return best


def check_exact(runner, m, n, k, rng):
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
    ap.add_argument("--isa", choices=["auto", *ISAS], default="auto")
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024],
                    help="M = N = K values (any sizes >= 1)")
    ap.add_argument("--reps", type=int, default=7,
                    help="timed runs per kernel and size (best is kept)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall time, or this thread's CPU time (steadier "
                    "on a busy machine)")
    ap.add_argument("--steps", action="store_true",
                    help="print every stage of the schedule")
    ap.add_argument("--full", action="store_true",
                    help="print the final (unrolled) kernel")
    args = ap.parse_args(argv)

    isa, emulated, note = choose_isa(args.isa)
    if isa is None:
        print(f"run.py: {note}", file=sys.stderr)
        return 2
    from apps.sgemm.api import configuration
    isa, params_note = configuration(isa.name)
    print(f"ISA: {isa.name} ({note}): {isa.label} micro-kernel, "
          f"{isa.mr * isa.regs} accumulators of {isa.lanes} x f32, "
          f"k blocks of {isa.kc}")
    print(f"parameters: {params_note}")
    for line in BLAS_NOTES:
        print(line)

    t0 = time.perf_counter()
    st = stages(isa)
    t_sched = time.perf_counter() - t0
    fast = st[-1][1]
    if args.steps:
        for what, p in st:
            print(f"\n# --- {what}\n{p}")
    elif args.full:
        print(f"\n{fast}")
    else:
        what, p = next(s for s in st if s[0].startswith("registers"))
        print(f"\n# the schedule before unrolling, {what} (--full prints "
              f"the final kernel, --steps every stage)\n{p}")
    print(f"\nscheduling took {t_sched:.2f} s "
          f"({len(fast.derivation()) - 1} checked rewrites)\n")

    rng = np.random.default_rng(0)
    compiled = fast.compile()
    tiny = (isa.mr + 1, isa.nr + 3, 5)    # a row block, a tail row and columns
    if not check_exact(fast.interpret, *tiny, rng):
        print("run.py: interpreted kernel differs from numpy", file=sys.stderr)
        return 1
    print(f" interpret: equal to numpy on a {'x'.join(map(str, tiny))} "
          f"problem")
    for m, n, k in ((2 * isa.mr, 2 * isa.nr, 2 * isa.kc),
                    (4 * isa.mr + 5, 3 * isa.nr + isa.lanes + 3,
                     isa.kc + 7),
                    (3, 5, 7)):
        try:
            ok = check_exact(compiled, m, n, k, rng)
        except RuntimeError as e:     # the host check of the compiled code
            print(f"run.py: {e}", file=sys.stderr)
            return 2
        if not ok:
            print(f"run.py: compiled kernel differs from numpy on "
                  f"{m}x{n}x{k}", file=sys.stderr)
            return 1
        print(f"compiled C: equal to numpy on a {m}x{n}x{k} problem")

    peak = None
    if emulated:
        print(f"\n{isa.name} FMA peak: not measured (emulated)")
    else:
        try:
            peak = fma_peak(isa.name)
            print(f"\n{isa.name} FMA peak, 1 core (measured): "
                  f"{peak:.1f} GFLOP/s")
        except PeakUnavailable as e:
            print(f"\n{isa.name} FMA peak: not measured ({e})")
    blas = blas_description()
    print(f"BLAS: {blas}")
    blas_name = "OpenBLAS" if "openblas" in blas.lower() else "numpy BLAS"

    rows, errs = [], {}
    for n in args.sizes:
        A = rng.standard_normal((n, n), dtype=np.float32)
        B = rng.standard_normal((n, n), dtype=np.float32)
        C0 = rng.standard_normal((n, n), dtype=np.float32)
        C1, C2, AB = C0.copy(), C0.copy(), np.empty_like(C0)

        def ours():
            compiled(n, n, n, A, B, C1)

        def theirs():                  # C += A @ B, like our kernel
            np.matmul(A, B, out=AB)
            np.add(C2, AB, out=C2)

        t_ours, t_blas = best_times([ours, theirs], args.reps,
                                    CLOCKS[args.clock])
        flops = 2.0 * n ** 3
        rows.append((n, flops / t_ours / 1e9, flops / t_blas / 1e9))
        ref = C0.astype(np.float64) + A.astype(np.float64) @ B
        C = C0.copy()
        compiled(n, n, n, A, B, C)
        errs[n] = float(np.max(np.abs(C - ref)) / np.max(np.abs(ref)))

    def pct(g):
        return f"{100 * g / peak:.0f}%" if peak else "n/a"

    head = ("size", "exo_hl GFLOP/s", f"{blas_name} GFLOP/s", "ratio",
            "exo_hl % peak", f"{blas_name} % peak")
    print(f"\nSGEMM C += A @ B, M = N = K, {isa.label}"
          f"{' (EMULATED)' if emulated else ''}, best of {args.reps} "
          f"({args.clock} clock), 1 core; ratio = exo_hl / {blas_name}")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("-" * (len(h) + 1) + ":" for h in head) + "|")
    for n, ours_g, blas_g in rows:
        cells = (str(n), f"{ours_g:.1f}", f"{blas_g:.1f}",
                 f"{ours_g / blas_g:.2f}", pct(ours_g), pct(blas_g))
        print("| " + " | ".join(c.rjust(len(h))
                                for c, h in zip(cells, head)) + " |")
    print("relative error vs a float64 reference: " +
          ", ".join(f"{n}: {e:.1e}" for n, e in errs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
