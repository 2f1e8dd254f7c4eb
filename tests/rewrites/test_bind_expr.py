"""bind_expr: name a data expression; cse stops at writes to what it reads."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def foo(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0 + x[i] * 2.0
        z[i] = x[i] * 2.0
        for j in seq(0, 2):
            y[i] += x[i] * 2.0
        x[i] = 3.0
        z[i] += x[i] * 2.0


def test_bind_prints_and_equiv(equiv, assert_roundtrip):
    p = foo.bind_expr("x[i] * 2.0", "t")
    assert str(p) == """\
def foo(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM, z: f32[n] @ DRAM):
    for i in seq(0, n):
        t: f32 @ DRAM
        t = x[i] * 2.0
        y[i] = t + t
        z[i] = x[i] * 2.0
        for j in seq(0, 2):
            y[i] += x[i] * 2.0
        x[i] = 3.0
        z[i] += x[i] * 2.0"""
    assert_roundtrip(p)
    equiv(foo, p, [{"n": 1}, {"n": 4}])


def test_cse_stops_at_write(equiv):
    p = foo.bind_expr("x[i] * 2.0", "t", cse=True)
    body = str(p).splitlines()
    assert body[4:] == """\
        y[i] = t + t
        z[i] = t
        for j in seq(0, 2):
            y[i] += t
        x[i] = 3.0
        z[i] += x[i] * 2.0""".splitlines()
    equiv(foo, p, [{"n": 1}, {"n": 4}])


@proc
def alias(n: size, x: f32[n, 4], y: f32[4]):
    w = x[0, 0:4]
    y[0] = x[0, 1] + 1.0
    w[1] = 5.0
    y[2] = x[0, 1] + 1.0


def test_cse_sees_writes_through_windows(equiv):
    p = alias.bind_expr("x[0, 1] + 1.0", "t", cse=True)
    assert str(p).splitlines()[-1] == "    y[2] = x[0, 1] + 1.0"
    equiv(alias, p, [{"n": 2}])


@proc
def ctl(n: size, x: f32[n], s: f32):
    for i in seq(0, n):
        x[i] = x[i] + s


@proc
def callee(s: f32):
    s = s + 1.0


@proc
def caller(s: f32, y: f32[2]):
    callee(s)
    y[0] = s


def test_bind_rejections():
    with pytest.raises(SchedulingError, match="control"):
        foo.bind_expr("i", "t")
    with pytest.raises(SchedulingError, match="reference"):
        caller.bind_expr(caller.find("callee(_)").args()[0], "t")
    with pytest.raises(SchedulingError, match="already in use"):
        foo.bind_expr("x[i] * 2.0", "z")
