"""sink_alloc(alloc): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def rows(n: size, x: f32[n, 4], y: f32[n, 4]):
    t: f32[4]
    for i in seq(0, n):
        for j in seq(0, 4):
            t[j] = x[i, j]
        for j in seq(0, 4):
            y[i, j] = t[j] * 2.0


def test_sink_alloc_into_loop(equiv):
    q = rows.sink_alloc("t : _")
    assert str(q).rstrip() == """\
def rows(n: size, x: f32[n, 4] @ DRAM, y: f32[n, 4] @ DRAM):
    for i in seq(0, n):
        t: f32[4] @ DRAM
        for j in seq(0, 4):
            t[j] = x[i, j]
        for j in seq(0, 4):
            y[i, j] = t[j] * 2.0"""
    equiv(rows, q, [{"n": 1}, {"n": 3}])
    # the inverse of lift_alloc
    assert str(q.lift_alloc("t : _")) == str(rows)


def test_sink_alloc_scalar_and_pointwise_defs(equiv):
    @proc
    def pw(n: size, x: f32[n], y: f32[n]):
        s: f32
        t: f32[2]
        for i in seq(0, n):
            s = x[i]
            t[1] = s * 2.0
            t[1] += x[i]
            y[i] = t[1] + s
    q = pw.sink_alloc("t : _").sink_alloc("s : _")
    assert str(q).splitlines()[1:4] == [
        "    for i in seq(0, n):", "        s: f32 @ DRAM",
        "        t: f32[2] @ DRAM"]
    equiv(pw, q, [{"n": 4}])


def test_sink_alloc_into_both_branches(equiv):
    @proc
    def br(n: size, x: f32[n], y: f32[n]):
        u: f32
        if n > 2:
            u = x[0]
            y[0] = u
        else:
            u = x[0] * 2.0
            y[0] = u
    q = br.sink_alloc("u : _")
    assert str(q).rstrip() == """\
def br(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    if n > 2:
        u: f32 @ DRAM
        u = x[0]
        y[0] = u
    else:
        u: f32 @ DRAM
        u = x[0] * 2.0
        y[0] = u"""
    equiv(br, q, [{"n": 1}, {"n": 4}])


def test_sink_alloc_rejects_values_carried_across_iterations():
    @proc
    def carry(n: size, x: f32[n], y: f32[n]):
        acc: f32
        acc = 0.0
        for i in seq(0, n):
            acc += x[i]
            y[i] = acc
    with pytest.raises(SchedulingError, match="directly followed"):
        carry.sink_alloc("acc : _")

    @proc
    def carry2(n: size, x: f32[n], y: f32[n]):
        t: f32[2]
        for i in seq(0, n):
            if i == 0:
                t[0] = 0.0
            t[0] += x[i]
            y[i] = t[0]
    with pytest.raises(SchedulingError, match="earlier iteration"):
        carry2.sink_alloc("t : _")

    @proc
    def shifted(n: size, x: f32[n], y: f32[n]):
        t: f32[2]
        for i in seq(0, n):
            t[i % 2] = x[i]
            y[i] = t[(i + 1) % 2]   # the previous iteration's value
    with pytest.raises(SchedulingError, match="earlier iteration"):
        shifted.sink_alloc("t : _")


def test_sink_alloc_rejects_use_after_scope():
    @proc
    def after(n: size, x: f32[n], y: f32[n]):
        t: f32
        if n > 1:
            t = x[1]
        else:
            t = 1.0
        y[0] = t
    with pytest.raises(SchedulingError, match="used after the if"):
        after.sink_alloc("t : _")


def test_sink_alloc_rejects_non_alloc():
    with pytest.raises(SchedulingError, match="expected an allocation"):
        rows.sink_alloc("y[_] = _")
