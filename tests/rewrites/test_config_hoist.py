"""Hoisting a loop-invariant config write out of a loop nest, verified.

The paper's example (§3.2): ``config_ld(stride(A, 0))`` runs in every
iteration before the load that needs it; reorder_stmts / fission_after /
remove_loop move it to the top. Each step is checked by the effect analysis:
a config write of the value the field already holds (the same
loop-invariant value, seen from a later iteration) commutes with the reads
it feeds, and a loop that only rewrites such a value is idempotent. Writing
two different values in one body keeps every unsafe step rejected.
"""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size, stride
from exo_hl.effects.bounds import check_proc


@config
class ConfigLoad:
    src_stride: stride


@proc
def config_ld(s: stride):
    ConfigLoad.src_stride = s


@proc
def ld(n: size, m: size, src: [f32][n, m], dst: [f32][n, m]):
    assert ConfigLoad.src_stride == stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@proc
def tile_copy(N: size, A: f32[N, 16, 4], B: f32[N, 16, 4], C: f32[N]):
    for i in seq(0, N):
        for j in seq(0, 16):
            C[i] = 0.0
            config_ld(stride(A, 1))
            ld(1, 4, A[i, j:j + 1, 0:4], B[i, j:j + 1, 0:4])


@proc
def two_strides(N: size, K1: size, K2: size, A: f32[N, K1], B: f32[N, K2],
                C: f32[N, 4], D: f32[N, 4]):
    assert K1 >= 4 and K2 >= 4
    for i in seq(0, N):
        for j in seq(0, 2):
            config_ld(stride(A, 0))
            ld(1, 4, A[i:i + 1, 0:4], C[i:i + 1, 0:4])
            config_ld(stride(B, 0))
            ld(1, 4, B[i:i + 1, 0:4], D[i:i + 1, 0:4])


def test_hoist_loop_invariant_config_write(equiv):
    p1 = tile_copy.reorder_stmts("C[_] = _")
    p2 = p1.fission_after("config_ld(_)", n_lifts=2)
    assert str(p2) == """\
def tile_copy(N: size, A: f32[N, 16, 4] @ DRAM, B: f32[N, 16, 4] @ DRAM,
              C: f32[N] @ DRAM):
    for i in seq(0, N):
        for j in seq(0, 16):
            config_ld(stride(A, 1))
    for i in seq(0, N):
        for j in seq(0, 16):
            C[i] = 0.0
            ld(1, 4, A[i, j:j + 1, 0:4], B[i, j:j + 1, 0:4])"""
    p3 = p2.remove_loop("j")
    p4 = p3.remove_loop("i")
    assert str(p4) == """\
def tile_copy(N: size, A: f32[N, 16, 4] @ DRAM, B: f32[N, 16, 4] @ DRAM,
              C: f32[N] @ DRAM):
    config_ld(stride(A, 1))
    for i in seq(0, N):
        for j in seq(0, 16):
            C[i] = 0.0
            ld(1, 4, A[i, j:j + 1, 0:4], B[i, j:j + 1, 0:4])"""
    # the ld calls still provably satisfy their config precondition
    check_proc(p4.ir())
    assert p4.is_eq(tile_copy)
    equiv(tile_copy, p4, [{"N": 1}, {"N": 3}])


def test_hoist_two_different_values_rejected():
    # moving the first write past the loads of later iterations would make
    # them see stride(A, 0) where they saw stride(B, 0)
    with pytest.raises(SchedulingError, match="cannot be split"):
        two_strides.fission_after("config_ld(_)", n_lifts=2)
    with pytest.raises(SchedulingError, match="cannot be split"):
        two_strides.fission_after("config_ld(_) #1")
    # nor can the write of stride(B, 0) be moved before the first load
    with pytest.raises(SchedulingError, match="do not commute"):
        two_strides.reorder_stmts("ld(_)", "config_ld(_) #1")


def test_hoist_rejects_loop_that_may_not_run():
    @proc
    def maybe_empty(N: size, M: size, A: f32[N, 4], B: f32[N, 4]):
        for i in seq(0, N):
            for j in seq(0, M - 1):
                config_ld(stride(A, 0))
                ld(1, 4, A[i:i + 1, 0:4], B[i:i + 1, 0:4])
    p = maybe_empty.fission_after("config_ld(_)", n_lifts=2)
    with pytest.raises(SchedulingError, match="zero times"):
        p.remove_loop("j")


def test_unsound_fission_with_loop_varying_config_index_rejected():
    """Effects of loop-body statements use the config state of the
    iteration, not of the loop entry."""
    from exo_hl import index

    @config
    class Ix:
        x: index

    @proc
    def shifting(A: f32[4], B: f32[4]):
        assert Ix.x == 0
        for j in seq(0, 4):
            A[Ix.x] = 1.0
            Ix.x = 2
            B[j] = A[2]
    with pytest.raises(SchedulingError, match="cannot be split"):
        shifting.fission_after("Ix.x = _")
