"""cut_loop: Exo's spelling of partition_loop (same result, same checks)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def scale(n: size, x: f32[n]):
    assert n >= 4
    for i in seq(0, n):
        x[i] = x[i] * 2.0


@proc
def scale_any(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 2.0


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = scale.cut_loop("i", "n - 3")
    assert str(p) == """\
def scale(n: size, x: f32[n] @ DRAM):
    assert n >= 4
    for i in seq(0, n - 3):
        x[i] = x[i] * 2.0
    for i in seq(n - 3, n):
        x[i] = x[i] * 2.0"""
    assert str(p) == str(scale.partition_loop("i", "n - 3"))
    assert_roundtrip(p)
    equiv(scale, p, [{"n": 4}, {"n": 9}])


def test_reject_cut_outside_range():
    with pytest.raises(SchedulingError, match="may lie outside the loop"):
        scale_any.cut_loop("i", 2)  # n may be 1
    with pytest.raises(SchedulingError, match="cut"):
        scale.cut_loop("i", 1.5)
