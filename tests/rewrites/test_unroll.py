"""unroll: printed copies, equivalence, fresh symbols, rejected bounds."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.traversal import walk_stmts


@proc
def small(x: f32[3], y: f32[3]):
    for i in seq(0, 3):
        y[i] = x[i] * 2.0


@proc
def with_alloc(n: size, x: f32[n, 2], y: f32[n, 2]):
    for i in seq(0, n):
        for j in seq(0, 2):
            t: f32
            t = x[i, j]
            for k in seq(0, 2):
                y[i, j] += t
        for j in seq(0, 0):
            y[i, 0] = 0.0


@proc
def sized(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0


def test_prints():
    assert str(small.unroll("i")) == """\
def small(x: f32[3] @ DRAM, y: f32[3] @ DRAM):
    y[0] = x[0] * 2.0
    y[1] = x[1] * 2.0
    y[2] = x[2] * 2.0"""


def test_fresh_symbols_and_equiv(equiv, assert_roundtrip):
    p = with_alloc.unroll("j")
    q = p.unroll("k #1").unroll("k")
    allocs = [s.name for s in walk_stmts(q.ir().body)
              if isinstance(s, IR.Alloc)]
    assert len(allocs) == 2 and allocs[0] is not allocs[1]
    equiv(with_alloc, q, [{"n": 1}, {"n": 3}])
    assert_roundtrip(small.unroll("i"))


def test_zero_trip_becomes_pass(equiv):
    p = with_alloc.unroll("j #1")
    assert "pass" in str(p)
    equiv(with_alloc, p, [{"n": 2}])


def test_reject_non_constant():
    with pytest.raises(SchedulingError) as e:
        sized.unroll("i")
    assert "not constant" in str(e.value) and "sized" in str(e.value)
