"""parallelize: seq -> par when iterations are race-free."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.operators import is_parallel


@proc
def dbl(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0


@proc
def rows(n: size, m: size, A: f32[n, m], r: f32[n]):
    for i in seq(0, n):
        r[i] = 0.0
        for j in seq(0, m):
            r[i] += A[i, j]


@proc
def total(n: size, x: f32[n], s: f32):
    for i in seq(0, n):
        s += x[i]


@proc
def shift(n: size, x: f32[n + 1]):
    for i in seq(0, n):
        x[i + 1] = x[i]


@config
class PCfg:
    k: int


@proc
def guarded(n: size, y: f32[n]):
    for i in seq(0, n):
        if PCfg.k == i:
            y[i] = 1.0
            PCfg.k = i + 1


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = dbl.parallelize("i")
    assert str(p) == """\
def dbl(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in par(0, n):
        y[i] = x[i] * 2.0"""
    assert_roundtrip(p)
    equiv(dbl, p, [{"n": 1}, {"n": 6}])
    q = rows.parallelize("i")
    equiv(rows, q, [{"n": 3, "m": 2}])


def test_reject_reduction_across_iterations():
    with pytest.raises(SchedulingError) as e:
        total.parallelize("i")
    assert "race-free" in str(e.value) and "total" in str(e.value)


def test_reject_neighbour_write():
    with pytest.raises(SchedulingError, match="race-free"):
        shift.parallelize("i")


@proc
def shift_back(n: size, x: f32[n + 1]):
    for i in seq(0, n):
        x[i] = x[i + 1]


@proc
def write_late_read_early(n: size, x: f32[2 * n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i]
        x[n + i] = 0.0


@proc
def disjoint_halves(n: size, x: f32[2 * n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[2 * i]
        x[2 * i + 1] = y[i]


def test_races_in_either_direction_are_found(equiv):
    """One iteration's write meets a later iteration's access (shift: i
    writes x[i + 1], which i + 1 reads) or an earlier one's (shift_back:
    i writes x[i], which i - 1 read); the check looks at both orders of
    two iterations at once (i != i'), so each is refused."""
    for p in (shift, shift_back):
        with pytest.raises(SchedulingError, match="race"):
            p.parallelize("i")
    # i writes x[n + i] that no iteration reads (reads are x[0:n]): fine
    q = write_late_read_early.parallelize("i")
    equiv(write_late_read_early, q, [{"n": 4}])
    r = disjoint_halves.parallelize("i")
    equiv(disjoint_halves, r, [{"n": 3}])


def test_reject_config_in_guard():
    with pytest.raises(SchedulingError, match="race-free"):
        guarded.parallelize("i")


def test_inner_reduction_loop_not_parallel():
    with pytest.raises(SchedulingError, match="race-free"):
        rows.parallelize("j")


@proc
def private_tmp(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i] * 2.0
        y[i] = t + t


def test_per_iteration_buffer_is_private(equiv):
    p = private_tmp.parallelize("i")
    assert "for i in par(0, n):" in str(p)
    equiv(private_tmp, p, [{"n": 5}])


@proc
def bump(m: size, n: size, x: f32[m, n], y: f32[m, n]):
    for r in seq(0, m):
        for i in seq(0, n):
            y[r, i] += x[r, i] + 1.0


def test_prints_parses_and_switches_kind(assert_roundtrip, equiv):
    p = bump.parallelize('i', dynamic=True)
    assert str(p) == """\
def bump(m: size, n: size, x: f32[m, n] @ DRAM, y: f32[m, n] @ DRAM):
    for r in seq(0, m):
        for i in par_dynamic(0, n):
            y[r, i] += x[r, i] + 1.0"""
    assert_roundtrip(p)
    assert is_parallel(IR.ParDynamic)
    equiv(bump, p, [{"m": 2, "n": 5}])
    # a par loop changes kind both ways; the same kind is a no-op
    q = bump.parallelize('i')
    assert "for i in par(0, n):" in str(q)
    assert str(q.parallelize('i', dynamic=True)) == str(p)
    assert str(p.parallelize('i')) == str(q)
    assert str(p.parallelize('i', dynamic=True)) == str(p)


def test_rejects_races_and_bad_option():
    with pytest.raises(SchedulingError, match="race-free"):
        total.parallelize('i', dynamic=True)
    with pytest.raises(SchedulingError, match="True or False"):
        bump.parallelize('i', dynamic='yes')
