"""unroll_and_jam: split perfect, reorder (checked), unroll."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import unroll_and_jam


@proc
def mv(M: size, N: size, A: f32[M, N], x: f32[N], y: f32[M]):
    assert M % 2 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            y[i] += A[i, j] * x[j]


def test_unroll_and_jam_prints_and_agrees(equiv, same_text):
    p = unroll_and_jam(mv, 'i', 2)
    same_text(p, """
def mv(M: size, N: size, A: f32[M, N] @ DRAM, x: f32[N] @ DRAM,
       y: f32[M] @ DRAM):
    assert M % 2 == 0
    for io in seq(0, M / 2):
        for j in seq(0, N):
            y[2 * io] += A[2 * io, j] * x[j]
            y[2 * io + 1] += A[2 * io + 1, j] * x[j]""")
    equiv(mv, p, [{"M": 2, "N": 3}, {"M": 6, "N": 5}])


def test_unroll_and_jam_needs_divisibility():
    with pytest.raises(SchedulingError):
        unroll_and_jam(mv, 'i', 4)


@proc
def carried(M: size, N: size, a: f32[M + 1, N + 1]):
    assert M % 2 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            a[i + 1, j] = a[i, j + 1]


def test_unroll_and_jam_rejects_a_carried_dependence():
    with pytest.raises(SchedulingError):
        unroll_and_jam(carried, 'i', 2)


def test_unroll_and_jam_needs_a_directly_nested_loop():
    with pytest.raises(SchedulingError, match="exactly one loop"):
        unroll_and_jam(mv, 'j', 2)


@proc
def twice(M: size, N: size, A: f32[M, N], y: f32[M], z: f32[M]):
    assert M % 2 == 0
    for ii in seq(0, M):
        y[ii] = 0.0
    for i in seq(0, M):
        for j in seq(0, N):
            y[i] += A[i, j]
    for i in seq(0, M):
        for j in seq(0, N):
            z[i] += A[i, j]


def test_unroll_and_jam_transforms_the_loop_it_is_given(equiv):
    # the second loop named i (by cursor) is the one unrolled and jammed,
    # and the unrolled loop is not confused with the other loop named ii
    p = unroll_and_jam(twice, twice.find_loop('i #1'), 2)
    text = str(p)
    assert "y[i] += A[i, j]" in text and "for ii in seq(0, M):" in text
    assert "z[2 * io + 1] += A[2 * io + 1, j]" in text
    equiv(twice, p, [{"M": 2, "N": 3}, {"M": 4, "N": 1}])
    q = unroll_and_jam(twice, 'i', 2)
    assert "y[2 * io + 1] += A[2 * io + 1, j]" in str(q)
    assert "z[i] += A[i, j]" in str(q)
    equiv(twice, q, [{"M": 2, "N": 3}])


def test_unroll_and_jam_rejects_a_loop_that_is_no_cursor_or_pattern():
    for bad in (5, None):
        with pytest.raises(SchedulingError, match="expected a loop"):
            unroll_and_jam(mv, bad, 2)
