"""tile: two splits and a reorder, each checked."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import tile


@proc
def add2d(M: size, N: size, a: f32[M, N], b: f32[M, N], c: f32[M, N]):
    for i in seq(0, M):
        for j in seq(0, N):
            c[i, j] = a[i, j] + b[i, j]


def test_tile_guard_prints_and_agrees(equiv, same_text):
    p = tile(add2d, 'i', 'j', 2, 4)
    same_text(p, """
def add2d(M: size, N: size, a: f32[M, N] @ DRAM, b: f32[M, N] @ DRAM,
          c: f32[M, N] @ DRAM):
    for io in seq(0, (M + 1) / 2):
        for jo in seq(0, (N + 3) / 4):
            for ii in seq(0, 2):
                if 2 * io + ii < M:
                    for ji in seq(0, 4):
                        if 4 * jo + ji < N:
                            c[2 * io + ii, 4 * jo + ji] = (
                                a[2 * io + ii, 4 * jo + ji] +
                                b[2 * io + ii, 4 * jo + ji])""")
    equiv(add2d, p, [{"M": 3, "N": 5}, {"M": 4, "N": 8}, {"M": 1, "N": 1}])


def test_tile_cut_leaves_the_remainders_untiled(equiv, same_text):
    """tail='cut': the column remainder of each row block is split off the
    row loop (fission_after, checked) so the tiles' loops can be reordered;
    it raised SchedulingError for any N before."""
    p = tile(add2d, 'i', 'j', 2, 4, tail='cut')
    same_text(p, """
def add2d(M: size, N: size, a: f32[M, N] @ DRAM, b: f32[M, N] @ DRAM,
          c: f32[M, N] @ DRAM):
    for io in seq(0, M / 2):
        for jo in seq(0, N / 4):
            for ii in seq(0, 2):
                for ji in seq(0, 4):
                    c[2 * io + ii, 4 * jo + ji] = (a[2 * io + ii, 4 * jo + ji] +
                                                   b[2 * io + ii, 4 * jo + ji])
        for ii in seq(0, 2):
            for ji in seq(0, N % 4):
                c[2 * io + ii, ji + 4 * (N / 4)] = (
                    a[2 * io + ii, ji + 4 * (N / 4)] +
                    b[2 * io + ii, ji + 4 * (N / 4)])
    for ii in seq(0, M % 2):
        for j in seq(0, N):
            c[ii + 2 * (M / 2), j] = (a[ii + 2 * (M / 2), j] +
                                      b[ii + 2 * (M / 2), j])""")
    equiv(add2d, p, [{"M": 3, "N": 5}, {"M": 4, "N": 8}, {"M": 1, "N": 1},
                     {"M": 5, "N": 11}])


def test_tile_cut_rejects_an_unsafe_reorder():
    with pytest.raises(SchedulingError):
        tile(shift, 'i', 'j', 2, 2, tail='cut')


def test_tile_perfect_needs_divisibility():
    with pytest.raises(SchedulingError):
        tile(add2d, 'i', 'j', 2, 4, tail='perfect')


@proc
def shift(M: size, N: size, a: f32[M + 1, N + 1]):
    for i in seq(0, M):
        for j in seq(0, N):
            a[i + 1, j] = a[i, j + 1]


def test_tile_rejects_an_unsafe_reorder():
    with pytest.raises(SchedulingError):
        tile(shift, 'i', 'j', 2, 2)
