"""unroll_loop(loop, factor): partial unrolling, with a remainder loop
unless the factor provably divides the trip count."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def prefix(n: size, x: f32[n + 1]):
    for i in seq(0, n):
        x[i + 1] += x[i]


@proc
def even(n: size, x: f32[n]):
    assert n % 2 == 0
    for i in seq(0, n):
        x[i] = x[i] * 2.0


@proc
def shifted(lo: size, hi: size, x: f32[16]):
    assert hi <= 16
    for i in seq(lo, hi):
        x[i] = x[i] + 1.0


@proc
def shifted_ok(lo: size, hi: size, x: f32[16]):
    assert lo <= hi and hi <= 16
    for i in seq(lo, hi):
        x[i] = x[i] + 1.0


def test_remainder_loop_prints_and_equiv(equiv, assert_roundtrip):
    p = prefix.unroll_loop("i", 3)
    assert str(p) == """\
def prefix(n: size, x: f32[n + 1] @ DRAM):
    for i in seq(0, n / 3):
        x[3 * i + 1] += x[3 * i]
        x[3 * i + 2] += x[3 * i + 1]
        x[3 * i + 3] += x[3 * i + 2]
    for i_u in seq(0, n % 3):
        x[i_u + 3 * (n / 3) + 1] += x[i_u + 3 * (n / 3)]"""
    assert_roundtrip(p)
    # the loop-carried dependence is kept: same iterations, same order
    equiv(prefix, p, [{"n": 1}, {"n": 3}, {"n": 7}, {"n": 8}])


def test_divisible_has_no_remainder(equiv):
    p = even.unroll_loop("i", 2)
    assert str(p).count("for ") == 1
    assert "x[2 * i + 1] = x[2 * i + 1] * 2.0" in str(p)
    equiv(even, p, [{"n": 2}, {"n": 6}])


def test_nonzero_lo(equiv):
    p = shifted_ok.unroll_loop("i", 4)
    equiv(shifted_ok, p, [{"lo": 1, "hi": 16}, {"lo": 3, "hi": 14},
                       {"lo": 5, "hi": 5}])


def test_reject_possibly_negative_trip_count():
    # lo > hi is allowed by the preconditions: a remainder loop computed
    # from a negative trip count would run iterations the loop does not
    with pytest.raises(SchedulingError, match="unroll_loop: cannot prove lo <= hi"):
        shifted.unroll_loop("i", 4)


@pytest.mark.parametrize("factor", [0, -2, 1.5, True])
def test_reject_bad_factor(factor):
    with pytest.raises(SchedulingError, match="factor"):
        prefix.unroll_loop("i", factor)


@config
class UCfg:
    n: size


@proc
def cfg_bound(x: f32[8]):
    UCfg.n = 5
    for i in seq(0, UCfg.n):
        x[i] = x[i] + 1.0
        UCfg.n = 3


def test_reject_bounds_read_state_the_body_writes():
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg_bound.unroll_loop("i", 2)
