"""Tuning a kernel of your own: a matrix-vector product.

The template splits the rows into blocks of ``rows`` and moves the block's
rows inside the column loop, so each x[j] loaded serves ``rows`` rows
(``tail='cut'``: any n; ``tail='perfect'`` is refused for an n not known
to be a multiple of ``rows``, and the search records it as refused). The
benchmark times the compiled kernel on a 1024 x 1024 matrix.

    python examples/tuning/gemv_tuning.py [--budget 60]

``template`` and ``bench`` live at the top level of this module: the
candidates' processes import them by name.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from exo_hl import f32, proc, seq, size

N = 1024


@proc
def gemv(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


def template(params):
    p = gemv.split('i', params["rows"], 'io', 'ii', tail=params["tail"])
    return p.reorder('ii', 'j')


def bench(compiled, params):
    """GFLOP/s (higher is better), best of 5 calls, after a check."""
    rng = np.random.default_rng(0)
    A = rng.integers(-2, 3, (N, N)).astype(np.float32)
    x = rng.integers(-2, 3, N).astype(np.float32)
    y = np.zeros(N, np.float32)
    compiled(N, N, A, x, y)
    assert np.array_equal(y, A @ x)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        compiled(N, N, A, x, y)
        best = min(best, time.perf_counter() - t)
    return 2.0 * N * N / best / 1e9


SPACE = {"rows": [1, 2, 4, 8, 16], "tail": ["cut", "perfect"]}


def main(argv=None):
    from exo_hl.tune import tune
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--trials", type=int, default=8)
    args = ap.parse_args(argv)
    result = tune(template, SPACE, bench, budget_s=args.budget,
                  n_trials=args.trials, seed=0, units="GFLOP/s")
    for t in result.trials:
        # a refusal's first line: "file:line: in procedure 'gemv': why"
        why = t.message.splitlines()[0].split("': ", 1)[-1] \
            if t.message else ""
        print(t.number, t.params, t.status,
              f"{t.value:.2f}" if t.ok else why[:72])
    print(result.summary())


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
