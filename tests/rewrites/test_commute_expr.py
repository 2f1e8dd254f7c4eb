"""commute_expr(expr) and merge_writes(block): printed result, semantics,
rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, i8, proc, seq, size


@proc
def axpb(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if i < 2 or i == n - 1:
            y[i] = x[i] * 2.0 + y[i]


def test_commute_expr(equiv):
    c = axpb.find("x[_] * 2.0")
    q = axpb.commute_expr(c).commute_expr(c.parent())
    q = q.commute_expr("_ or _").commute_expr("i == _")
    assert str(q).rstrip() == """\
def axpb(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        if n - 1 == i or i < 2:
            y[i] = y[i] + 2.0 * x[i]"""
    equiv(axpb, q, [{"n": 1}, {"n": 5}])


def test_commute_expr_rejects_non_commutative():
    with pytest.raises(SchedulingError, match="'<' .* is not commutative"):
        axpb.commute_expr("i < 2")
    with pytest.raises(SchedulingError, match="'-' .* is not commutative"):
        axpb.commute_expr("n - 1")
    with pytest.raises(SchedulingError, match="not a binary operation"):
        axpb.commute_expr("x[_]")


@proc
def writes(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0
        y[i] += x[i]
        z[i] += x[i]
        z[i] += 1.0
        z[i] = 3.0 * y[i]


def test_merge_writes(equiv):
    q = writes.merge_writes(("y[_] = _", "y[_] += _"))
    q = q.merge_writes(("z[_] += x[_]", "z[_] += 1.0"))
    assert str(q).rstrip() == """\
def writes(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM, z: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] = x[i] * 2.0 + x[i]
        z[i] += x[i] + 1.0
        z[i] = 3.0 * y[i]"""
    equiv(writes, q, [{"n": 1}, {"n": 4}])
    # a write made dead by the next one
    r = q.merge_writes(q.find("z[_] += _").expand(0, 1))
    assert str(r).splitlines()[-1] == "        z[i] = 3.0 * y[i]"
    assert "+=" not in str(r)
    equiv(writes, r, [{"n": 3}])


def test_merge_writes_rejects_second_reading_the_first():
    @proc
    def dep(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            y[i] = x[i]
            y[i] += y[i]
    with pytest.raises(SchedulingError, match="may read the location"):
        dep.merge_writes(("y[_] = _", "y[_] += _"))

    @proc
    def live(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            y[i] = x[i]
            y[i] = y[i] * 2.0
    with pytest.raises(SchedulingError, match="first write is not dead"):
        live.merge_writes(("y[_] = _", "y[_] = _ #1"))


def test_merge_writes_rejects_different_locations():
    @proc
    def two(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n - 1):
            y[i] = x[i]
            y[i + 1] += x[i]
    with pytest.raises(SchedulingError, match="same location"):
        two.merge_writes(("y[_] = _", "y[_] += _"))
    with pytest.raises(SchedulingError, match="different buffers"):
        writes.merge_writes(("y[_] += _", "z[_] += _"))


def test_merge_writes_rejects_rounding_change():
    @proc
    def narrow(n: size, x: f32[n], y: i8[n]):
        for i in seq(0, n):
            y[i] = x[i]
            y[i] += 1.0
    with pytest.raises(SchedulingError, match="round differently"):
        narrow.merge_writes(("y[_] = _", "y[_] += _"))
