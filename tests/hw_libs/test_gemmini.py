"""The Gemmini library: every instruction body (``interpret``) agrees bit for
bit with the C functional model (``compile``) and with numpy, including
saturation; the configuration preconditions reject unconfigured or
misconfigured loads/stores; on-chip memories are not readable from C."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (DRAM, BoundsError, MemGenError, SchedulingError, f32, i8,
                    i32, par, proc, seq, stride)
from exo_hl import size
from exo_hl.hw_libs.gemmini import (GEMM_ACCUM, GEMM_SCRATCH, ConfigLoad,
                                    ConfigLoadAcc, config_count, config_ld,
                                    config_ld_acc, config_ld_id1, config_st,
                                    instr_count, ld_acc_i32, ld_acc_i32_bcast,
                                    ld_i8, ld_i8_id1, matmul_i8,
                                    matmul_i8_sized, reset_instr_count,
                                    st_acc_i32, st_acc_i8, st_acc_i8_relu,
                                    st_i8, zero_acc_i32)


def scaled_ref(x, scale, relu=False):
    y = np.rint(x.astype(np.float32) * np.float32(scale))
    y = np.clip(y, -2.0**31, 2.0**31 - 1)
    if relu:
        y = np.maximum(y, 0)
    return np.clip(y, -128, 127).astype(np.int8)


@proc
def bias_store(scale: f32, X: i32[16, 16] @ DRAM, Y: i8[16, 16] @ DRAM,
               Z: i8[16, 16] @ DRAM):
    acc: i32[16, 16] @ GEMM_ACCUM
    config_ld_acc(stride(X, 0))
    ld_acc_i32(16, 16, X, acc)
    config_st(stride(Y, 0), False)
    st_acc_i8(16, 16, scale, acc, Y)
    config_st(stride(Z, 0), True)
    st_acc_i8_relu(16, 16, scale, acc, Z)


@pytest.mark.parametrize("scale", [1.0, 0.5, 0.37, 1e-7, 3.0, 2.0**-20])
def test_bias_load_scaled_store_saturates(scale):
    rng = np.random.default_rng(1)
    X = rng.integers(-2**31, 2**31, (16, 16), dtype=np.int64).astype(np.int32)
    X[0, :10] = [-1000, 1000, 5, -5, 2**31 - 1, -2**31, 254, 255, 3, -3]
    X[1] = rng.integers(-300, 300, 16)          # mostly unsaturated rows
    s = np.array([scale], np.float32)
    outs = []
    for run in (bias_store.interpret, bias_store.compile()):
        Y = np.zeros((16, 16), np.int8)
        Z = np.zeros((16, 16), np.int8)
        run(scale=s, X=X, Y=Y, Z=Z)
        outs.append((Y, Z))
    (Yi, Zi), (Yc, Zc) = outs
    assert np.array_equal(Yi, Yc) and np.array_equal(Zi, Zc)
    assert np.array_equal(Yi, scaled_ref(X, scale))
    assert np.array_equal(Zi, scaled_ref(X, scale, relu=True))
    if scale >= 0.5:   # both saturation ends are really exercised
        assert (Yi == 127).any() and (Yi == -128).any()


def test_round_half_to_even():
    X = np.zeros((16, 16), np.int32)
    X[0, :6] = [1, 3, 5, -1, -3, -5]           # * 0.5 -> ties
    s = np.array([0.5], np.float32)
    for run in (bias_store.interpret, bias_store.compile()):
        Y = np.zeros((16, 16), np.int8)
        Z = np.zeros((16, 16), np.int8)
        run(scale=s, X=X, Y=Y, Z=Z)
        assert list(Y[0, :6]) == [0, 2, 2, 0, -2, -2]
        assert list(Z[0, :6]) == [0, 2, 2, 0, 0, 0]


@proc
def tile_roundtrip(A: i8[40, 50] @ DRAM, Out: i8[40, 50] @ DRAM):
    t: i8[16, 16] @ GEMM_SCRATCH
    config_ld(stride(A, 0))
    config_st(stride(Out, 0), False)
    ld_i8(11, 13, A[3:14, 7:20], t[0:11, :])
    st_i8(11, 13, t[0:11, :], Out[20:31, 30:43])
    config_ld_id1(stride(A, 0))
    ld_i8_id1(16, 5, A[24:40, 45:50], t[:, :])
    st_i8(16, 5, t[:, :], Out[0:16, 0:5])


def test_partial_tiles_and_strides():
    rng = np.random.default_rng(2)
    A = rng.integers(-128, 128, (40, 50)).astype(np.int8)
    want = np.zeros((40, 50), np.int8)
    want[20:31, 30:43] = A[3:14, 7:20]
    want[0:16, 0:5] = A[24:40, 45:50]
    for run in (tile_roundtrip.interpret, tile_roundtrip.compile()):
        Out = np.zeros((40, 50), np.int8)
        run(A=A, Out=Out)
        assert np.array_equal(Out, want)


@proc
def tile_matmul(A: i8[16, 32] @ DRAM, B: i8[32, 16] @ DRAM,
                Bias: i32[16, 16] @ DRAM, C: i32[16, 16] @ DRAM,
                D: i32[16, 16] @ DRAM):
    acc: i32[16, 16] @ GEMM_ACCUM
    a: i8[16, 16] @ GEMM_SCRATCH
    b: i8[16, 16] @ GEMM_SCRATCH
    config_ld(stride(A, 0))
    config_ld_id1(stride(B, 0))
    config_ld_acc(stride(Bias, 0))
    config_st(stride(C, 0), False)
    ld_acc_i32(16, 16, Bias, acc)
    for k in seq(0, 2):
        ld_i8(16, 16, A[:, 16 * k:16 * k + 16], a)
        ld_i8_id1(16, 16, B[16 * k:16 * k + 16, :], b)
        matmul_i8(a, b, acc)
    st_acc_i32(16, 16, acc, C)
    zero_acc_i32(16, 12, acc)
    st_acc_i32(16, 16, acc, D)


def test_matmul_bias_zero_and_i32_store():
    rng = np.random.default_rng(3)
    A = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    B = rng.integers(-128, 128, (32, 16)).astype(np.int8)
    Bias = rng.integers(-2**31, 2**31, (16, 16), dtype=np.int64).astype(
        np.int32)                                # i32 wrap-around exercised
    acc = (A.astype(np.int64) @ B.astype(np.int64)) + Bias
    want_c = acc.astype(np.uint32).astype(np.int64)
    want_c = np.where(want_c >= 2**31, want_c - 2**32, want_c).astype(np.int32)
    want_d = want_c.copy()
    want_d[:, 0:12] = 0
    f = tile_matmul.compile()
    for run in (tile_matmul.interpret, f):
        C = np.zeros((16, 16), np.int32)
        D = np.zeros((16, 16), np.int32)
        run(A=A, B=B, Bias=Bias, C=C, D=D)
        assert np.array_equal(C, want_c) and np.array_equal(D, want_d)
    # config x4, bias load, 2 x (2 loads + preload/compute), 2 stores, zero
    reset_instr_count(f)
    f(A=A, B=B, Bias=Bias, C=np.zeros((16, 16), np.int32),
      D=np.zeros((16, 16), np.int32))
    assert instr_count(f) == 4 + 1 + 2 * 4 + 2 + 1


@proc
def partial_block(n: size, k: size, scale: f32, bias: i32[16] @ DRAM,
                  A: i8[n, k] @ DRAM, B: i8[k, 16] @ DRAM,
                  Y: i8[n, 16] @ DRAM):
    assert n <= 16 and k <= 16
    acc: i32[16, 16] @ GEMM_ACCUM
    a: i8[16, 16] @ GEMM_SCRATCH
    b: i8[16, 16] @ GEMM_SCRATCH
    config_ld_acc(0)
    ld_acc_i32_bcast(n, 16, bias, acc[0:n, :])
    config_ld(stride(A, 0))
    ld_i8(n, k, A, a[0:n, :])
    config_ld_id1(stride(B, 0))
    ld_i8_id1(k, 16, B, b[0:k, :])
    matmul_i8_sized(n, 13, k, a[0:n, :], b[0:k, :], acc[0:n, :])
    config_st(stride(Y, 0), False)
    st_acc_i8(n, 16, scale, acc[0:n, :], Y)


@pytest.mark.parametrize("n,k", [(5, 11), (16, 16), (1, 3)])
def test_broadcast_bias_and_partial_matmul(n, k):
    """A bias row broadcast over n rows (load engine 2, stride 0) plus an
    n x 13 x k block; columns 13..15 keep the bias alone. The model counts
    4 config writes among its 10 instructions (matmul is preload+compute)."""
    rng = np.random.default_rng(n * 100 + k)
    bias = rng.integers(-3000, 3000, 16).astype(np.int32)
    A = rng.integers(-128, 128, (n, k)).astype(np.int8)
    B = rng.integers(-128, 128, (k, 16)).astype(np.int8)
    acc = np.tile(bias, (n, 1))
    acc[:, :13] += A.astype(np.int32) @ B[:, :13].astype(np.int32)
    want = scaled_ref(acc, 0.01)
    f = partial_block.compile()
    s = np.array([0.01], np.float32)
    for run in (partial_block.interpret, f):
        Y = np.zeros((n, 16), np.int8)
        run(n=n, k=k, scale=s, bias=bias, A=A, B=B, Y=Y)
        assert np.array_equal(Y, want)
    reset_instr_count(f)
    f(n=n, k=k, scale=s, bias=bias, A=A, B=B, Y=np.zeros((n, 16), np.int8))
    assert (instr_count(f), config_count(f)) == (10, 4)
    reset_instr_count(f)
    assert (instr_count(f), config_count(f)) == (0, 0)


def test_broadcast_load_needs_stride_zero():
    with pytest.raises(BoundsError):
        @proc
        def strided_bias(bias: i32[16] @ DRAM):
            acc: i32[16, 16] @ GEMM_ACCUM
            config_ld_acc(stride(bias, 0))
            ld_acc_i32_bcast(16, 16, bias, acc)

    @proc
    def bias_rows(bias: i32[16] @ DRAM, Y: i32[4, 16] @ DRAM):
        acc: i32[16, 16] @ GEMM_ACCUM
        for i in seq(0, 4):
            for j in seq(0, 16):
                acc[i, j] = bias[j]
        config_st(stride(Y, 0), False)
        st_acc_i32(4, 16, acc[0:4, :], Y)

    bad = bias_rows.configwrite_at(bias_rows.find_loop('i'), ConfigLoadAcc,
                                   'src_stride', '1', before=True)
    with pytest.raises(SchedulingError):
        bad.replace(bad.find_loop('i'), ld_acc_i32_bcast)
    good = bias_rows.configwrite_at(bias_rows.find_loop('i'), ConfigLoadAcc,
                                    'src_stride', '0', before=True)
    good = good.replace(good.find_loop('i'), ld_acc_i32_bcast)
    assert 'ld_acc_i32_bcast(4, 16, bias' in str(good)


def test_partial_matmul_needs_at_most_16():
    with pytest.raises(BoundsError):
        @proc
        def too_deep(a: i8[16, 16] @ GEMM_SCRATCH,
                     b: i8[32, 16] @ GEMM_SCRATCH,
                     c: i32[16, 16] @ GEMM_ACCUM):
            matmul_i8_sized(16, 16, 32, a, b, c)


def test_unconfigured_or_misconfigured_load_is_rejected():
    with pytest.raises(BoundsError):
        @proc
        def no_config(A: i8[16, 16] @ DRAM):
            t: i8[16, 16] @ GEMM_SCRATCH
            ld_i8(16, 16, A, t)

    with pytest.raises(BoundsError):
        @proc
        def wrong_stride(A: i8[16, 32] @ DRAM, B: i8[16, 16] @ DRAM):
            t: i8[16, 16] @ GEMM_SCRATCH
            config_ld(stride(B, 0))
            ld_i8(16, 16, A[:, 0:16], t)

    with pytest.raises(BoundsError):   # the other engine's register
        @proc
        def wrong_engine(A: i8[16, 32] @ DRAM):
            t: i8[16, 16] @ GEMM_SCRATCH
            config_ld(stride(A, 0))
            ld_i8_id1(16, 16, A[:, 0:16], t)

    with pytest.raises(BoundsError):   # ReLU store needs act == True
        @proc
        def wrong_act(scale: f32, A: i8[16, 16] @ DRAM):
            acc: i32[16, 16] @ GEMM_ACCUM
            zero_acc_i32(16, 16, acc)
            config_st(stride(A, 0), False)
            st_acc_i8_relu(16, 16, scale, acc, A)


def test_load_replace_needs_matching_config():
    @proc
    def copy_in(A: i8[16, 32] @ DRAM, B: i8[16, 16] @ DRAM):
        t: i8[16, 16] @ GEMM_SCRATCH
        for i in seq(0, 16):
            for j in seq(0, 16):
                t[i, j] = A[i, j]
        config_st(stride(B, 0), False)
        st_i8(16, 16, t, B)

    bad = copy_in.configwrite_at(copy_in.find_loop('i'), ConfigLoad,
                                 'src_stride', 'stride(B, 0)', before=True)
    with pytest.raises(SchedulingError):
        bad.replace(bad.find_loop('i'), ld_i8)
    good = copy_in.configwrite_at(copy_in.find_loop('i'), ConfigLoad,
                                  'src_stride', 'stride(A, 0)', before=True)
    good = good.replace(good.find('ConfigLoad.src_stride = _'), config_ld)
    good = good.replace(good.find_loop('i'), ld_i8)
    assert 'ld_i8(16, 16' in str(good)
    A = np.arange(16 * 32).reshape(16, 32).astype(np.int8)
    B = np.zeros((16, 16), np.int8)
    good.compile()(A=A, B=B)
    assert np.array_equal(B, A[:, 0:16])


def test_hoisting_a_changing_config_is_rejected():
    """Two loads in one loop use different strides on the same engine: the
    second config write cannot move above the first load (which depends on
    the register), and neither can be hoisted out of the loop."""
    @proc
    def two_sources(A: i8[16, 32] @ DRAM, X: i8[16, 48] @ DRAM):
        t: i8[16, 16] @ GEMM_SCRATCH
        for r in seq(0, 2):
            config_ld(stride(A, 0))
            ld_i8(16, 16, A[:, 16 * r:16 * r + 16], t)
            config_ld(stride(X, 0))
            ld_i8(16, 16, X[:, 16 * r:16 * r + 16], t)

    with pytest.raises(SchedulingError):
        two_sources.reorder_stmts('ld_i8(_)', 'config_ld(_) #1')
    with pytest.raises(SchedulingError):   # later write seen by earlier load
        two_sources.fission_after('config_ld(_)')


def test_onchip_memories_are_not_readable_from_c():
    @proc
    def peek(A: i8[16, 16] @ DRAM):
        t: i8[16, 16] @ GEMM_SCRATCH
        config_ld(stride(A, 0))
        ld_i8(16, 16, A, t)
        A[0, 0] = t[1, 1]
    with pytest.raises(MemGenError):
        peek.c_code_str()

    @proc
    def wrong_elem(A: i8[16, 16] @ DRAM):
        t: i8[16, 16] @ GEMM_ACCUM
        for i in seq(0, 16):
            A[i, 0] = 0
        pass
    with pytest.raises((MemGenError, SchedulingError)):
        wrong_elem.c_code_str()


def test_onchip_windows_must_have_contiguous_rows():
    """The model takes an on-chip window's row stride only (its columns are
    contiguous): a column window of a 3-D scratchpad buffer (strides 256,
    16) was accepted and its rows landed in the wrong places."""
    with pytest.raises(BoundsError, match=r"stride\(dst, 1\) == 1"):
        @proc
        def strided(A: i8[16, 16] @ DRAM):
            s: i8[16, 16, 16] @ GEMM_SCRATCH
            config_ld(stride(A, 0))
            ld_i8(16, 16, A, s[0:16, 0:16, 0])


@proc
def copy_tiles(n: size, A: i8[n, 16, 16] @ DRAM, B: i8[n, 16, 16] @ DRAM):
    config_ld(stride(A, 1))
    config_st(stride(B, 1), False)
    for t in par(0, n):
        s: i8[16, 16] @ GEMM_SCRATCH
        ld_i8(16, 16, A[t, 0:16, 0:16], s)
        st_i8(16, 16, s, B[t, 0:16, 0:16])


def test_instruction_count_is_exact_in_par_loops():
    """The threads of a par loop issue instructions concurrently: the
    counters are atomic (a plain ++ lost half the counts on 2 threads)."""
    n = 20000
    A = np.random.default_rng(0).integers(-128, 128, (n, 16, 16)).astype(
        np.int8)
    B = np.zeros_like(A)
    f = copy_tiles.compile()
    reset_instr_count(f)
    f(n=n, A=A, B=B)
    assert np.array_equal(A, B)
    assert instr_count(f) == 2 * n + 2 and config_count(f) == 2
