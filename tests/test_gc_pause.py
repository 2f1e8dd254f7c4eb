"""``gc_pause.fewer_collections``: the collector's thresholds are raised
only while a user's call runs and are restored exactly afterwards."""
from __future__ import annotations

import gc
import threading

import pytest

from exo_hl import f32, proc, seq, size
from exo_hl.gc_pause import SCHEDULING_THRESHOLDS, fewer_collections


@pytest.fixture
def thresholds():
    old = gc.get_threshold()
    yield
    gc.set_threshold(*old)


@proc
def axpy(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += x[i]


def test_raised_inside_restored_after(thresholds):
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == SCHEDULING_THRESHOLDS
        with fewer_collections():       # nested: still raised
            assert gc.get_threshold() == SCHEDULING_THRESHOLDS
        assert gc.get_threshold() == SCHEDULING_THRESHOLDS
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_after_an_error(thresholds):
    gc.set_threshold(500, 7, 3)
    with pytest.raises(ValueError):
        with fewer_collections():
            raise ValueError
    assert gc.get_threshold() == (500, 7, 3)


def test_never_lowers_and_keeps_automatic_collection_off(thresholds):
    gc.set_threshold(50000, 5, 100)
    with fewer_collections():
        assert gc.get_threshold() == (50000, 20, 100)
    assert gc.get_threshold() == (50000, 5, 100)
    gc.set_threshold(0, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)


def test_overlapping_threads_restore_the_original(thresholds):
    gc.set_threshold(600, 9, 9)
    entered, leave = threading.Event(), threading.Event()

    def other():
        with fewer_collections():
            entered.set()
            leave.wait(10)
    t = threading.Thread(target=other)
    with fewer_collections():
        t.start()
        assert entered.wait(10)
    # this thread left first: the other one is still inside
    assert gc.get_threshold() == SCHEDULING_THRESHOLDS
    leave.set()
    t.join(10)
    assert gc.get_threshold() == (600, 9, 9)


def test_a_scheduling_call_runs_raised_and_restores(thresholds, monkeypatch):
    gc.set_threshold(700, 10, 10)
    seen = []
    import exo_hl.rewrites.split as split_mod
    real = split_mod.split

    def spy(*a, **k):
        seen.append(gc.get_threshold())
        return real(*a, **k)
    monkeypatch.setattr(split_mod, "split", spy)
    p = axpy.split("i", 4, "io", "ii", tail="guard")
    assert seen == [SCHEDULING_THRESHOLDS]
    assert gc.get_threshold() == (700, 10, 10)
    assert "io" in str(p)
