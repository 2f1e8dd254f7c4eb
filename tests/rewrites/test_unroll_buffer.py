"""unroll_buffer: one buffer per constant index of a dimension."""
from __future__ import annotations

import re

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size, stride


@proc
def bar(x: f32[4], y: f32[4]):
    t: f32[2, 3]
    t[0, 1] = x[0]
    t[1, 1] = x[1]
    for j in seq(0, 3):
        t[1, j] = x[j] + 1.0
    y[0] = t[0, 1] + t[1, 2]


@proc
def dyn(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32[2]
        t[0] = x[i]
        t[1] = x[i] * 2.0
        y[i] = t[0] + t[1]


def test_unroll_buffer_prints_and_equiv(equiv, assert_roundtrip):
    p = bar.unroll_buffer("t", 0)
    assert str(p) == """\
def bar(x: f32[4] @ DRAM, y: f32[4] @ DRAM):
    t_0: f32[3] @ DRAM
    t_1: f32[3] @ DRAM
    t_0[1] = x[0]
    t_1[1] = x[1]
    for j in seq(0, 3):
        t_1[j] = x[j] + 1.0
    y[0] = t_0[1] + t_1[2]"""
    assert_roundtrip(p)
    equiv(bar, p, [{}])
    q = dyn.unroll_buffer("t", 0)
    assert "t_0: f32 @ DRAM" in str(q) and "y[i] = t_0 + t_1" in str(q)
    equiv(dyn, q, [{"n": 1}, {"n": 3}])


def test_unroll_buffer_needs_constant_index():
    with pytest.raises(SchedulingError, match="not a constant") as e:
        bar.unroll_buffer("t", 1)
    assert "t[1, j] = x[j] + 1.0" in str(e.value)
    with pytest.raises(SchedulingError, match="allocation"):
        bar.unroll_buffer("x", 0)


# strides: unrolling dimension d removes it, so the stride of every
# dimension at or before d changes (t[0:4, 1] has stride 4, t_1[0:4] stride
# 1); a read of one is refused, whether direct, through a window name or by
# a callee given a window; windows along later dimensions keep theirs

@proc
def branch_on_stride(v: [f32][4], o: [f32][1]):
    if stride(v, 0) == 1:
        o[0] = v[0]
    else:
        o[0] = v[1]


@proc
def passes_on(v: [f32][4], o: [f32][1]):
    branch_on_stride(v, o)


@proc
def col_callee(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4]
    for i in seq(0, 4):
        t[i, 0] = x[i, 0]
        t[i, 1] = x[i, 1]
    branch_on_stride(t[0:4, 1], o)


@proc
def col_nested_callee(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4]
    for i in seq(0, 4):
        t[i, 0] = x[i, 0]
        t[i, 1] = x[i, 1]
    passes_on(t[0:4, 1], o)


@proc
def col_window_name_callee(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4]
    for i in seq(0, 4):
        t[i, 0] = x[i, 0]
        t[i, 1] = x[i, 1]
    w = t[0:4, 1]
    branch_on_stride(w, o)


@proc
def col_window_name(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4]
    for i in seq(0, 4):
        t[i, 0] = x[i, 0]
        t[i, 1] = x[i, 1]
    w = t[0:4, 1]
    if stride(w, 0) == 4:
        o[0] = w[1]


@proc
def col_direct(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4]
    for i in seq(0, 4):
        t[i, 0] = x[i, 0]
        t[i, 1] = x[i, 1]
    if stride(t, 0) == 4:
        o[0] = t[1, 1]


def test_unroll_buffer_rejects_reads_of_strides_it_changes():
    with pytest.raises(SchedulingError, match=r"'stride\(t, 0\)' reads the "
                       r"stride of dimension 0 of 't', which changes when "
                       r"dimension 1 is unrolled") as e:
        col_direct.unroll_buffer("t", 1)
    assert "if stride(t, 0) == 4:" in str(e.value)
    with pytest.raises(SchedulingError, match=r"'stride\(w, 0\)' reads the "
                       r"stride of dimension 0 of 't'") as e:
        col_window_name.unroll_buffer("t", 1)
    assert "if stride(w, 0) == 4:" in str(e.value)


@pytest.mark.parametrize("p, arg", [
    (col_callee, "t[0:4, 1]"), (col_nested_callee, "t[0:4, 1]"),
    (col_window_name_callee, "w")],
    ids=["callee", "callee_of_callee", "window_name"])
def test_unroll_buffer_rejects_a_callee_reading_a_stride_it_changes(p, arg):
    with pytest.raises(SchedulingError, match=(
            rf"reads strides of its argument '{re.escape(arg)}', a window "
            rf"along dimension 0 of 't', whose stride changes when "
            rf"dimension 1 is unrolled")) as e:
        p.unroll_buffer("t", 1)
    assert f"({arg}, o)" in str(e.value)       # the call, as it reads


@proc
def rows(x: f32[2, 4], o: f32[2]):
    t: f32[2, 4]
    for j in seq(0, 4):
        t[0, j] = x[0, j]
        t[1, j] = x[1, j]
    branch_on_stride(t[1, 0:4], o[0:1])
    w = t[0, 0:4]
    if stride(w, 0) == 1:
        o[1] = w[2]
    if stride(t, 1) == 1:
        o[1] = o[1] + t[1, 3]


def test_unroll_buffer_keeps_strides_after_the_dimension(equiv):
    """Unrolling dimension 0 keeps the stride of dimension 1 (1): the
    callee, the window name and ``stride(t, 1)`` read the same value."""
    p = rows.unroll_buffer("t", 0)
    assert str(p) == """\
def rows(x: f32[2, 4] @ DRAM, o: f32[2] @ DRAM):
    t_0: f32[4] @ DRAM
    t_1: f32[4] @ DRAM
    for j in seq(0, 4):
        t_0[j] = x[0, j]
        t_1[j] = x[1, j]
    branch_on_stride(t_1[0:4], o[0:1])
    w = t_0[0:4]
    if stride(w, 0) == 1:
        o[1] = w[2]
    if stride(t_0, 0) == 1:
        o[1] = o[1] + t_1[3]"""
    equiv(rows, p, [{}])


@proc
def first_two(v: [f32][4], o: [f32][1]):
    o[0] = v[0] + v[1]


@proc
def col_no_stride_read(x: f32[4, 4], o: f32[1]):
    t: f32[4, 4]
    for i in seq(0, 4):
        t[i, 0] = x[i, 0]
        t[i, 1] = x[i, 1]
    w = t[0:4, 0]
    first_two(t[0:4, 1], o)
    o[0] = o[0] + w[3]


def test_unroll_buffer_keeps_windows_whose_strides_nobody_reads(equiv):
    """A window along dimension 0 changes its stride when dimension 1 is
    unrolled, but a callee that reads no stride cannot tell."""
    p = col_no_stride_read.unroll_buffer("t", 1)
    assert "first_two(t_1[0:4], o)" in str(p)
    assert "w = t_0[0:4]" in str(p)
    equiv(col_no_stride_read, p, [{}])
