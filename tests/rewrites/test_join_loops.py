"""join_loops(l1, l2): seq(a, b) then seq(b, c) with equal bodies ->
seq(a, c), when a <= b <= c is proven."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, par, proc, seq, size


@proc
def two(n: size, x: f32[n + 1]):
    assert n >= 4
    for i in seq(0, 4):
        x[i + 1] += x[i] * 2.0
    for j in seq(4, n):
        x[j + 1] += x[j] * 2.0


@proc
def maybe_empty(n: size, x: f32[n + 8]):
    for i in seq(0, n):
        x[i] = x[i] + 1.0
    for i in seq(n, 4):
        x[i] = x[i] + 1.0


@proc
def different(n: size, x: f32[n]):
    assert n >= 4
    for i in seq(0, 4):
        x[i] = x[i] + 1.0
    for i in seq(4, n):
        x[i] = x[i] + 2.0


@proc
def gap(n: size, x: f32[n]):
    assert n >= 5
    for i in seq(0, 4):
        x[i] = x[i] + 1.0
    for i in seq(5, n):
        x[i] = x[i] + 1.0


@proc
def nested(n: size, x: f32[n, 3]):
    assert n >= 2
    for i in seq(0, 2):
        t: f32
        t = 1.0
        for k in seq(0, 3):
            x[i, k] = x[i, k] + t
    for i in seq(2, n):
        u: f32
        u = 1.0
        for m in seq(0, 3):
            x[i, m] = x[i, m] + u


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = two.join_loops("i", "j")
    assert str(p) == """\
def two(n: size, x: f32[n + 1] @ DRAM):
    assert n >= 4
    for i in seq(0, n):
        x[i + 1] += x[i] * 2.0"""
    assert_roundtrip(p)
    equiv(two, p, [{"n": 4}, {"n": 9}])


def test_inverse_of_cut(equiv):
    q = two.join_loops("i", "j").cut_loop("i", 2).join_loops("i", "i #1")
    equiv(two, q, [{"n": 5}])


def test_bodies_equal_up_to_binders(equiv):
    p = nested.join_loops("i", "i #1")
    assert str(p).count("for i") == 1
    equiv(nested, p, [{"n": 2}, {"n": 5}])


def test_reject_different_bodies():
    with pytest.raises(SchedulingError, match="not the same program"):
        different.join_loops("i", "i #1")


def test_reject_bounds_not_adjacent():
    with pytest.raises(SchedulingError, match="cannot prove 4 == 5"):
        gap.join_loops("i", "i #1")


def test_reject_possibly_empty_range():
    # n > 4: the second loop runs nothing, the joined one would run 4..n
    with pytest.raises(SchedulingError, match="cannot prove n <= 4"):
        maybe_empty.join_loops("i", "i #1")


def test_reject_not_adjacent_statements():
    with pytest.raises(SchedulingError, match="directly follow"):
        two.join_loops("j", "i")


@config
class JCfg:
    n: size


@proc
def cfg_join(x: f32[8]):
    JCfg.n = 6
    for i in seq(0, 2):
        x[i] = x[i] + 1.0
        JCfg.n = 4
    for i in seq(2, JCfg.n):
        x[i] = x[i] + 1.0
        JCfg.n = 4


def test_reject_second_bounds_read_state_first_writes():
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg_join.join_loops("i", "i #1")


@proc
def par_halves(x: f32[16], y: f32[16]):
    for i in par(0, 8):
        y[i] = x[i] * 2.0
    for i in par(8, 16):
        y[i] = x[i] * 2.0


@proc
def par_racy(x: f32[20]):
    for i in par(0, 4):
        x[i + 4] = x[i] + 1.0
    for i in par(4, 8):
        x[i + 4] = x[i] + 1.0


def test_par_loops_reproved_race_free(equiv):
    p = par_halves.join_loops("i", "i #1")
    assert "for i in par(0, 16):" in str(p)
    equiv(par_halves, p, [{}])
    with pytest.raises(SchedulingError, match="race-free"):
        par_racy.join_loops("i", "i #1")
