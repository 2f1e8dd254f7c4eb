"""partition_loop: cut is an iteration count of the first loop."""
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


def test_offset_from_lo(equiv):
    p = ten.partition_loop("i", 3)
    assert "for i in seq(2, 5):" in str(p) and "for i in seq(5, 12):" in str(p)
    equiv(ten, p, [{}])
    q = ten.partition_loop("i", 10)  # first loop takes all 10 iterations
    equiv(ten, q, [{}])


def test_reject_cut_past_bound():
    with pytest.raises(SchedulingError) as e:
        scale_any.partition_loop("i", 2)  # n may be 1
    msg = str(e.value)
    assert "may exceed" in msg and "scale_any" in msg
    with pytest.raises(SchedulingError, match="may exceed"):
        scale.partition_loop("i", 5)
    with pytest.raises(SchedulingError, match="may exceed"):
        ten.partition_loop("i", 11)


@pytest.mark.parametrize("cut", [-1, 1.5, "2", True])
def test_reject_bad_cut(cut):
    with pytest.raises(SchedulingError, match="cut"):
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
