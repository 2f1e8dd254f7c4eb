"""reorder_stmts(s1, s2): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def indep(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0
        z[i] = x[i] + 1.0


def test_reorder_stmts_prints(equiv):
    q = indep.reorder_stmts("y[_] = _")
    assert str(q).rstrip() == """\
def indep(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM, z: f32[n] @ DRAM):
    for i in seq(0, n):
        z[i] = x[i] + 1.0
        y[i] = x[i] * 2.0"""
    q2 = indep.reorder_stmts("y[_] = _", "z[_] = _")
    assert str(q2) == str(q)
    equiv(indep, q, [{"n": 1}, {"n": 4}])


def test_reorder_stmts_reductions_commute(equiv):
    @proc
    def two_red(n: size, x: f32[n], s: f32[1]):
        for i in seq(0, n):
            s[0] += x[i]
            s[0] += 2.0 * x[i]
    q = two_red.reorder_stmts("s[_] += x[_]")
    equiv(two_red, q, [{"n": 3}])


def test_reorder_stmts_rejects_write_read_conflict():
    @proc
    def dep(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            x[i] = 1.0
            y[i] = x[i]
    with pytest.raises(SchedulingError, match="do not commute"):
        dep.reorder_stmts("x[_] = _")


def test_reorder_stmts_rejects_reduce_read_conflict():
    @proc
    def dep(n: size, x: f32[n], s: f32[1], y: f32[n]):
        for i in seq(0, n):
            s[0] += x[i]
            y[i] = s[0]
    with pytest.raises(SchedulingError, match="do not commute"):
        dep.reorder_stmts("s[_] += _")


def test_reorder_stmts_rejects_config_conflict():
    @config
    class Cfg:
        k: size

    @proc
    def cfg(n: size, x: f32[n]):
        Cfg.k = 2
        if Cfg.k == 2:
            x[0] = 1.0
    with pytest.raises(SchedulingError, match="do not commute"):
        cfg.reorder_stmts("Cfg.k = _")


def test_reorder_stmts_rejects_use_of_allocation():
    @proc
    def alloc_use(n: size, x: f32[n]):
        t: f32
        t = x[0]
        x[0] = t
    with pytest.raises(SchedulingError, match="uses 't'"):
        alloc_use.reorder_stmts("t : _")


def test_reorder_stmts_rejects_non_adjacent_and_last():
    with pytest.raises(SchedulingError, match="directly follow"):
        indep.reorder_stmts("z[_] = _", "y[_] = _")
    with pytest.raises(SchedulingError, match="no statement after"):
        indep.reorder_stmts("z[_] = _")


@proc
def twice(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0
        x[i] = 0.0
    for i in seq(0, n):
        y[i] = x[i] * 3.0
        z[i] = x[i] + 1.0


def test_reorder_stmts_named_pair_is_the_first_adjacent_one(equiv):
    # the first 'y[_] = _' is followed by a write to x, not by 'z[_] = _'
    p = twice.reorder_stmts("y[_] = _", "z[_] = _")
    assert str(p).splitlines()[-2:] == ["        z[i] = x[i] + 1.0",
                                        "        y[i] = x[i] * 3.0"]
    equiv(twice, p, [{"n": 3}])
