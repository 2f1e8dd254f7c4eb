"""Interleaved best-of timing shared by the app benchmarks.

Implementations are sampled in turn, so load from other processes hits
all of them alike; the best sample of each is kept.
"""
from __future__ import annotations

import math
import time

#: ``--clock``: wall time, or the CPU time of the process divided by the
#: thread count (every thread of ours and of the libraries is in this
#: process): it leaves out other processes' time slices on a busy machine,
#: though not their cache and memory traffic
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _sample(fn, inner, clock, div):
    t = clock()
    for _ in range(inner):
        fn()
    return (clock() - t) / inner / div


def _calls_per_sample(fn, min_time):
    """Calls that fill ``min_time``, from the best of three warm calls: the
    first call of a threaded kernel starts its thread pool (milliseconds),
    and a count taken from it would leave a sample of a few calls, each
    paying to wake threads that slept through the pause before it."""
    fn()
    t0 = min(_sample(fn, 1, time.perf_counter, 1) for _ in range(3))
    return max(1, min(10000, int(min_time / max(t0, 1e-7))))


def _warm(fn, seconds):
    """Call ``fn`` untimed for ``seconds``, at least once."""
    end = time.perf_counter() + seconds
    fn()
    while time.perf_counter() < end:
        fn()


def wake_threads(fns, seconds=0.3):
    """Run each of ``fns`` untimed for ``seconds``: for the first
    samples after the thread count changes. After a one-thread phase the
    other virtual CPUs have been idle for minutes, and the 10 ms warm-up
    before a sample did not bring them to speed: on the 2-core Zen 5 the
    first two-thread shape of a run (64^3) was measured at 0.82-0.86x
    OpenBLAS in two recorded runs and at 1.14-1.31x when the same
    two-thread shapes ran in a run of their own."""
    for fn in fns:
        _warm(fn, seconds)


def best_times(fns, reps, clock="wall", threads=1, min_time=0.02,
               settle=0.0, warmup=0.01):
    """Best seconds per call of each of ``fns``, sampled in turn (a sample
    repeats the call for at least ``min_time``), with a pause of
    ``settle`` seconds before each sample: the thread pools of the
    previous implementation (OpenBLAS's spin for about 0.1 s after a call,
    ONNX Runtime's and OpenMP's a while too) stop spinning instead of
    taking cores from the next one; under ``--clock cpu`` their spinning
    would even be charged to it, since they are threads of this process.

    Before each sample (after the pause, if any) the implementation runs
    untimed for ``warmup`` seconds (at least one call). Its threads went
    to sleep in the pause, and on a virtual machine the idle virtual CPU
    they wake on can take milliseconds to run at full speed again
    (measured on the 2-core development VM: with a 9 ms sample right after
    a 0.3 s pause, most two-thread samples of a 256^3 SGEMM ran at half
    speed, both in C and from Python; after 5-20 ms of warm-up they did
    not). And the implementation sampled before it left its own data in
    the caches: a sample of two or three calls (512^3-2048^3 SGEMMs) then
    starts with one partly cold call (on one thread, 1-3% slower samples
    for the kernel, measured alternately with and without the warm-up).
    Neither is what the sample is meant to measure."""
    c = CLOCKS[clock]
    div = threads if clock == "cpu" else 1
    inner = []
    for fn in fns:
        inner.append(_calls_per_sample(fn, min_time))
    best = [math.inf] * len(fns)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            if settle > 0:
                time.sleep(settle)
            if warmup > 0:
                _warm(fn, warmup)
            best[i] = min(best[i], _sample(fn, inner[i], c, div))
    return best


def add_timing_args(ap, what):
    """``--reps``, ``--clock`` and ``--settle`` on the parser ``ap``;
    ``what`` names the things timed (e.g. ``'kernel and shape'``)."""
    ap.add_argument("--reps", type=int, default=5,
                    help=f"samples per {what} (best is kept)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall time, or process CPU time / threads "
                    "(steadier on a busy machine)")
    ap.add_argument("--settle", type=float, default=0.3, metavar="SECONDS",
                    help="pause before each sample with more than one "
                    "thread, so the previous implementation's threads "
                    "stop spinning (default 0.3; 0 for none)")
    ap.add_argument("--warmup", type=float, default=0.01, metavar="SECONDS",
                    help="before each sample (after that pause) run the "
                    "implementation untimed this long, at least one call, "
                    "so its threads are awake and its data in the caches "
                    "when the sample starts (default 0.01; 0 for none)")
