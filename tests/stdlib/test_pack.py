"""pack: stage a GEMM panel into a contiguous buffer (stage_mem)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import pack


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
         C: f32[M, N]):
    assert N % 4 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def _panels():
    return gemm.split('j', 4, 'jo', 'ji', tail='perfect').reorder('i', 'jo')


def test_pack_a_panel_of_b(equiv, same_text):
    p = _panels()
    q = pack(p, 'B[0:K, 4 * jo:4 * jo + 4]', p.find_loop('i'), 'row')
    same_text(q, """
def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
         C: f32[M, N] @ DRAM):
    assert N % 4 == 0
    for jo in seq(0, N / 4):
        B_pack: f32[K, 4] @ DRAM
        for i0 in seq(0, K):
            for i1 in seq(0, 4):
                B_pack[i0, i1] = B[i0, 4 * jo + i1]
        for i in seq(0, M):
            for ji in seq(0, 4):
                for k in seq(0, K):
                    C[i, 4 * jo + ji] += A[i, k] * B_pack[k, ji]""")
    equiv(gemm, q, [{"M": 2, "N": 4, "K": 3}, {"M": 3, "N": 8, "K": 5}])


def test_pack_rejects_a_panel_that_misses_accesses():
    p = _panels()
    with pytest.raises(SchedulingError):
        pack(p, 'B[0:K, 4 * jo:4 * jo + 2]', p.find_loop('i'), 'row')


def test_pack_transposed(equiv, same_text):
    p = _panels()
    q = pack(p, 'B[0:K, 4 * jo:4 * jo + 4]', p.find_loop('i'), 'transposed')
    same_text(q, """
def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
         C: f32[M, N] @ DRAM):
    assert N % 4 == 0
    for jo in seq(0, N / 4):
        B_pack: f32[4, K] @ DRAM
        for i0 in seq(0, K):
            for i1 in seq(0, 4):
                B_pack[i1, i0] = B[i0, 4 * jo + i1]
        for i in seq(0, M):
            for ji in seq(0, 4):
                for k in seq(0, K):
                    C[i, 4 * jo + ji] += A[i, k] * B_pack[ji, k]""")
    equiv(gemm, q, [{"M": 2, "N": 4, "K": 3}, {"M": 3, "N": 8, "K": 5}])


def test_pack_transposed_rejects_a_panel_that_misses_accesses():
    p = _panels()
    with pytest.raises(SchedulingError, match="does not cover"):
        pack(p, 'B[0:K, 4 * jo:4 * jo + 2]', p.find_loop('i'), 'transposed')


def test_pack_rejects_an_unknown_layout():
    p = _panels()
    with pytest.raises(SchedulingError, match="layout"):
        pack(p, 'B[0:K, 4 * jo:4 * jo + 4]', p.find_loop('i'), 'diagonal')


@pytest.mark.parametrize("panel", ["B", 3, None])
def test_pack_rejects_a_panel_that_is_no_window_string(panel):
    """A bare name, a number or None raised ValueError/AttributeError."""
    p = _panels()
    with pytest.raises(SchedulingError, match="window string"):
        pack(p, panel, p.find_loop('i'))
    with pytest.raises(SchedulingError, match="window string"):
        pack(p, p.find('B[_]'), p.find_loop('i'))
