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
