"""Rewrite arguments written as text may name config fields, as
``stage_mem``'s window may (audit 15a found ``expand_dim``'s
``indexing_expr`` and ``divide_with_recompute``'s ``outer_hi`` could not:
"name 'Ce.k' is not defined"); the existing checks still refuse a field the
scope (the body) writes, where the value would differ between uses."""
from __future__ import annotations

import pytest

from exo_hl import (DRAM_STATIC, SchedulingError, config, f32, index, proc,
                    seq, size)


@config
class Ce:
    k: index
    m: index


@proc
def per_row(n: size, x: f32[4, n], y: f32[4, n]):
    assert n >= 2
    Ce.k = 2
    for i in seq(0, n):
        t: f32
        t = x[Ce.k, i] * 2.0
        y[Ce.k, i] = t + 1.0


@proc
def per_row_writes(n: size, x: f32[4, n], y: f32[4, n]):
    assert n >= 2
    Ce.k = 2
    for i in seq(0, n):
        t: f32
        t = x[Ce.k, i] * 2.0
        Ce.k = 1
        y[Ce.k, i] = t + 1.0


def test_expand_dim_index_reads_a_config_field(equiv):
    q = per_row.expand_dim('t', 4, 'Ce.k')
    assert "t: f32[4]" in str(q) and "t[Ce.k] = x[Ce.k, i] * 2.0" in str(q)
    equiv(per_row, q, [{"n": 2}, {"n": 7}])


def test_expand_dim_index_refused_when_the_scope_writes_the_field():
    with pytest.raises(SchedulingError, match="Ce.k"):
        per_row_writes.expand_dim('t', 4, 'Ce.k')


@proc
def stencil(n: size, x: f32[n + 2], y: f32[n]):
    assert n % 4 == 0
    Ce.m = n / 4
    for i in seq(0, n):
        y[i] = x[i] + x[i + 1] + x[i + 2]


@proc
def stencil_writes(n: size, x: f32[n + 2], y: f32[n]):
    assert n % 4 == 0
    Ce.m = n / 4
    for i in seq(0, n):
        y[i] = x[i] + x[i + 1] + x[i + 2]
        Ce.m = 1


def test_divide_with_recompute_outer_hi_reads_a_config_field(equiv):
    q = stencil.divide_with_recompute('i', 'Ce.m', 4, ['io', 'ii'])
    assert "for io in seq(0, Ce.m)" in str(q)
    equiv(stencil, q, [{"n": 4}, {"n": 12}])


def test_divide_with_recompute_refused_when_the_body_writes_the_field():
    with pytest.raises(SchedulingError, match="Ce.m"):
        stencil_writes.divide_with_recompute('i', 'Ce.m', 4, ['io', 'ii'])


# ----------------------------------------------------------------------
# a shape a buffer's memory cannot hold is refused by the rewrite (was a
# MemGenError at compile() after expand_dim / resize_dim; audit15a)

@proc
def static_tmp(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32[4] @ DRAM_STATIC
        for j in seq(0, 4):
            t[j] = x[i] * 2.0
        y[i] = t[0] + t[3]


def test_expand_dim_refuses_a_symbolic_size_in_static_memory():
    with pytest.raises(SchedulingError, match="DRAM_STATIC cannot hold"):
        static_tmp.expand_dim('t', 'n', 'i')
    q = static_tmp.expand_dim('t', 8, 'i % 8')      # a constant: fine
    assert "t: f32[8, 4] @ DRAM_STATIC" in str(q)
    q.compile()


def test_resize_dim_refuses_a_symbolic_size_in_static_memory():
    with pytest.raises(SchedulingError, match="DRAM_STATIC cannot hold"):
        static_tmp.resize_dim('t', 0, 'n + 4', 0)
