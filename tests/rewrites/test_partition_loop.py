"""partition_loop: cut is the absolute index where the second loop starts
(docs/api.md §3: seq(lo, hi) -> seq(lo, cut); seq(cut, hi))."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def scale(n: size, x: f32[n]):
    assert n >= 4
    for i in seq(0, n):
        x[i] = x[i] * 2.0


@proc
def scale_any(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 2.0


@proc
def ten(x: f32[12]):
    for i in seq(2, 12):
        x[i] = x[i - 2] + 1.0


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = scale.partition_loop("i", 4)
    assert str(p) == """\
def scale(n: size, x: f32[n] @ DRAM):
    assert n >= 4
    for i in seq(0, 4):
        x[i] = x[i] * 2.0
    for i in seq(4, n):
        x[i] = x[i] * 2.0"""
    assert_roundtrip(p)
    equiv(scale, p, [{"n": 4}, {"n": 7}])


def test_absolute_cut_with_nonzero_lo(equiv):
    p = ten.partition_loop("i", 5)
    assert "for i in seq(2, 5):" in str(p) and "for i in seq(5, 12):" in str(p)
    equiv(ten, p, [{}])
    q = ten.partition_loop("i", 12)  # first loop takes all 10 iterations
    equiv(ten, q, [{}])


def test_symbolic_cut(equiv):
    p = scale.partition_loop("i", "n - 4")
    assert "for i in seq(0, n - 4):" in str(p)
    assert "for i in seq(n - 4, n):" in str(p)
    equiv(scale, p, [{"n": 4}, {"n": 9}])


def test_reject_cut_past_bound():
    with pytest.raises(SchedulingError) as e:
        scale_any.partition_loop("i", 2)  # n may be 1
    msg = str(e.value)
    assert "may lie outside the loop range" in msg and "scale_any" in msg
    assert "cannot prove 2 <= n" in msg
    with pytest.raises(SchedulingError, match="may lie outside"):
        scale.partition_loop("i", 5)
    with pytest.raises(SchedulingError, match="cannot prove 13 <= 12"):
        ten.partition_loop("i", 13)
    # a cut below lo would make the second loop run extra iterations
    with pytest.raises(SchedulingError, match="cannot prove 2 <= 1"):
        ten.partition_loop("i", 1)


@pytest.mark.parametrize("cut", [-1, 1.5, "x[0]", True, "i +"])
def test_reject_bad_cut(cut):
    with pytest.raises(SchedulingError, match="cut|cannot parse 'i \\+'"):
        scale.partition_loop("i", cut)


@config
class PCfg2:
    n: size


@proc
def cfg_bound(x: f32[4]):
    assert PCfg2.n >= 2
    for i in seq(0, PCfg2.n):
        x[0] = x[0] + 1.0
        PCfg2.n = 1


def test_reject_bounds_read_config_body_writes():
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg_bound.partition_loop("i", 1)
