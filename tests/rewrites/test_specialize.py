"""specialize(block, conds): if c1: s elif c2: s ... else: s."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def scale(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 2.0


@proc
def with_tmp(n: size, x: f32[n]):
    t: f32
    t = 3.0
    for i in seq(0, n):
        x[i] = x[i] + t


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = scale.specialize("i", ["n == 4", "n < 3"])
    assert str(p) == """\
def scale(n: size, x: f32[n] @ DRAM):
    if n == 4:
        for i in seq(0, n):
            x[i] = x[i] * 2.0
    elif n < 3:
        for i in seq(0, n):
            x[i] = x[i] * 2.0
    else:
        for i in seq(0, n):
            x[i] = x[i] * 2.0"""
    assert_roundtrip(p)
    equiv(scale, p, [{"n": 1}, {"n": 4}, {"n": 6}])
    # each branch can now be scheduled on its own
    q = p.unroll_loop("i", 2)
    equiv(scale, q, [{"n": 4}, {"n": 5}])


def test_block_and_single_condition(equiv):
    p = with_tmp.specialize(("t = _", "i"), "n > 2")
    assert str(p).count("t = 3.0") == 2
    equiv(with_tmp, p, [{"n": 1}, {"n": 5}])


def test_reject_binding_used_after_block():
    with pytest.raises(SchedulingError, match="out of scope"):
        with_tmp.specialize("t : _", ["n > 2"])


@pytest.mark.parametrize("cond", ["x[0] > 1.0", "k == 1", "n +", "n + 1"])
def test_reject_bad_condition(cond):
    with pytest.raises(SchedulingError, match="condition"):
        scale.specialize("i", [cond])


def test_reject_empty_conds():
    with pytest.raises(SchedulingError, match="conds"):
        scale.specialize("i", [])
