"""compute_root: fission the producer out of the loops around it."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import compute_root


@proc
def fused(n: size, x: f32[n], y: f32[n]):
    t: f32[n]
    for i in seq(0, n):
        t[i] = x[i] * 2.0
        y[i] = t[i] + 1.0


def test_compute_root_fissions_the_producer(equiv, same_text):
    p = compute_root(fused, 't[_] = _')
    same_text(p, """
def fused(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    t: f32[n] @ DRAM
    for i in seq(0, n):
        t[i] = x[i] * 2.0
    for i in seq(0, n):
        y[i] = t[i] + 1.0""")
    equiv(fused, p, [{"n": 1}, {"n": 5}])


@proc
def scan(n: size, x: f32[n + 1], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0
        x[i + 1] = 1.0


def test_compute_root_rejects_a_dependence_the_fission_breaks():
    with pytest.raises(SchedulingError):
        compute_root(scan, 'y[_] = _')   # later y[i] read the new x[i]


def test_compute_root_rejects_a_producer_that_is_no_cursor_or_pattern():
    # returned the procedure unchanged before
    with pytest.raises(SchedulingError, match="expected a producer"):
        compute_root(fused, 5)
