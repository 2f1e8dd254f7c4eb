"""eliminate_dead_code(stmt): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def dead(n: size, x: f32[n], y: f32[n]):
    assert n >= 4
    for i in seq(0, n):
        if i < n:
            y[i] = x[i]
        else:
            y[i] = 0.0
    if n < 3:
        y[0] = 7.0
    for k in seq(n, 4):
        y[0] = 5.0


def test_eliminate_dead_code(equiv):
    q = dead.eliminate_dead_code("if _: _")
    q = q.eliminate_dead_code("if _: _")
    q = q.eliminate_dead_code("k")
    assert str(q).rstrip() == """\
def dead(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n >= 4
    for i in seq(0, n):
        y[i] = x[i]"""
    equiv(dead, q, [{"n": 4}, {"n": 6}])


def test_eliminate_dead_code_keeps_else_branch(equiv):
    @proc
    def other(n: size, x: f32[n]):
        for i in seq(0, n):
            if i > n:
                x[i] = 1.0
            else:
                x[i] = 2.0
    q = other.eliminate_dead_code("if _: _")
    assert str(q).splitlines()[-1] == "        x[i] = 2.0"
    equiv(other, q, [{"n": 3}])


def test_eliminate_dead_code_rejects_unproven_condition():
    @proc
    def maybe(n: size, x: f32[n]):
        for i in seq(0, n):
            if i < 3:
                x[i] = 1.0
    with pytest.raises(SchedulingError, match="cannot prove the condition"):
        maybe.eliminate_dead_code("if _: _")


def test_eliminate_dead_code_rejects_loop_that_may_run():
    @proc
    def runs(n: size, x: f32[n]):
        for i in seq(2, n):
            x[i] = 1.0
    with pytest.raises(SchedulingError, match="runs zero times"):
        runs.eliminate_dead_code("i")
    with pytest.raises(SchedulingError, match="expected an if or a loop"):
        runs.eliminate_dead_code("x[_] = _")


@proc
def stores(n: size, x: f32[n], y: f32[n]):
    t: f32[n]
    for i in seq(0, n):
        t[i] = x[i] * 2.0
    for i in seq(0, n):
        y[i] = x[i] + 1.0
    t[0] += 1.0


def test_eliminate_dead_stores(equiv):
    # the reduction reads t: the loop's stores are dead only without it
    with pytest.raises(SchedulingError, match="runs zero times"):
        stores.eliminate_dead_code(stores.find_loop('i'))
    q = stores.eliminate_dead_code('t[_] += _')
    q = q.eliminate_dead_code(q.find_loop('i'))
    assert str(q).rstrip() == """\
def stores(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    t: f32[n] @ DRAM
    for i in seq(0, n):
        y[i] = x[i] + 1.0"""
    equiv(stores, q, [{"n": 1}, {"n": 4}])
    assert "t" not in str(q.delete_buffer('t : _')).split("\n", 1)[1]


def test_eliminate_dead_stores_rejects_observed_stores():
    @proc
    def read_later(n: size, x: f32[n], y: f32[n]):
        t: f32[n]
        for i in seq(0, n):
            t[i] = x[i]
        y[0] = t[0]
    with pytest.raises(SchedulingError, match="expected an if or a loop"):
        read_later.eliminate_dead_code('t[_] = _')
    # a loop that runs and stores something read later is not dead
    with pytest.raises(SchedulingError, match="runs zero times"):
        read_later.eliminate_dead_code(read_later.find_loop('i'))

    @proc
    def to_arg(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            y[i] = x[i]
    with pytest.raises(SchedulingError):
        to_arg.eliminate_dead_code('y[_] = _')

    @proc
    def sink(a: [f32][1]):
        a[0] = 1.0

    @proc
    def passed(n: size, y: f32[n]):
        t: f32[2]
        t[0] = 2.0
        sink(t[0:1])
    with pytest.raises(SchedulingError):
        passed.eliminate_dead_code('t[_] = _')

    @proc
    def mixed(n: size, x: f32[n], y: f32[n]):
        t: f32[n]
        for i in seq(0, n):
            t[i] = x[i]
            y[i] = 2.0
    # the loop also writes y: not only dead stores
    with pytest.raises(SchedulingError):
        mixed.eliminate_dead_code(mixed.find_loop('i'))
