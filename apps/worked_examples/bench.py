"""Benchmark of docs/worked_examples.md: the naive and the scheduled gemv
(one row at a time, and rows in blocks) and 3x3 blur of ``kernels.py``,
side by side with numpy, in one run.

    python apps/worked_examples/bench.py [--rounds 7] [--size 2048]
        [--write]

Everything runs on one thread (``OPENBLAS_NUM_THREADS=1`` and friends are
set before numpy loads, so numpy's sgemv is single-threaded like the
kernels). Each round times every variant once (best of 3 samples, each the
mean of as many calls as fill 20 ms of the process's CPU time, less
disturbed than wall time by other jobs), interleaved, so that a change in
the machine's load hits all of them alike; the figures are the medians over
the rounds. The compiled kernels run ``bind``-ed (their arguments checked
once, not on every call: the check costs tens of microseconds of Python,
which is several per cent of a sub-millisecond gemv; numpy's call costs about
a microsecond). Before timing, each scheduled kernel's output is checked
against numpy. ``--write`` stores the table, the machine and its load in
``results.md`` (included by the docs page).

A benchmark, not a test: on a shared, loaded machine the figures are noisy.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from apps.worked_examples.kernels import (  # noqa: E402
    blur3x3, gemv, library, schedule_blur, schedule_gemv, schedule_gemv_row)

CLOCK = time.process_time


def best_ms(fn, samples=3):
    """Best of ``samples``; a sample is the mean over as many calls as
    fill 20 ms of CPU time."""
    t0 = CLOCK()
    fn()
    one = max(CLOCK() - t0, 1e-6)
    n = max(1, int(0.02 / one))
    best = float("inf")
    for _ in range(samples):
        t0 = CLOCK()
        for _ in range(n):
            fn()
        best = min(best, (CLOCK() - t0) / n)
    return best * 1e3


def _blur_numpy(x, out):
    np.multiply(x[:-2, :-2] + x[:-2, 1:-1] + x[:-2, 2:] + x[1:-1, :-2]
                + x[1:-1, 1:-1] + x[1:-1, 2:] + x[2:, :-2] + x[2:, 1:-1]
                + x[2:, 2:], np.float32(0.1111111), out=out)


def variants(size, lib=None):
    """{kernel: {variant: zero-argument callable}}, each scheduled
    kernel's output checked against numpy first."""
    rng = np.random.default_rng(0)
    m = n = size
    A = rng.standard_normal((m, n), dtype=np.float32)
    x = rng.standard_normal(n, dtype=np.float32)
    y = np.zeros(m, np.float32)
    img = rng.random((size + 2, size + 2), dtype=np.float32)
    out = np.zeros((size, size), np.float32)
    g_naive, g_vec = gemv.compile(), schedule_gemv(lib=lib).compile()
    g_row = schedule_gemv_row(lib=lib).compile()
    b_naive, b_vec = blur3x3.compile(), schedule_blur(lib=lib).compile()

    for f in (g_vec, g_row):
        y0 = np.zeros(m, np.float32)
        f(m, n, A, x, y0)
        np.testing.assert_allclose(y0, A @ x, rtol=1e-3, atol=1e-3)
    want = np.empty_like(out)
    _blur_numpy(img, want)
    b_vec(size, size, img, out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    g_naive_run = g_naive.bind(m, n, A, x, y)
    b_naive_run = b_naive.bind(size, size, img, out)

    def g_numpy():
        np.matmul(A, x, out=y)
    return {
        "gemv": {
            "naive": g_naive_run,
            "scheduled": g_vec.bind(m, n, A, x, y),
            "numpy": g_numpy,
        },
        "gemv, one row at a time": {
            "naive": g_naive_run,
            "scheduled": g_row.bind(m, n, A, x, y),
            "numpy": g_numpy,
        },
        "blur3x3": {
            "naive": b_naive_run,
            "scheduled": b_vec.bind(size, size, img, out),
            "numpy": lambda: _blur_numpy(img, out),
        },
    }


def measure(size=2048, rounds=7, lib=None):
    """{kernel: {variant: [ms per round]}} and the load averages seen."""
    vs = variants(size, lib)
    times = {k: {v: [] for v in d} for k, d in vs.items()}
    loads = [os.getloadavg()[0]]
    for _ in range(rounds):
        seen = {}       # a variant two kernels share is timed once a round
        for k, d in vs.items():
            for v, fn in d.items():
                if id(fn) not in seen:
                    seen[id(fn)] = best_ms(fn)
                times[k][v].append(seen[id(fn)])
        loads.append(os.getloadavg()[0])
    return times, loads


def machine():
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def _load_words(load):
    """What the highest load average of the run says about the machine."""
    if load < 0.5 * (os.cpu_count() or 1):
        return "a quiet machine"
    return "other jobs shared the machine"


def table(times, size, loads, lib_name):
    lines = [f"Measured by `python apps/worked_examples/bench.py --write` "
             f"on {time.strftime('%Y-%m-%d')}: {machine()}, library "
             f"{lib_name}, one thread, {size} x {size} f32; median over "
             f"{len(loads) - 1} rounds of CPU time (each the best of 3 "
             f"samples), the variants interleaved; load average "
             f"{min(loads):.1f} to {max(loads):.1f} during the run "
             f"({_load_words(max(loads))}).", "",
             "| kernel | naive C | scheduled | numpy | scheduled vs naive "
             "| scheduled vs numpy |",
             "|---|---|---|---|---|---|"]
    for k, d in times.items():
        med = {v: statistics.median(t) for v, t in d.items()}
        lines.append(
            f"| {k} | {med['naive']:.2f} ms | {med['scheduled']:.2f} ms | "
            f"{med['numpy']:.2f} ms | {med['naive'] / med['scheduled']:.1f}x"
            f" faster | {med['numpy'] / med['scheduled']:.2f}x |")
    lines.append("")
    lines.append("(\"scheduled vs numpy\" above 1 means the scheduled kernel "
                 "is faster.)")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--write", action="store_true",
                    help="store the table in results.md (the docs page "
                         "includes it)")
    a = ap.parse_args(argv)
    if a.size % 16:
        ap.error("--size must be a multiple of 16 (gemv asserts n % 16 == 0)")
    lib = library()
    times, loads = measure(a.size, a.rounds, lib)
    text = table(times, a.size, loads, lib[0].__name__)
    print(text)
    if a.write:
        (HERE / "results.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
