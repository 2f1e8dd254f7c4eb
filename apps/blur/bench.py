"""Blur benchmark: every schedule of ``apps/blur/blur.py`` beside a memcpy
of the same bytes and beside the naive schedule, measured in one run.

    python apps/blur/bench.py [--shape H W ...] [--reps 15] [--threads N]

Both algorithms are timed: Halide's (``blur16``: 16-bit sums that wrap)
and the exact mean (``blur``). For each shape (output ``H x W``; default
1024 x 2048 and Halide's app shape 4800 x 6400) it checks every schedule's
output against its algorithm's naive one bit for bit, then times each (best of ``--reps`` samples, each the
mean of as many calls as fill 20 ms), interleaved with ``memcpy`` of the
output's bytes from one buffer to another (the bandwidth bound: the blur
must read the input and write the output at least once; the input's two
extra rows and columns are ignored). Columns: schedule, ms, ratio to the
memcpy, speedup over naive. ``par`` schedules use OpenMP
(``OMP_NUM_THREADS``, ``--threads``). ``--clock cpu`` (the default) times
the process's CPU time, less disturbed by other work on a loaded machine
than wall time (``--clock wall``); for ``par`` schedules it is the sum over
threads, so use wall time to see a parallel speedup.

A benchmark, not a test: on a shared, loaded machine the figures are noisy.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from apps.blur.blur import (SCHEDULES, SCHEDULES16,  # noqa: E402
                             SCHEDULES16_AVX512)
from exo_hl.codegen_c.host_cpu import missing_features  # noqa: E402

SHAPES = ((1024, 2048), (4800, 6400))


def _random(rng, shape, dtype):
    """Full-range ui16 pixels, or floats in [0, 1)."""
    if dtype == np.uint16:
        return rng.integers(0, 65536, shape, dtype=np.uint16)
    return rng.random(shape, dtype=dtype)


def best_ms(fn, reps, clock=time.perf_counter):
    """Best of ``reps`` samples; a sample is the mean over as many calls
    as fill 20 ms of ``clock``."""
    t0 = clock()
    fn()
    one = max(clock() - t0, 1e-6)
    n = max(1, int(0.02 / one))
    best = float("inf")
    for _ in range(reps):
        t0 = clock()
        for _ in range(n):
            fn()
        best = min(best, (clock() - t0) / n)
    return best * 1e3


def main(argv=None, schedules=SCHEDULES, dtype=np.uint16, what="ui16",
         doc=__doc__, algorithms=None):
    """Parse the options, check and time ``schedules`` (a name -> builder
    map with a ``naive`` entry) on images of ``dtype``; or, given
    ``algorithms`` (a label -> such map), every algorithm's schedules,
    each checked against its own ``naive``, beside one memcpy."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--shape", type=int, nargs=2, action="append")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    a = ap.parse_args(argv)
    if a.threads:
        os.environ["OMP_NUM_THREADS"] = str(a.threads)
    algos = algorithms or {what: schedules}
    names = {al: [k for k in (a.only or sch) if k in sch]
             for al, sch in algos.items()}
    fns = {(al, k): algos[al][k]().compile(openmp=k.endswith("_par"))
           for al in algos for k in names[al]}
    clock = time.perf_counter if a.clock == "wall" else time.process_time
    print(f"load average: {os.getloadavg()}, clock: {a.clock}")
    rng = np.random.default_rng(0)
    for H, W in a.shape or SHAPES:
        inp = _random(rng, (H + 2, W + 2), dtype)
        outs = {key: np.zeros((H, W), dtype) for key in fns}
        for al, sch in algos.items():
            ref = np.zeros((H, W), dtype)
            sch["naive"]().compile()(H, W, inp, ref)
            for k in names[al]:
                fns[al, k](H, W, inp, outs[al, k])
                assert np.array_equal(outs[al, k], ref), (al, k)
        src = _random(rng, (H, W), dtype)
        dst = np.empty_like(src)
        nbytes = src.nbytes

        def memcpy():
            ctypes.memmove(dst.ctypes.data, src.ctypes.data, nbytes)
        # checked once: a timed run is the C call alone, as memcpy is
        runs = {key: f.bind(H, W, inp, outs[key]) for key, f in fns.items()}
        times = {key: [] for key in fns}
        mc = []
        for _ in range(3):          # interleave: load hits all alike
            mc.append(best_ms(memcpy, a.reps, clock))
            for key, run in runs.items():
                times[key].append(best_ms(run, a.reps, clock))
        m = min(mc)
        print(f"\n{H} x {W} {what}: memcpy of {nbytes / 2**20:.1f} MiB "
              f"{m:.3f} ms ({2 * nbytes / m / 1e6:.1f} GB/s read+write)")
        for al in algos:
            base = (min(times[al, "naive"]) if (al, "naive") in times
                    else None)
            if algorithms:
                print(f"-- {al}")
            print(f"{'schedule':<14} {'ms':>8} {'/memcpy':>8} {'vs naive':>9}")
            for k in names[al]:
                t = min(times[al, k])
                sp = f"{base / t:8.2f}x" if base else ""
                print(f"{k:<14} {t:8.3f} {t / m:8.2f} {sp:>9}")


def _halide16():
    """Halide's algorithm's schedules, with the AVX-512 ones where the CPU
    has AVX-512BW (elsewhere they are only emulated: not worth timing)."""
    if missing_features({"avx512f", "avx512bw"}):
        print("no AVX-512BW on this CPU: the vec512_* schedules are left out")
        return SCHEDULES16
    return {**SCHEDULES16, **SCHEDULES16_AVX512}


if __name__ == "__main__":
    main(algorithms={"halide16 (Halide's algorithm: 16-bit sums wrap)":
                     _halide16(),
                     "exact (the exact mean, sums in 32 bits)": SCHEDULES})
