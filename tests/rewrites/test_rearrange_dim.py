"""rearrange_dim: permute an allocation's dimensions (Exo's name)."""
from __future__ import annotations

import re

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


# strides: a permutation changes the row-major stride of a dimension unless
# the new dimensions after it have the extents the old ones had; a read of
# a changed stride (directly, through a window name, or by a callee given a
# window) is refused, a read of a kept one is re-indexed

@proc
def branch_on_stride(v: [f32][4], o: f32[1]):
    if stride(v, 0) == 1:
        o[0] = v[0]
    else:
        o[0] = v[1]


@proc
def passes_on(v: [f32][4], o: f32[1]):
    branch_on_stride(v, o)


@proc
def stride_direct(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4] @ DRAM
    for i in seq(0, 4):
        for j in seq(0, 4):
            t[i, j] = x[i, j]
    if stride(t, 0) == 4:
        o[0] = t[1, 1]


@proc
def stride_callee(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4] @ DRAM
    for i in seq(0, 4):
        for j in seq(0, 4):
            t[i, j] = x[i, j]
    branch_on_stride(t[1, 0:4], o)


@proc
def stride_nested_callee(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4] @ DRAM
    for i in seq(0, 4):
        for j in seq(0, 4):
            t[i, j] = x[i, j]
    passes_on(t[1, 0:4], o)


@proc
def stride_window_name(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4] @ DRAM
    for i in seq(0, 4):
        for j in seq(0, 4):
            t[i, j] = x[i, j]
    w = t[1, 0:4]
    if stride(w, 0) == 1:
        o[0] = w[2]


@proc
def stride_window_name_callee(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4] @ DRAM
    for i in seq(0, 4):
        for j in seq(0, 4):
            t[i, j] = x[i, j]
    w = t[1, 0:4]
    branch_on_stride(w, o)


def test_rejects_a_stride_read_the_permutation_changes():
    with pytest.raises(SchedulingError, match=r"'stride\(t, 0\)' reads the "
                       r"stride of dimension 0 of 't', which the permutation"
                       r" \[1, 0\] changes") as e:
        stride_direct.rearrange_dim('t', [1, 0])
    assert "if stride(t, 0) == 4:" in str(e.value)
    with pytest.raises(SchedulingError, match=r"'stride\(w, 0\)' reads the "
                       r"stride of dimension 1 of 't'") as e:
        stride_window_name.rearrange_dim('t', [1, 0])
    assert "if stride(w, 0) == 1:" in str(e.value)


@pytest.mark.parametrize("p, arg", [
    (stride_callee, "t[1, 0:4]"), (stride_nested_callee, "t[1, 0:4]"),
    (stride_window_name_callee, "w")],
    ids=["callee", "callee_of_callee", "window_name"])
def test_rejects_a_callee_reading_a_stride_the_permutation_changes(p, arg):
    with pytest.raises(SchedulingError, match=(
            rf"reads strides of its argument '{re.escape(arg)}', a window "
            rf"along dimension 1 of 't', whose stride the permutation "
            rf"\[1, 0\] changes")) as e:
        p.rearrange_dim('t', [1, 0])
    assert f"({arg}, o)" in str(e.value)      # the call, as it reads


@proc
def branch_on_stride8(v: [f32][8], o: [f32][1]):
    if stride(v, 0) == 1:
        o[0] = v[0]
    else:
        o[0] = v[1]


@proc
def kept_strides(x: f32[2, 4, 8], o: f32[2]):
    t: f32[2, 4, 8] @ DRAM
    for i in seq(0, 2):
        for j in seq(0, 4):
            for k in seq(0, 8):
                t[i, j, k] = x[i, j, k]
    branch_on_stride8(t[1, 2, 0:8], o[0:1])
    w = t[0, 3, 0:8]
    if stride(w, 0) == 1:
        o[1] = w[5]
    if stride(t, 2) == 1:
        o[1] = o[1] + t[1, 0, 0]


@proc
def kept_by_unit_extent(x: f32[1, 8], o: f32[1]):
    t: f32[1, 8] @ DRAM
    for j in seq(0, 8):
        t[0, j] = x[0, j]
    if stride(t, 1) == 1:
        o[0] = t[0, 3]
    branch_on_stride8(t[0, 0:8], o)


def test_accepts_reads_of_strides_the_permutation_keeps(equiv):
    """The last dimension stays last: its stride (1) is kept, for the
    callee, the window name and ``stride(t, 2)`` alike."""
    p = kept_strides.rearrange_dim('t', [1, 0, 2])
    assert str(p) == """\
def kept_strides(x: f32[2, 4, 8] @ DRAM, o: f32[2] @ DRAM):
    t: f32[4, 2, 8] @ DRAM
    for i in seq(0, 2):
        for j in seq(0, 4):
            for k in seq(0, 8):
                t[j, i, k] = x[i, j, k]
    branch_on_stride8(t[2, 1, 0:8], o[0:1])
    w = t[3, 0, 0:8]
    if stride(w, 0) == 1:
        o[1] = w[5]
    if stride(t, 2) == 1:
        o[1] = o[1] + t[0, 1, 0]"""
    equiv(kept_strides, p, [{}])
    # moving the last dimension first changes its stride: refused
    with pytest.raises(SchedulingError, match="branch_on_stride8' reads "
                       "strides of its argument"):
        kept_strides.rearrange_dim('t', [2, 0, 1])
    # f32[1, 8] -> f32[8, 1]: dimension 1 has stride 1 both times (the
    # extent after it is 1), proven; the window along it keeps it too
    q = kept_by_unit_extent.rearrange_dim('t', [1, 0])
    assert "if stride(t, 0) == 1:" in str(q)
    assert "branch_on_stride8(t[0:8, 0], o)" in str(q)
    equiv(kept_by_unit_extent, q, [{}])


@proc
def scalar_tmp(x: f32[4]):
    t: f32
    t = x[1]
    x[0] = t


@pytest.mark.parametrize("target", ["t : _", "t"])
def test_rejects_a_scalar_with_a_located_error(target):
    # the empty permutation passed the rank-0 check and the rewrite then
    # failed with TypeError 'F32 has no fields' (issue 32, item 17)
    with pytest.raises(SchedulingError,
                       match=r"test_rearrange_dim\.py:\d+:.*scalar") as ei:
        scalar_tmp.rearrange_dim(target, [])
    assert "t: f32" in str(ei.value)
