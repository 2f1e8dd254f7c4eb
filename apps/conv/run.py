"""The conv layer on AVX2 or AVX-512: schedule, check against numpy, time.

    python apps/conv/run.py [--isa avx2|avx512|auto] [--reps 5]
                            [--clock wall|cpu] [--steps | --full]

Picks the instruction set (``auto``: the best one this CPU has), prints
the schedule (``--steps``: every stage; ``--full``: the final kernel),
checks the kernel against numpy (the interpreter on a tiny layer, the
compiled C on layers with tail columns and channels; small-integer data,
so results must be exactly equal), then times the general-size and the
size-specialized kernel on Halide's layer (N=5, output 80x100,
IC=OC=128) on one thread, against the measured FMA peak.
``bench.py`` compares with ONNX Runtime and im2col + OpenBLAS.

On a CPU without the requested instruction set it exits with status 2 and
a one-line message, unless emulation is on (``EXO_HL_EMULATE=1``): then
the kernel runs through the emulation layer, and its timings mean nothing.
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

from apps.common.blas_env import configure_blas, set_openmp_threads  # noqa

configure_blas()                     # numpy's BLAS on one thread

import numpy as np  # noqa: E402

from apps.common.peak import PeakUnavailable, fma_peak  # noqa: E402
from apps.conv.api import RawKernel, choose_isa  # noqa: E402
from apps.conv.reference import reference  # noqa: E402
from apps.conv.schedule import (HALIDE_SIZES, ISAS, flops,  # noqa: E402
                                specialized, stages)

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def reference_int(inp, wt, bias):
    """relu(bias + conv3x3) in float64 (exact on small integers)."""
    return reference(inp, wt, bias)


def check_exact(runner, sizes, rng):
    N, H, W, IC, OC = sizes
    inp = rng.integers(-3, 4, (N, H + 2, W + 2, IC)).astype(np.float32)
    wt = rng.integers(-3, 4, (3, 3, IC, OC)).astype(np.float32)
    bias = rng.integers(-3, 4, OC).astype(np.float32)
    out = np.full((N, H, W, OC), np.nan, np.float32)
    runner(N=N, H=H, W=W, IC=IC, OC=OC, inp=inp, wt=wt, bias=bias, out=out)
    return np.array_equal(out, reference_int(inp, wt, bias))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isa", choices=["auto", *ISAS], default="auto")
    ap.add_argument("--reps", type=int, default=5,
                    help="timed runs per kernel (best is kept)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    ap.add_argument("--steps", action="store_true",
                    help="print every stage of the schedule")
    ap.add_argument("--full", action="store_true",
                    help="print the final kernel")
    ap.add_argument("--no-time", action="store_true",
                    help="checks only: no timing of Halide's layer")
    args = ap.parse_args(argv)

    isa, emulated, note = choose_isa(args.isa)
    if isa is None:
        print(f"run.py: {note}", file=sys.stderr)
        return 2
    print(f"ISA: {isa.name} ({note}): {isa.label} register tile "
          f"({isa.cols * isa.regs} accumulators of {isa.lanes} x f32)")
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
        what, p = st[2]
        print(f"\n# the schedule at stage '{what}' (--full prints the "
              f"final kernel, --steps every stage)\n{p}")
    print(f"\nscheduling took {t_sched:.2f} s "
          f"({len(fast.derivation()) - 1} checked rewrites)\n")

    rng = np.random.default_rng(0)
    tiny = (1, 2, isa.cols + 2, 3, isa.ob + 3)   # tail columns and channels
    if not check_exact(fast.interpret, tiny, rng):
        print("run.py: interpreted kernel differs from numpy",
              file=sys.stderr)
        return 1
    print(f" interpret: equal to numpy on N, H, W, IC, OC = {tiny}")
    compiled = fast.compile()
    for sizes in ((2, 3, 2 * isa.cols, 4, 2 * isa.ob),
                  (1, 4, 3 * isa.cols + 1, 5, isa.ob + isa.lanes + 1),
                  (3, 1, 1, 1, 1)):
        try:
            ok = check_exact(compiled, sizes, rng)
        except RuntimeError as e:     # the host check of the compiled code
            print(f"run.py: {e}", file=sys.stderr)
            return 2
        if not ok:
            print(f"run.py: compiled kernel differs from numpy on {sizes}",
                  file=sys.stderr)
            return 1
        print(f"compiled C: equal to numpy on N, H, W, IC, OC = {sizes}")
    if args.no_time:
        return 0

    sizes = tuple(HALIDE_SIZES.values())
    set_openmp_threads(1)
    kernels = {"general": RawKernel(compiled),
               "specialized": RawKernel(specialized(isa)
                                        .compile())}
    N, H, W, IC, OC = sizes
    inp = rng.standard_normal((N, H + 2, W + 2, IC), dtype=np.float32)
    wt = rng.standard_normal((3, 3, IC, OC), dtype=np.float32)
    bias = rng.standard_normal(OC, dtype=np.float32)
    out = np.empty((N, H, W, OC), np.float32)
    best = {k: math.inf for k in kernels}
    clock = CLOCKS[args.clock]
    for _ in range(args.reps):
        for k, f in kernels.items():
            t = clock()
            f(sizes, inp, wt, bias, out)
            best[k] = min(best[k], clock() - t)
    want = reference_int(inp, wt, bias)
    err = float(np.max(np.abs(out - want)) / np.max(want))
    peak = None
    if not emulated:
        try:
            peak = fma_peak(isa.name)
        except PeakUnavailable as e:
            print(f"FMA peak: not measured ({e})")
    print(f"\nHalide's layer N={N}, {H}x{W}, IC={IC}, OC={OC}, 1 thread, "
          f"best of {args.reps} ({args.clock} clock)"
          f"{' (EMULATED)' if emulated else ''}:")
    for k, s in best.items():
        g = flops(*sizes) / s / 1e9
        pct = f", {100 * g / peak:.0f}% of the FMA peak ({peak:.1f})" \
            if peak else ""
        print(f"  {k:12s} {g:6.1f} GFLOP/s{pct}")
    print(f"relative error vs a float64 reference: {err:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
