"""mult_loops(outer, inner, name): a perfect nest with constant inner
extent becomes one loop, i = lo + k / w, j = lo' + k % w."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def rows(n: size, x: f32[n, 4], y: f32[4 * n + 1]):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[4 * i + j + 1] = y[4 * i + j] + x[i, j]


@proc
def offset(n: size, x: f32[n + 2, 5]):
    for i in seq(2, n + 2):
        for j in seq(1, 4):
            x[i, j] = x[i, j - 1] * 2.0


@proc
def ragged(n: size, x: f32[n, n]):
    for i in seq(0, n):
        for j in seq(0, i):
            x[i, j] = 1.0


@proc
def symbolic(n: size, m: size, x: f32[n, m]):
    for i in seq(0, n):
        for j in seq(0, m):
            x[i, j] = 1.0


@proc
def not_perfect(n: size, x: f32[n, 4]):
    for i in seq(0, n):
        x[i, 0] = 0.0
        for j in seq(0, 4):
            x[i, j] = 1.0


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = rows.mult_loops("i", "j", "k")
    assert str(p) == """\
def rows(n: size, x: f32[n, 4] @ DRAM, y: f32[4 * n + 1] @ DRAM):
    for k in seq(0, 4 * n):
        y[k + 1] = y[k] + x[k / 4, k % 4]"""
    assert_roundtrip(p)
    # a chain through y: the order of the iterations is kept
    equiv(rows, p, [{"n": 1}, {"n": 3}])


def test_nonzero_lower_bounds(equiv):
    p = offset.mult_loops("i", "j", "ij")
    assert "for ij in seq(0, 3 * n):" in str(p)
    equiv(offset, p, [{"n": 1}, {"n": 4}])


def test_reject_non_constant_extent():
    with pytest.raises(SchedulingError, match="depend on 'i'"):
        ragged.mult_loops("i", "j", "k")
    with pytest.raises(SchedulingError, match="not a positive constant"):
        symbolic.mult_loops("i", "j", "k")


def test_reject_imperfect_nest():
    with pytest.raises(SchedulingError, match="directly nested|perfectly"):
        not_perfect.mult_loops("i", "j", "k")


def test_reject_taken_name():
    with pytest.raises(SchedulingError, match="already used"):
        rows.mult_loops("i", "j", "n")
    with pytest.raises(SchedulingError, match="not a valid"):
        rows.mult_loops("i", "j", "for")


@config
class MCfg:
    k: size


@proc
def cfg_lo(x: f32[16]):
    MCfg.k = 1
    for i in seq(0, 2):
        for j in seq(MCfg.k, MCfg.k + 4):
            x[4 * i + j % 4] = x[4 * i + j % 4] + 1.0
            MCfg.k = 2


def test_reject_lower_bound_read_state_body_writes():
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg_lo.mult_loops("i", "j", "k")
