"""apps/common/timing.py: the interleaved best-of sampling the app
benchmarks share."""
from __future__ import annotations

from apps.common import timing


def _counter():
    calls = []
    return calls, (lambda: calls.append(1))


def test_warmup_runs_before_every_sample():
    # min_time 0: one call per sample; 1 + 3 calls size the samples
    calls, fn = _counter()
    timing.best_times([fn], reps=3, min_time=0.0, warmup=0.0)
    assert len(calls) == 4 + 3
    # a warm-up shorter than a call still makes one call before each sample
    calls, fn = _counter()
    timing.best_times([fn], reps=3, min_time=0.0, warmup=1e-12)
    assert len(calls) == 4 + 3 + 3


def test_samples_alternate_and_keep_the_best():
    order = []
    fns = [lambda: order.append("a"), lambda: order.append("b")]
    best = timing.best_times(fns, reps=2, min_time=0.0, warmup=0.0)
    assert len(best) == 2 and all(0 <= t < 1 for t in best)
    # sizing calls first, then the samples in turn
    assert order[8:] == ["a", "b", "a", "b"]
