"""rearrange_dim: permute an allocation's dimensions (Exo's name)."""
from __future__ import annotations

import pytest

from exo_hl import DRAM, SchedulingError, f32, proc, seq, size, stride
from exo_hl.hw_libs.avx2 import AVX2


@proc
def tiles(n: size, x: f32[n, 4, 3], y: f32[n, 4, 3]):
    for i in seq(0, n):
        t: f32[2, 4, 3] @ DRAM
        for j in seq(0, 4):
            for k in seq(0, 3):
                t[0, j, k] = x[i, j, k]
                t[1, j, k] = 2.0 * x[i, j, k]
        for j in seq(0, 4):
            for k in seq(0, 3):
                y[i, j, k] = t[0, j, k] + t[1, 3 - j, k]


SIZES = [{"n": 1}, {"n": 3}]


def test_permutes_shape_and_every_access(equiv):
    p = tiles.rearrange_dim('t : _', [2, 0, 1])
    assert str(p) == """\
def tiles(n: size, x: f32[n, 4, 3] @ DRAM, y: f32[n, 4, 3] @ DRAM):
    for i in seq(0, n):
        t: f32[3, 2, 4] @ DRAM
        for j in seq(0, 4):
            for k in seq(0, 3):
                t[k, 0, j] = x[i, j, k]
                t[k, 1, j] = 2.0 * x[i, j, k]
        for j in seq(0, 4):
            for k in seq(0, 3):
                y[i, j, k] = t[k, 0, j] + t[k, 1, 3 - j]"""
    equiv(tiles, p, SIZES)
    # the identity permutation changes nothing; a permutation and its
    # inverse give the original back
    assert str(tiles.rearrange_dim('t', [0, 1, 2])) == str(tiles)
    assert str(p.rearrange_dim('t', [1, 2, 0])) == str(tiles)


@pytest.mark.parametrize("bad", [[0, 0, 1], [0, 1], [0, 1, 2, 3], [1, 2, 3],
                                 "210", [0, 1, 2.0], [True, 0, 2]])
def test_rejects_a_vector_that_is_not_a_permutation(bad):
    with pytest.raises(SchedulingError, match="not a permutation"):
        tiles.rearrange_dim('t', bad)


def test_rejects_an_argument():
    with pytest.raises(SchedulingError, match="argument"):
        tiles.rearrange_dim('x', [0, 2, 1])


@proc
def takes_whole(t: f32[4, 8]):
    for i in seq(0, 4):
        for j in seq(0, 8):
            t[i, j] = 1.0


@proc
def takes_row(r: [f32][8]):
    for j in seq(0, 8):
        r[j] = 1.0


@proc
def takes_block(r: [f32][2, 8]):
    for i in seq(0, 2):
        for j in seq(0, 8):
            r[i, j] = 1.0


@proc
def calls(y: f32[4, 8]):
    t: f32[4, 8] @ DRAM
    takes_whole(t)
    for i in seq(0, 4):
        for j in seq(0, 8):
            y[i, j] = t[i, j]


@proc
def calls_windows(y: f32[4, 8]):
    t: f32[4, 8] @ DRAM
    for i in seq(0, 4):
        takes_row(t[i, 0:8])
    takes_block(t[0:2, 0:8])
    takes_block(t[2:4, 0:8])
    for i in seq(0, 4):
        for j in seq(0, 8):
            y[i, j] = t[i, j]


@proc
def calls_row_windows(y: f32[4, 8]):
    t: f32[4, 8] @ DRAM
    for i in seq(0, 4):
        takes_row(t[i, 0:8])
    for i in seq(0, 4):
        for j in seq(0, 8):
            y[i, j] = t[i, j]


def test_rejects_the_buffer_passed_whole():
    with pytest.raises(SchedulingError, match="passed whole"):
        calls.rearrange_dim('t', [1, 0])


def test_rejects_a_window_it_would_transpose():
    with pytest.raises(SchedulingError, match="order"):
        calls_windows.rearrange_dim('t', [1, 0])


def test_a_window_keeping_its_shape_is_re_indexed(equiv):
    p = calls_row_windows.rearrange_dim('t', [1, 0])
    assert "takes_row(t[0:8, i])" in str(p)
    assert "y[i, j] = t[j, i]" in str(p)
    equiv(calls_row_windows, p, [{}])


@proc
def unit_stride(r: [f32][8]):
    assert stride(r, 0) == 1
    for j in seq(0, 8):
        r[j] = 1.0


@proc
def calls_unit_stride(y: f32[4, 8]):
    t: f32[4, 8] @ DRAM
    for i in seq(0, 4):
        unit_stride(t[i, 0:8])
    for i in seq(0, 4):
        for j in seq(0, 8):
            y[i, j] = t[i, j]


def test_rejects_a_callee_whose_stride_precondition_breaks():
    with pytest.raises(SchedulingError, match="stride"):
        calls_unit_stride.rearrange_dim('t', [1, 0])


@proc
def regs(x: f32[2, 8], y: f32[2, 8]):
    r: f32[2, 8] @ AVX2
    for i in seq(0, 2):
        for j in seq(0, 8):
            r[i, j] = x[i, j]
    for i in seq(0, 2):
        for j in seq(0, 8):
            y[i, j] = r[i, j]


def test_rejects_a_shape_the_memory_cannot_hold():
    with pytest.raises(SchedulingError, match="AVX2 cannot hold"):
        regs.rearrange_dim('r', [1, 0])


def test_every_permutation_is_equivalent(equiv):
    from itertools import permutations
    for perm in permutations(range(3)):
        p = tiles.rearrange_dim('t', list(perm))
        shape = [["2", "4", "3"][k] for k in perm]
        assert f"t: f32[{', '.join(shape)}] @ DRAM" in str(p)
        equiv(tiles, p, SIZES, compiled=perm == (1, 2, 0))
