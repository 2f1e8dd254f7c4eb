"""unroll_buffer: one buffer per constant index of a dimension."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def bar(x: f32[4], y: f32[4]):
    t: f32[2, 3]
    t[0, 1] = x[0]
    t[1, 1] = x[1]
    for j in seq(0, 3):
        t[1, j] = x[j] + 1.0
    y[0] = t[0, 1] + t[1, 2]


@proc
def dyn(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32[2]
        t[0] = x[i]
        t[1] = x[i] * 2.0
        y[i] = t[0] + t[1]


def test_unroll_buffer_prints_and_equiv(equiv, assert_roundtrip):
    p = bar.unroll_buffer("t", 0)
    assert str(p) == """\
def bar(x: f32[4] @ DRAM, y: f32[4] @ DRAM):
    t_0: f32[3] @ DRAM
    t_1: f32[3] @ DRAM
    t_0[1] = x[0]
    t_1[1] = x[1]
    for j in seq(0, 3):
        t_1[j] = x[j] + 1.0
    y[0] = t_0[1] + t_1[2]"""
    assert_roundtrip(p)
    equiv(bar, p, [{}])
    q = dyn.unroll_buffer("t", 0)
    assert "t_0: f32 @ DRAM" in str(q) and "y[i] = t_0 + t_1" in str(q)
    equiv(dyn, q, [{"n": 1}, {"n": 3}])


def test_unroll_buffer_needs_constant_index():
    with pytest.raises(SchedulingError, match="not a constant") as e:
        bar.unroll_buffer("t", 1)
    assert "t[1, j] = x[j] + 1.0" in str(e.value)
    with pytest.raises(SchedulingError, match="allocation"):
        bar.unroll_buffer("x", 0)
