"""Edge cases of the buffer and loop-structure rewrites (audit, session 11).

Each case is one a safety check could plausibly miss: a window alias that
keeps a buffer alive, a window slicing a folded dimension, a stride read
that a layout change would alter, a scalar that starts at zero, negative
loop bounds under ``mult_loops`` (C's truncating division), bounds and
indices reading configuration state the body writes. The refusals must
stay refusals; the accepted variants must stay equal to the original.
"""
from __future__ import annotations

import pytest

from exo_hl import (SchedulingError, config, f32, index, proc, seq, size,
                    stride)


@proc
def _acc(n: size, a: [f32][n], b: [f32][n]):
    for i in seq(0, n):
        b[i] = a[i] + 1.0


# -- reuse_buffer: a window name keeps the reused buffer alive -------------
@proc
def reuse_through_window(x: f32[8], y: f32[8]):
    a: f32[8]
    for i in seq(0, 8):
        a[i] = x[i]
    w = a[0:8]
    b: f32[8]
    for i in seq(0, 8):
        b[i] = x[i] * 2.0
    _acc(8, w, y)
    for i in seq(0, 8):
        y[i] += b[i]


def test_reuse_refuses_buffer_alive_through_window_name():
    with pytest.raises(SchedulingError, match="lifetimes overlap"):
        reuse_through_window.reuse_buffer('b : _', 'a : _')


# -- resize_dim(fold=True): folding would make two windows alias ------------
@proc
def fold_windows(x: f32[8], y: f32[8]):
    t: f32[8]
    for i in seq(0, 8):
        t[i] = x[i]
    _acc(2, t[0:2], t[4:6])
    for i in seq(0, 8):
        y[i] = t[i]


def test_fold_refuses_window_of_folded_dimension():
    with pytest.raises(SchedulingError, match="slices the folded"):
        fold_windows.resize_dim('t', 0, 4, 0, fold=True)


# -- layout changes vs stride reads -----------------------------------------
@proc
def reads_strides(x: f32[4, 6], y: f32[8]):
    t: f32[4, 6]
    for i in seq(0, 4):
        for j in seq(0, 6):
            t[i, j] = x[i, j]
    if stride(t, 0) == 6:
        y[0] = t[1, 2]
    w = t[1, 0:6]
    if stride(w, 0) == 1:
        y[2] = w[1]


@pytest.mark.parametrize("rewrite", [
    lambda p: p.rearrange_dim('t', [1, 0]),
    lambda p: p.unroll_buffer('t', 0),
    lambda p: p.resize_dim('t', 1, 7, 0),
])
def test_layout_change_refuses_stride_read(rewrite):
    with pytest.raises(SchedulingError, match="stride"):
        rewrite(reads_strides)


def test_expand_dim_keeps_stride_reads(equiv):
    """A new leading dimension changes no existing stride: accepted."""
    equiv(reads_strides, reads_strides.expand_dim('t', 2, '1'), [{}])


# -- sink_alloc / lift_alloc: a local scalar starts at zero -----------------
@proc
def carried_scalar(n: size, x: f32[n], y: f32[n]):
    t: f32
    for i in seq(0, n):
        y[i] = t
        t = x[i]


@proc
def fresh_scalar(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        if i > 0:
            t = x[i]
        y[i] = t


def test_scalar_zero_start_refusals():
    with pytest.raises(SchedulingError, match="reads t"):
        carried_scalar.sink_alloc('t : _')
    with pytest.raises(SchedulingError, match="starts at zero"):
        fresh_scalar.lift_alloc('t : _')


# -- negative bounds: C's division truncates toward zero --------------------
@proc
def negative_nest(n: size, x: f32[n + 8, 4]):
    for i in seq(-2, n):
        for j in seq(-1, 2):
            x[i + 2, j + 1] = x[i + 2, j + 1] + 1.0
            x[i + 3, j + 2] = x[i + 2, j + 1] * 2.0


@pytest.mark.parametrize("rewrite", [
    lambda p: p.mult_loops('i', 'j', 'ij'),
    lambda p: p.shift_loop('i', 0),
    lambda p: p.shift_loop('j', 0),
    lambda p: p.cut_loop('i', -1),
    lambda p: p.cut_loop('j', 0),
])
def test_negative_bounds_equal(rewrite, equiv):
    equiv(negative_nest, rewrite(negative_nest), [{"n": 1}, {"n": 3}])


# -- configuration state written by the body --------------------------------
@config
class EdgeCfg:
    k: index
    n: size


@proc
def join_cfg_bound(x: f32[16]):
    EdgeCfg.k = 2
    for i in seq(0, EdgeCfg.k):
        x[i] = x[i] + 1.0
        EdgeCfg.k = 4
    for i in seq(EdgeCfg.k, 6):
        x[i] = x[i] + 1.0
        EdgeCfg.k = 4


@proc
def join_cfg_index(x: f32[16]):
    EdgeCfg.k = 2
    for i in seq(0, 2):
        x[i + EdgeCfg.k] = x[i] + 1.0
        EdgeCfg.k = 4
    for i in seq(2, 6):
        x[i + EdgeCfg.k] = x[i] + 1.0
        EdgeCfg.k = 4


def test_join_loops_config(equiv):
    with pytest.raises(SchedulingError, match="configuration state"):
        join_cfg_bound.join_loops('i', 'i #1')
    # equal bodies reading a field they write: one sequence of iterations
    equiv(join_cfg_index, join_cfg_index.join_loops('i', 'i #1'), [{}])


# -- divide_with_recompute: a call writing overlapping windows --------------
@proc
def recompute_call(x: f32[24]):
    for i in seq(0, 10):
        _acc(1, x[i:i + 1], x[i + 12:i + 13])


@proc
def recompute_read_then_overwrite(x: f32[12], y: f32[12]):
    for i in seq(0, 10):
        y[i] = x[i]
        x[i] = 2.0


def test_divide_with_recompute_edges(equiv):
    p = recompute_call.divide_with_recompute('i', 3, 3, ['o', 'ii'])
    equiv(recompute_call, p, [{}])
    with pytest.raises(SchedulingError, match="running an iteration again"):
        recompute_read_then_overwrite.divide_with_recompute(
            'i', 3, 3, ['o', 'ii'])
