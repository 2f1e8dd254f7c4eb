"""divide_dim: split a constant dimension into (n / f, f)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def foo(n: size, x: f32[n, 8], y: f32[n, 8]):
    for i in seq(0, n):
        t: f32[8, 2]
        for j in seq(0, 8):
            t[j, 1] = x[i, j] * 2.0
        for jo in seq(0, 2):
            for ji in seq(0, 4):
                y[i, 4 * jo + ji] = t[4 * jo + ji, 1]


@proc
def sliced(x: f32[8]):
    t: f32[8]
    for j in seq(0, 8):
        t[j] = x[j]
    w = t[0:4]
    x[0] = w[1]


def test_divide_prints_and_equiv(equiv, assert_roundtrip):
    p = foo.divide_dim("t", 0, 4)
    assert str(p) == """\
def foo(n: size, x: f32[n, 8] @ DRAM, y: f32[n, 8] @ DRAM):
    for i in seq(0, n):
        t: f32[2, 4, 2] @ DRAM
        for j in seq(0, 8):
            t[j / 4, j % 4, 1] = x[i, j] * 2.0
        for jo in seq(0, 2):
            for ji in seq(0, 4):
                y[i, 4 * jo + ji] = t[jo, ji, 1]"""
    assert_roundtrip(p)
    equiv(foo, p, [{"n": 1}, {"n": 2}])


def test_divide_rejections():
    with pytest.raises(SchedulingError, match="does not divide"):
        foo.divide_dim("t", 0, 3)
    with pytest.raises(SchedulingError, match="slice") as e:
        sliced.divide_dim("t", 0, 2)
    assert "w = t[0:4]" in str(e.value)
    with pytest.raises(SchedulingError, match="dimension index"):
        foo.divide_dim("t", 2, 2)
