"""Stdlib helpers act on the node the user named, or refuse (audit 13b).

Each test is a case where a helper acted on another node than the one
named (a loop of the same name in the same block, the first pair of
names rather than a nest, a loop counted among buffers, statements
outside the vectorized loop) and the result was still a valid procedure,
so nothing but the text showed it. Every accepted result is also checked
against the original on random inputs (interpreted and compiled)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.hw_libs.avx2 import AVX2, INSTRS
from exo_hl.stdlib import (pack, store_at, tile, vectorize,
                           vectorize_reduction)


@proc
def lit_then_twin(x: f32[8], y: f32[8], z: f32[1], u: f32[8]):
    for k in seq(0, 4):
        z[0] = 1.0
        for i in seq(0, 8):
            y[i] = x[i] * 2.0
        for i in seq(0, 8):
            u[i] = x[i] * z[0]


def test_vectorize_binding_a_literal_keeps_the_named_loop(equiv):
    # vectorize binds the literal 2.0 (bind_const hoists it, and with it
    # the loop-invariant z[0] = 1.0 out of k); the loop was then re-found
    # by its old path shifted by the statements added at the top, which
    # named the *second* i loop: u's loop was vectorized, y's left scalar
    p = lit_then_twin
    q = vectorize(p, p.find_loop('i'), 8, AVX2, INSTRS)
    text = str(q)
    assert "mm256_storeu_ps(y[" in text, text
    assert "u[i] = x[i] * z[0]" in text, text
    equiv(p, q, [{}])


@proc
def j_before_nest(x: f32[8, 8], y: f32[8, 8]):
    for k in seq(0, 8):
        for j in seq(0, 8):
            x[k, j] = 1.0
    for i in seq(0, 8):
        for j in seq(0, 8):
            y[i, j] = 2.0


def test_tile_takes_the_j_inside_i(equiv):
    # 'j' resolved alone is the k nest's j: tile split i, split that j and
    # reordered k with jo, and returned that (equivalent, not a tile)
    p = j_before_nest
    first = p.body()[0].text()
    for j in ('j', 'j #1', p.find_loop('j #1')):
        q = tile(p, 'i', j, 4, 4, tail='perfect')
        assert q.body()[0].text() == first, str(q)
        assert "for io in seq(0, 2):\n        for jo in seq(0, 2):" in str(q)
        equiv(p, q, [{}])


def test_tile_refuses_a_j_outside_i():
    p = j_before_nest
    for j in ('j #0', p.find_loop('j')):
        with pytest.raises(SchedulingError, match="not directly inside"):
            tile(p, 'i', j, 4, 4, tail='perfect')


@proc
def three_t(x: f32[4], y: f32[4]):
    for a in seq(0, 4):
        t: f32[4]
        for k in seq(0, 4):
            t[k] = x[k]
        y[a] = t[a]
    for t in seq(0, 4):
        y[t] += 1.0
    for b in seq(0, 4):
        t: f32[4]
        for k in seq(0, 4):
            t[k] = x[k] + 1.0
        y[b] += t[b]
    for c in seq(0, 4):
        t: f32[4]
        for k in seq(0, 4):
            t[k] = x[k] + 2.0
        y[c] += t[c]


def test_store_at_counts_buffers_as_the_primitives_do(equiv):
    # 't #k' is the k-th buffer t (resize_dim's reading); store_at used
    # p.find, which counts the loop t as well, and resized the allocation
    # before the one resize_dim('t #k') resizes
    p = three_t
    for k in (1, 2):
        q = store_at(p, f't #{k}', None, dim=0, size=8)
        assert str(q) == str(p.resize_dim(f't #{k}', 0, 8, 0)), str(q)
        equiv(p, q, [{}])
    with pytest.raises(SchedulingError, match="no buffer matches"):
        store_at(p, 't #3', None, dim=0, size=8)


@proc
def dot_after_copies(n: size, x: f32[n], y: f32[n], s: f32[1], u: f32[8],
                     w: f32[8]):
    assert n % 8 == 0
    r: f32[8] @ AVX2
    for i in seq(0, 8):
        r[i] = u[i]
    for i in seq(0, 8):
        w[i] = r[i]
    for j in seq(0, n):
        s[0] += x[j] * y[j]


def test_vectorize_reduction_selects_in_its_loop_only():
    # the user's own loops through an AVX2 buffer were replaced by
    # mm256_loadu_ps/mm256_storeu_ps: selection ran over the whole
    # procedure for a loop at the top (its parent's body otherwise)
    q = vectorize_reduction(dot_after_copies, 'j', 8, AVX2, INSTRS)
    text = str(q)
    assert "r[i] = u[i]" in text and "w[i] = r[i]" in text, text
    assert "mm256_fmadd_ps(acc[0:8]" in text, text


@proc
def dot_in_else(n: size, x: f32[n], y: f32[n], s: f32[1]):
    assert n % 8 == 0
    if n > 8:
        s[0] = 0.0
    else:
        for j in seq(0, n):
            s[0] += x[j] * y[j]


def test_vectorize_reduction_in_an_else_branch(equiv):
    # selection searched the if's body, not the else branch holding the
    # loop: the result was staged in AVX2 but never selected (nor checked)
    # and compiling it failed; now it is selected there
    q = vectorize_reduction(dot_in_else, 'j', 8, AVX2, INSTRS)
    assert "mm256_fmadd_ps(acc[0:8]" in str(q), str(q)
    assert "mm256_storeu_ps(acc_lanes[0:8]" in str(q), str(q)
    equiv(dot_in_else, q, [{"n": 8}, {"n": 16}])


@proc
def t_in_else(n: size, x: f32[4], y: f32[4]):
    t: f32[4]
    if n > 2:
        for r in seq(0, 4):
            y[r] = x[r]
    else:
        for r in seq(0, 4):
            for k in seq(0, 4):
                t[k] = x[k]
            y[r] = t[r]


def test_store_at_a_loop_in_the_else_branch(equiv):
    # sink_alloc put t at the head of the else branch; store_at looked for
    # it at the head of the then-branch (the loop r) and refused, naming
    # the allocation 'r'
    q = store_at(t_in_else, 't', 'r #1')
    assert q.find('t : _').parent().path() == q.find_loop('r #1').path()
    equiv(t_in_else, q, [{"n": 1}, {"n": 3}])


def test_at_path_off_the_shape_is_a_scheduling_error():
    # a composition's step that did not build the expected shape made
    # at_path raise IndexError (vectorize's literal binding did, before
    # its fix): a refusal must be a SchedulingError
    from exo_hl.stdlib._util import at_path
    with pytest.raises(SchedulingError, match="no statement at"):
        at_path(lit_then_twin, (("body", 0), ("body", 7)))


@proc
def t_then_panel(K: size, A: f32[4, K], B: f32[K, 4], C: f32[4, 4],
                 D: f32[4, 4]):
    for i in seq(0, 4):
        T: f32[4, 4]
        for j in seq(0, 4):
            T[i, j] = 0.0
        for j in seq(0, 4):
            C[i, j] = T[i, j]
    for i in seq(0, 4):
        for j in seq(0, 4):
            D[i, j] = 0.0
        for j in seq(0, 4):
            for k in seq(0, K):
                D[i, j] += A[i, k] * B[k, j]


def test_pack_a_pair_finds_its_block_as_stage_mem_does(equiv):
    # the block ('for j in _: _', 'for j in _: _ #3') is the second nest's
    # pair (the first j has no j #3 after it); pack anchored at the first
    # j and took the T visible there, the first nest's, for its packed
    # buffer: it transposed that T and left the new one row-major
    p = t_then_panel
    q = pack(p, 'B[0:K, 0:4]', ('for j in _: _', 'for j in _: _ #3'),
             'transposed', name='T')
    text = str(q)
    assert "T: f32[4, 4]" in text and "T: f32[4, K]" in text, text
    assert "D[i, j] += A[i, k] * T[j, k]" in text, text
    equiv(p, q, [{"K": 3}])
    q = pack(p, 'B[0:K, 0:4]', ('for j in _: _', 'for j in _: _ #3'))
    assert "D[i, j] += A[i, k] * B_pack[k, j]" in str(q), str(q)
