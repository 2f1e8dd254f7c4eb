"""The AMX library: every tile instruction against its body on edge values,
through the emulation everywhere and natively where the CPU has AMX; the
tile configuration as config state (checked preconditions, ldtilecfg
semantics); the memory's shape checks; the int8 GEMM app (bit-exact, one
ldtilecfg per call)."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from exo_hl import (DRAM, MemGenError, SchedulingError, bf16, f32, i8, i32,
                    index, proc, seq, size, ui8)
from exo_hl.codegen_c.host_cpu import host_features
from exo_hl.core_ir.paths import InvalidCursorError
from exo_hl.hw_libs import amx
from exo_hl.hw_libs.amx import (AMX_TILE0, AMX_TILE1, AMX_TILE2, AMX_TILE4,
                                AMX_TILE6, AmxConfig, ldtilecfg)

NATIVE = host_features({"amx-tile", "amx-int8"}) == {"amx-tile", "amx-int8"}
MODES = ["emulated"] + (["native"] if NATIVE else [])


def _compile(p, mode, monkeypatch):
    if mode == "emulated":
        # pretend to be a CPU without AMX, so the tile intrinsics run through
        # the emulation layer even on an AMX machine
        monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
        f = p.compile(emulate=True)
        assert "amx-tile" in f.emulated
        return f
    return p.compile(emulate=False)


I32_EDGES = np.array([0, 1, -1, 2**31 - 1, -2**31, 2**31 - 2, -2**31 + 1,
                      65535, -65536, 12345678], np.int64)
U8_EDGES = np.array([0, 1, 2, 127, 128, 254, 255], np.int64)
S8_EDGES = np.array([0, 1, -1, 127, -128, -127, 64], np.int64)


def _edge_fill(shape, edges, seed):
    rng = np.random.default_rng(seed)
    return rng.choice(edges, size=shape)


# ---------------------------------------------------------------------------
# tdpbusd / tdpbssd on full tiles, with loads and stores of every kind

ld_c = amx.tile_load(0, 'i32', (16, 16))
st_c = amx.tile_store(0, 'i32', (16, 16))
ld_a = amx.tile_load(4, 'ui8', (16, 64))
ld_as = amx.tile_load(4, 'i8', (16, 64))
ld_b = amx.tile_load(6, 'i8', (16, 16, 4))
dp_us = amx.tdpbusd(0, 4, 6)
dp_ss = amx.tdpbssd(0, 4, 6)


@proc
def dpbusd_full(A: ui8[16, 64] @ DRAM, B: i8[16, 16, 4] @ DRAM,
                C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    a: ui8[16, 64] @ AMX_TILE4
    ld_a(a, A)
    b: i8[16, 16, 4] @ AMX_TILE6
    ld_b(b, B)
    dp_us(c, a, b)
    st_c(C, c)


@proc
def dpbssd_full(A: i8[16, 64] @ DRAM, B: i8[16, 16, 4] @ DRAM,
                C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    a: i8[16, 64] @ AMX_TILE4
    ld_as(a, A)
    b: i8[16, 16, 4] @ AMX_TILE6
    ld_b(b, B)
    dp_ss(c, a, b)
    st_c(C, c)


def _dp_ref(A, B, C):
    a = A.astype(np.int64).reshape(16, 16, 4)
    b = B.astype(np.int64)
    return ((C.astype(np.int64) + np.einsum('mkr,knr->mn', a, b) + 2**31)
            % 2**32 - 2**31).astype(np.int32)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("signed_a", [False, True])
def test_tdpb_edge_values(mode, signed_a, monkeypatch):
    """Byte extremes (0, 255, -128, 127...) in both operands, accumulators
    at the i32 limits (the sums wrap): compiled == interpreted body ==
    numpy."""
    p = dpbssd_full if signed_a else dpbusd_full
    f = _compile(p, mode, monkeypatch)
    for seed in range(2):
        A = _edge_fill((16, 64), S8_EDGES if signed_a else U8_EDGES, seed)
        A = A.astype(np.int8 if signed_a else np.uint8)
        B = _edge_fill((16, 16, 4), S8_EDGES, seed + 10).astype(np.int8)
        C = _edge_fill((16, 16), I32_EDGES, seed + 20).astype(np.int32)
        ref = _dp_ref(A, B, C)
        got = C.copy()
        f(A, B, got)
        assert np.array_equal(got, ref)
        if seed == 0 and mode == MODES[0]:
            # the bodies, once (slow: 65,536 products in Python); native
            # runs are held to numpy, which the bodies equal
            body = C.copy()
            p.interpret(A, B, body)
            assert np.array_equal(body, ref)


# ---------------------------------------------------------------------------
# partial tiles: the configuration's rows and bytes per row decide the
# shapes (3 x 5 i32 accumulator, 3 x 8 bytes of A, 2 quads x 5 x 4 of B)

ld_pc = amx.tile_load(1, 'i32', (3, 5))
st_pc = amx.tile_store(1, 'i32', (3, 5))
ld_pa = amx.tile_load(2, 'ui8', (3, 8))
ld_pb = amx.tile_load(0, 'i8', (2, 5, 4))
zero_pc = amx.tile_zero(1, 'i32', (3, 5))
dp_p = amx.tdpbusd(1, 2, 0, m=3, n=5, k=2)


@proc
def dpbusd_partial(A: ui8[3, 10] @ DRAM, B: i8[2, 6, 4] @ DRAM,
                   C: i32[3, 5] @ DRAM, Z: i32[3, 5] @ DRAM):
    ldtilecfg(2, 3, 3, 0, 0, 0, 0, 0, 20, 20, 8, 0, 0, 0, 0, 0)
    b: i8[2, 5, 4] @ AMX_TILE0
    ld_pb(b, B[0:2, 0:5, 0:4])
    c: i32[3, 5] @ AMX_TILE1
    ld_pc(c, C)
    a: ui8[3, 8] @ AMX_TILE2
    ld_pa(a, A[0:3, 1:9])
    dp_p(c, a, b)
    st_pc(C, c)
    zero_pc(c)
    st_pc(Z, c)


@pytest.mark.parametrize("mode", MODES)
def test_partial_tiles_and_zero(mode, monkeypatch):
    """Rows and bytes per row below the maximum, sources with a row stride
    other than the tile's (a window of a wider array), tilezero."""
    f = _compile(dpbusd_partial, mode, monkeypatch)
    A = _edge_fill((3, 10), U8_EDGES, 1).astype(np.uint8)
    B = _edge_fill((2, 6, 4), S8_EDGES, 2).astype(np.int8)
    C = _edge_fill((3, 5), I32_EDGES, 3).astype(np.int32)
    Z = np.full((3, 5), 7, np.int32)
    a = A[:, 1:9].astype(np.int64).reshape(3, 2, 4)
    b = B[:, :5].astype(np.int64)
    ref = ((C + np.einsum('mkr,knr->mn', a, b) + 2**31) % 2**32
           - 2**31).astype(np.int32)
    outs = []
    for run in (f, dpbusd_partial.interpret):
        c, z = C.copy(), Z.copy()
        run(A, B, c, z)
        outs.append((c, z))
    for c, z in outs:
        assert np.array_equal(c, ref)
        assert not z.any()


# ---------------------------------------------------------------------------
# ldtilecfg: re-issuing the same configuration keeps the tiles (the helper
# skips it); the configuration is what the tile instructions assert

@proc
def same_config_twice(C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    st_c(C, c)


@pytest.mark.parametrize("mode", MODES)
def test_same_config_keeps_tiles(mode, monkeypatch):
    f = _compile(same_config_twice, mode, monkeypatch)
    C = _edge_fill((16, 16), I32_EDGES, 5).astype(np.int32)
    got = C.copy()
    f(got)
    assert np.array_equal(got, C)


def test_tile_instructions_need_their_configuration():
    """A tile load whose tile the configuration shapes otherwise, or that
    no configuration precedes, is refused where it is written (@proc
    checks every call's preconditions) and by replace."""
    with pytest.raises(Exception, match="AmxConfig|precondition"):
        @proc
        def wrong_rows(C: i32[16, 16] @ DRAM):
            ldtilecfg(8, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
            c: i32[16, 16] @ AMX_TILE0
            ld_c(c, C)

    with pytest.raises(Exception, match="AmxConfig|precondition"):
        @proc
        def no_config(C: i32[16, 16] @ DRAM):
            c: i32[16, 16] @ AMX_TILE0
            ld_c(c, C)


def test_replace_refuses_unconfigured_load():
    @proc
    def copy_in(C: i32[16, 16] @ DRAM):
        c: i32[16, 16] @ DRAM
        for i in seq(0, 16):
            for j in seq(0, 16):
                c[i, j] = C[i, j]
    p = copy_in.set_memory('c', AMX_TILE0)
    with pytest.raises(SchedulingError):
        p.replace(p.find_loop('i'), ld_c)
    # configured, but tile 0 as 8 rows: still refused
    q = amx.configure_tiles(p, p.find_loop('i'), {0: (8, 64)})
    with pytest.raises(SchedulingError):
        q.replace(q.find_loop('i'), ld_c)
    # configured as 16 x 64 bytes: accepted
    q = amx.configure_tiles(p, p.find_loop('i'), {0: (16, 64)})
    q = q.replace(q.find_loop('i'), ld_c)
    assert "tileloadd_t0_i32_16x16" in str(q)


def test_tile_memory_checks_shape():
    """A tile is at most 16 rows x 64 bytes: the allocation refuses more."""
    with pytest.raises(MemGenError, match="at most 16 rows x 64 bytes"):
        AMX_TILE1.alloc("t", "int32_t", [_C(16), _C(17)], "here")
    with pytest.raises(MemGenError, match="at most 16 rows x 64 bytes"):
        AMX_TILE1.alloc("t", "uint8_t", [_C(17), _C(64)], "here")
    with pytest.raises(MemGenError, match="constant shape"):
        AMX_TILE1.alloc("t", "uint8_t", [_C(16)], "here")
    assert "tmm1" in AMX_TILE1.alloc("t", "int8_t", [_C(16), _C(16), _C(4)],
                                     "here")


def _C(v):
    from exo_hl.core_ir.memory import CExpr
    return CExpr.constant(v)


def test_factories_refuse_bad_tiles():
    with pytest.raises(ValueError):
        amx.tdpbusd(0, 0, 1)
    with pytest.raises(ValueError):
        amx.tile_load(0, 'i32', (16, 17))
    with pytest.raises(ValueError):
        amx.tile_load(0, 'f64', (16, 8))
    with pytest.raises(ValueError, match="0..7"):
        amx.tile_store(8, 'i32', (16, 16))
    # a list is a shape too, and the same instruction is made once
    assert amx.tile_load(0, 'i32', [16, 16]) is amx.tile_load(0, 'i32',
                                                               (16, 16))
    assert amx.AMX_TILE[3] is amx.AMX_TILE3


# ---------------------------------------------------------------------------
# the GEMM apps (int8 and bf16)

@pytest.fixture(scope="module")
def kernels():
    from apps.gemm_amx.schedule import gemm_bf16, gemm_u8s8, schedule
    return {"int8": schedule(gemm_u8s8), "bf16": schedule(gemm_bf16)}


@pytest.mark.parametrize("kind", ["int8", "bf16"])
def test_gemm_one_ldtilecfg_per_call(kernels, kind):
    """configwrite_at put the configuration before the first tile load,
    inside three loops; the hoisting proofs moved it out of all of them:
    it is the one ldtilecfg, a top-level statement, issued once per call
    (and once in the C function, before any loop)."""
    k = kernels[kind]
    calls = k.find('ldtilecfg(_)', many=True)
    assert len(calls) == 1
    with pytest.raises(InvalidCursorError, match="top-level"):
        calls[0].parent()
    c = k.c_code_str()
    body = c[c.rindex(f"{k.name()}({k.name()}_Context"):]
    assert body.count("exo_hl_amx_ldtilecfg(") == 1
    assert body.index("exo_hl_amx_ldtilecfg(") < body.index("_tile_loadd")


def _bf16_gemm_ref(a, b, C):
    """The bf16 algorithm's order in numpy: per 32-deep step, even and odd
    elements of the pairs in two f32 sums, then C += even + odd."""
    ref = C.copy()
    K = a.shape[1]
    for kt in range(K // 32):
        ev = np.zeros(C.shape, np.float32)
        od = np.zeros(C.shape, np.float32)
        for kp in range(16):
            k0 = 32 * kt + 2 * kp
            ev = ev + np.outer(a[:, k0], b[k0, :]).astype(np.float32)
            od = od + np.outer(a[:, k0 + 1], b[k0 + 1, :]).astype(np.float32)
        ref = ref + (ev + od)
    return ref


def _gemm_case(kind, M, N, K, seed):
    """Random operands of an int8 (u8 x s8 -> s32, wrapping) or bf16 GEMM
    and the exact result C + A @ B."""
    rng = np.random.default_rng(seed)
    if kind == "int8":
        A = rng.integers(0, 256, (M, K), dtype=np.uint8)
        B = rng.integers(-128, 128, (K, N), dtype=np.int8)
        C = rng.integers(-2**31, 2**31, (M, N),
                         dtype=np.int64).astype(np.int32)
        ref = ((C.astype(np.int64) + A.astype(np.int64) @ B.astype(np.int64)
                + 2**31) % 2**32 - 2**31).astype(np.int32)
    else:
        A = _bf16_bits(rng.standard_normal((M, K)))
        B = _bf16_bits(rng.standard_normal((K, N)))
        C = rng.standard_normal((M, N)).astype(np.float32)
        ref = _bf16_gemm_ref(_bf16_vals(A), _bf16_vals(B), C)
    return A, B, C, ref


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["int8", "bf16"])
def test_gemm_bit_exact(kernels, kind, mode, monkeypatch):
    f = _compile(kernels[kind], mode, monkeypatch)
    M, N, K = 64, 256, 128
    A, B, C, ref = _gemm_case(kind, M, N, K, seed=7)
    got = C.copy()
    f(M, N, K, A, B, got)
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("kind", ["int8", "bf16"])
def test_gemm_interpreted_bit_exact(kernels, kind):
    """The scheduled kernel itself through interpret() (tile instructions
    by their bodies), on the smallest shape the preconditions allow: one
    column block of NC = 256, one 32-row block, one or two K steps."""
    M, N, K = 32, 256, 64 if kind == "int8" else 32
    A, B, C, ref = _gemm_case(kind, M, N, K, seed=9)
    got = C.copy()
    kernels[kind].interpret(M, N, K, A, B, got)
    assert np.array_equal(got, ref)


def test_gemm_two_threads_bit_exact(kernels, monkeypatch):
    """The kernel whose column blocks are a par loop, on two threads: the
    one ldtilecfg of the call stays before the loops, and each iteration
    loads that configuration into its thread's tile unit (AmxConfig is
    per-thread state); two column blocks, one per thread. Emulated: the
    emulation aborts on a thread whose tiles are not configured (the bf16
    kernel shares the schedule; bench.py checks it against MKL)."""
    from apps.common.blas_env import openmp_threads, set_openmp_threads
    from apps.gemm_amx.schedule import gemm_u8s8, schedule
    kind, mode = "int8", "emulated"
    k = schedule(gemm_u8s8, threads=True)   # shares the fixture's stages
    text = str(k)
    assert "for jc in par(0, N / 256):" in text
    assert len(k.find('ldtilecfg(_)', many=True)) == 1
    f = _compile(k, mode, monkeypatch)
    M, N, K = 64, 512, 128
    A, B, C, ref = _gemm_case(kind, M, N, K, seed=8)
    got = C.copy()
    before = openmp_threads()
    try:
        assert set_openmp_threads(2)
        f(M, N, K, A, B, got)
    finally:
        set_openmp_threads(before or 1)
    assert np.array_equal(got, ref)


@pytest.fixture(scope="module")
def mtail():
    from apps.gemm_amx.schedule import gemm_u8s8_mtail, schedule, stages
    return schedule(gemm_u8s8_mtail), dict(stages(gemm_u8s8_mtail))


@pytest.mark.parametrize("mode", MODES)
def test_gemm_m_tail_bit_exact(mtail, mode, monkeypatch):
    """gemm_u8s8_mtail takes any M: the full 32-row blocks on AMX, the
    last M % 32 rows on vpdpbusd from the same packed B, one ldtilecfg;
    exact on edge shapes (tail only, one row, both parts, no tail)."""
    k, _ = mtail
    text = str(k)
    assert "for io in seq(M / 32, (M + 31) / 32):" in text
    assert "if 32 * io + 16 * ih + ii < M:" in text
    assert text.count("mm512_dpbusd_bcst_epi32(") == 16
    assert text.count("tdpbusd_") == 4
    assert len(k.find('ldtilecfg(_)', many=True)) == 1
    f = _compile(k, mode, monkeypatch)
    for M, N, K, seed in ((1, 256, 64, 1), (31, 256, 64, 2),
                          (33, 512, 128, 3), (64, 256, 64, 4)):
        A, B, C, ref = _gemm_case("int8", M, N, K, seed)
        got = C.copy()
        f(M, N, K, A, B, got)
        assert np.array_equal(got, ref), (M, N, K)


def test_gemm_m_tail_interpreted_and_two_threads(mtail, monkeypatch):
    """interpret() of the tail kernel (17 rows: the tail path only), and
    the threaded kernel (a Bp slot per column block) on two threads."""
    from apps.common.blas_env import openmp_threads, set_openmp_threads
    from apps.gemm_amx.schedule import gemm_u8s8_mtail, schedule
    k, _ = mtail
    A, B, C, ref = _gemm_case("int8", 17, 256, 64, seed=5)
    got = C.copy()
    k.interpret(17, 256, 64, A, B, got)
    assert np.array_equal(got, ref)
    kp = schedule(gemm_u8s8_mtail, threads=True)
    assert "for jc in par(0, N / 256):" in str(kp)
    f = _compile(kp, "emulated", monkeypatch)
    A, B, C, ref = _gemm_case("int8", 45, 512, 64, seed=6)
    got = C.copy()
    before = openmp_threads()
    try:
        assert set_openmp_threads(2)
        f(45, 512, 64, A, B, got)
    finally:
        set_openmp_threads(before or 1)
    assert np.array_equal(got, ref)


def test_gemm_m_tail_keeps_the_partial_blocks_guard(mtail):
    """After the cut, the full blocks' guards were proven true and
    removed; the partial block's guard is not provably true, so removing
    it is refused."""
    _, st = mtail
    p = st["the full 32-row blocks cut from the partial one"]
    guards = p.find('if _: _', many=True)
    assert len(guards) == 1
    assert str(p.find_loop('io #1')).endswith(
        "for io in seq(M / 32, (M + 31) / 32): ...>")
    assert "if 16 * ih + ii + 32 * io < M:" in str(p)
    with pytest.raises(SchedulingError):
        p.eliminate_dead_code(guards[0])


@pytest.fixture(scope="module")
def bf16_mtail():
    from apps.gemm_amx.schedule import gemm_bf16_mtail, schedule
    return schedule(gemm_bf16_mtail)


@pytest.mark.parametrize("mode", MODES)
def test_gemm_bf16_m_tail_bit_exact(bf16_mtail, mode, monkeypatch):
    """gemm_bf16_mtail takes any M: the full 32-row blocks on AMX, the
    last M % 32 rows on AVX-512F from the same packed B in the
    algorithm's order (per 32-deep step an even and an odd sum, a multiply
    and an add per term, then C += even + odd), one ldtilecfg; exact
    with the algorithm's order on edge shapes (tail only, one row, both
    parts, no tail)."""
    k = bf16_mtail
    text = str(k)
    assert "for io in seq(M / 32, (M + 31) / 32):" in text
    assert "if 32 * io + 16 * ih + ii < M:" in text
    assert text.count("mm512_mul_add_bf16_even_bcst_ps(") == 16
    assert text.count("mm512_mul_add_bf16_odd_bcst_ps(") == 16
    assert text.count("tdpbf16ps_") == 4
    assert "dpbf16_bcst" not in text        # vdpbf16ps: another order
    assert len(k.find('ldtilecfg(_)', many=True)) == 1
    f = _compile(k, mode, monkeypatch)
    for M, N, K, seed in ((1, 256, 32, 21), (31, 256, 64, 22),
                          (33, 512, 64, 23), (64, 256, 32, 24)):
        A, B, C, ref = _gemm_case("bf16", M, N, K, seed)
        got = C.copy()
        f(M, N, K, A, B, got)
        assert np.array_equal(got, ref), (M, N, K)


def test_gemm_bf16_m_tail_interpreted(bf16_mtail):
    """interpret() of the bf16 tail kernel (17 rows: the tail path only),
    bit-exact with the algorithm's order. (Its threaded form is the int8
    one's parallelization, tested above on two threads.)"""
    A, B, C, ref = _gemm_case("bf16", 17, 256, 32, seed=25)
    got = C.copy()
    bf16_mtail.interpret(17, 256, 32, A, B, got)
    assert np.array_equal(got, ref)


def test_gemm_bf16_n_tail_bit_exact(monkeypatch):
    """gemm_bf16_ntail takes any M and N % 32 == 0: the int8 N-tail
    construction on the bf16 window algorithm (sized by its K steps, so
    that replace can infer it); exact with the algorithm's order on edge
    shapes (tail columns only, both parts, M tails in both), and through
    interpret()."""
    from apps.gemm_amx.schedule import gemm_bf16_ntail, schedule
    k = schedule(gemm_bf16_ntail)
    text = str(k)
    assert "if N / 256 > 0:" in text and "if N % 256 > 0:" in text
    assert "gemm_bf16_w32_amx(M, N - 256 * (N / 256), K / 32," in text
    f = _compile(k, "native" if NATIVE else "emulated", monkeypatch)
    for M, N, K, seed in ((1, 32, 32, 31), (33, 288, 64, 32),
                          (17, 480, 32, 33)):
        A, B, C, ref = _gemm_case("bf16", M, N, K, seed)
        got = C.copy()
        f(M, N, K, A, B, got)
        assert np.array_equal(got, ref), (M, N, K)
    A, B, C, ref = _gemm_case("bf16", 17, 288, 32, seed=34)
    got = C.copy()
    k.interpret(17, 288, 32, A, B, got)
    assert np.array_equal(got, ref)


@pytest.fixture(scope="module")
def ntail():
    from apps.gemm_amx.schedule import gemm_u8s8_ntail, schedule
    return schedule(gemm_u8s8_ntail)


@pytest.mark.parametrize("mode", MODES)
def test_gemm_n_tail_bit_exact(ntail, mode, monkeypatch):
    """gemm_u8s8_ntail takes any M and N % 32 == 0: the full 256-column
    blocks and the last N % 256 columns (blocks of 32) are two calls of
    the any-M kernel on windows, each guarded by its being non-empty;
    exact on edge shapes (tail columns only, one tail block, both parts,
    the widest tail, no tail; M tails in both)."""
    text = str(ntail)
    assert "if N / 256 > 0:" in text and "if N % 256 > 0:" in text
    assert ("gemm_u8s8_w32_amx(M, N - 256 * (N / 256), K, A[0:M, 0:K],"
            in text)
    f = _compile(ntail, mode, monkeypatch)
    for M, N, K, seed in ((1, 32, 64, 11), (33, 288, 128, 12),
                          (17, 480, 64, 13), (64, 224, 64, 14),
                          (40, 512, 64, 15)):
        A, B, C, ref = _gemm_case("int8", M, N, K, seed)
        got = C.copy()
        f(M, N, K, A, B, got)
        assert np.array_equal(got, ref), (M, N, K)


def test_gemm_n_tail_interpreted_two_threads_and_refusals(ntail,
                                                          monkeypatch):
    """interpret() of the N-tail kernel; its threaded form on two
    threads (both calls' column blocks par loops); a part not guarded by
    its being non-empty is refused (a size argument must be positive),
    and so is a guard on N % 256 around the full blocks."""
    from apps.common.blas_env import openmp_threads, set_openmp_threads
    from apps.gemm_amx.schedule import (_mtail_stages, _window_gemm,
                                        gemm_u8s8_ntail, schedule, stages)
    A, B, C, ref = _gemm_case("int8", 17, 288, 64, seed=16)
    got = C.copy()
    ntail.interpret(17, 288, 64, A, B, got)
    assert np.array_equal(got, ref)
    kp = schedule(gemm_u8s8_ntail, threads=True)
    assert "gemm_u8s8_w32_amx_par(M, N - 256 * (N / 256)" in str(kp)
    assert "for jc in par(0, N / 32):" in str(
        _mtail_stages(True, 32, _window_gemm(32))[-1][1])
    f = _compile(kp, "emulated", monkeypatch)
    A, B, C, ref = _gemm_case("int8", 45, 800, 64, seed=17)
    got = C.copy()
    before = openmp_threads()
    try:
        assert set_openmp_threads(2)
        f(45, 800, 64, A, B, got)
    finally:
        set_openmp_threads(before or 1)
    assert np.array_equal(got, ref)
    cut = dict(stages(gemm_u8s8_ntail))[
        "the columns cut at the last full column block"]
    with pytest.raises(SchedulingError, match="positive"):
        cut.replace(cut.find_loop('i'), _window_gemm(256))
    bad = cut.add_guard(cut.find_loop('i'), 'N % 256 > 0')
    with pytest.raises(SchedulingError):
        bad.eliminate_dead_code(bad.find_loop('j #1'))


def _bf16_vals(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# ---------------------------------------------------------------------------
# tdpbf16ps: bf16 pairs into f32, in the hardware's order

ld_fc = amx.tile_load(0, 'f32', (16, 16))
st_fc = amx.tile_store(0, 'f32', (16, 16))
ld_ha = amx.tile_load(4, 'bf16', (16, 32))
ld_hb = amx.tile_load(6, 'bf16', (16, 16, 2))
dp_bf = amx.tdpbf16ps(0, 4, 6)


@proc
def dpbf16_full(A: bf16[16, 32] @ DRAM, B: bf16[16, 16, 2] @ DRAM,
                C: f32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: f32[16, 16] @ AMX_TILE0
    ld_fc(c, C)
    a: bf16[16, 32] @ AMX_TILE4
    ld_ha(a, A)
    b: bf16[16, 16, 2] @ AMX_TILE6
    ld_hb(b, B)
    dp_bf(c, a, b)
    st_fc(C, c)


def _bf16_bits(x):
    """f32 values that are bf16 already -> their bf16 bits."""
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


#: bf16 values whose pairwise products are normal, zero, inf or NaN (the
#: hardware flushes denormals to zero, the body does not: docs/hw_amx.md)
BF16_EDGES = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -1.5, 1e30,
                       -1e30, 2.0 ** 24, -(2.0 ** 24), np.inf, -np.inf,
                       np.nan, 1e-10, 7.0], np.float32)
F32_ACC_EDGES = np.array([0.0, -0.0, 1.0, 16777216.0, -16777216.0, 3.4e38,
                          -3.4e38, np.inf, 0.1, -2.5], np.float32)


#: the interpreted body's outputs per case, shared by the modes
_BF16_BODY = {}


@pytest.mark.parametrize("mode", MODES)
def test_tdpbf16ps_edge_values(mode, monkeypatch):
    """Zeros of both signs, inf, NaN, overflowing and cancelling sums
    (2**24 + 1 - 2**24 tells the summation orders apart): compiled ==
    interpreted body, bit for bit (NaNs equal to NaNs); and random normal
    values (every order differs from the body's somewhere on these)."""
    f = _compile(dpbf16_full, mode, monkeypatch)
    rng = np.random.default_rng(3)
    cases = []
    for seed in range(2):
        r = np.random.default_rng(seed)
        cases.append((r.choice(BF16_EDGES, (16, 32)),
                      r.choice(BF16_EDGES, (16, 16, 2)),
                      r.choice(F32_ACC_EDGES, (16, 16))))
    scale = rng.choice(np.float32([1, 1e3, 1e-3]), (16, 32))
    cases.append((rng.standard_normal((16, 32)).astype(np.float32) * scale,
                  rng.standard_normal((16, 16, 2)).astype(np.float32),
                  rng.standard_normal((16, 16)).astype(np.float32)))
    for i, (A, B, C) in enumerate(cases):
        A, B = _bf16_bits(A), _bf16_bits(B)
        got = C.astype(np.float32)
        f(A, B, got)
        if i not in _BF16_BODY:   # the body once per case (slow)
            body = C.astype(np.float32)
            dpbf16_full.interpret(A, B, body)
            _BF16_BODY[i] = body
        body = _BF16_BODY[i]
        same = (got.view(np.uint32) == body.view(np.uint32)) | (
            np.isnan(got) & np.isnan(body))
        assert same.all(), np.argwhere(~same)[:4]


def test_emulation_layer_edit_changes_build_key(tmp_path, monkeypatch):
    """The build cache hashes the generated C and the flags, not the
    emulation layer's headers: their digest is in the flags, so an edited
    layer is never served from a build of the old one."""
    from exo_hl.codegen_c import host_cpu
    layer = tmp_path / "layer"
    layer.mkdir()
    for name in os.listdir(host_cpu._EMULATION_DIR):
        src = os.path.join(host_cpu._EMULATION_DIR, name)
        if os.path.isfile(src):
            shutil.copy(src, layer / name)
    monkeypatch.setattr(host_cpu, "_EMULATION_DIR", str(layer))
    before = host_cpu.emulation_flags({"amx-tile"})
    with open(layer / "exo_hl_amx_emulation.h", "a") as f:
        f.write("/* edited */\n")
    after = host_cpu.emulation_flags({"amx-tile"})
    assert before != after


def test_dispatch_prefers_amx_then_avx512():
    from apps.gemm_amx.dispatch import choose
    amx8 = {"amx-tile", "amx-int8", "amx-bf16", "avx512f", "avx512vnni",
            "avx512bf16"}
    assert choose("u8s8", amx8)[0] == "amx-int8"
    assert choose("bf16", amx8)[0] == "amx-bf16"
    assert choose("u8s8", {"avx512f", "avx512vnni"})[0] == "avx512-vnni"
    assert choose("bf16", {"amx-tile", "amx-int8", "avx512f",
                           "avx512bf16"})[0] == "avx512-bf16"
    with pytest.raises(RuntimeError, match="no bf16 GEMM kernel"):
        choose("bf16", {"avx2", "fma"})
    # the int8 AMX kernel takes any M; its tail rows run on AVX-512 VNNI
    label, build = choose("u8s8", amx8)
    assert build(False).name() == "gemm_u8s8_ntail_amx"
    assert build(True).name() == "gemm_u8s8_ntail_amx_par"
    # shapes the AMX kernels do not take go to AVX-512
    assert choose("u8s8", amx8, shape=(33, 288, 64))[0] == "amx-int8"
    assert choose("u8s8", amx8, shape=(32, 272, 64))[0] == "avx512-vnni"
    assert choose("u8s8", amx8, shape=(32, 256, 96))[0] == "avx512-vnni"
    assert choose("bf16", amx8, shape=(64, 256, 32))[0] == "amx-bf16"
    assert choose("bf16", amx8, shape=(64, 272, 32))[0] == "avx512-bf16"
    # the bf16 AMX kernel takes any M and N % 32 too; its tail rows run on
    # AVX-512F
    assert choose("bf16", amx8, shape=(33, 256, 32))[0] == "amx-bf16"
    assert choose("bf16", amx8, shape=(1, 512, 64))[0] == "amx-bf16"
    assert choose("bf16", amx8, shape=(33, 256, 48))[0] == "avx512-bf16"
    label, build = choose("bf16", amx8, shape=(33, 288, 32))
    assert label == "amx-bf16"
    assert build(False).name() == "gemm_bf16_ntail_amx"
    with pytest.raises(RuntimeError, match="no bf16 GEMM kernel"):
        choose("bf16", {"amx-tile", "amx-bf16", "avx512bf16"})
    with pytest.raises(RuntimeError, match="no u8s8 GEMM kernel"):
        choose("u8s8", {"amx-tile", "amx-int8"})


# the IR does not model that a real configuration change zeroes the tiles,
# nor that two buffers in one tile register are the same tile: C generation
# refuses a schedule that relies on either (codegen_c/memory_rules.py)

@proc
def tile_across_config_change(C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    ldtilecfg(8, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    st_c(C, c)


@proc
def tile_across_config_in_loop(n: size, C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    for i in seq(0, n):
        # the same values each time, but a loop's writes are not tracked
        ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    st_c(C, c)


@proc
def configure_again(x: size):
    assert x == 16
    ldtilecfg(x, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)


@proc
def tile_across_called_config(C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    configure_again(16)
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    st_c(C, c)


@proc
def tile_across_config_after_plain_write(C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    # plain writes change the IR's configuration, not the loaded one: the
    # ldtilecfg below writes what the IR holds, yet changes the hardware's
    AmxConfig.rows1 = 8
    AmxConfig.colsb1 = 64
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    ldtilecfg(16, 8, 0, 0, 16, 0, 16, 0, 64, 64, 0, 0, 64, 0, 64, 0)
    st_c(C, c)


@pytest.mark.parametrize("p", [tile_across_config_change,
                               tile_across_config_in_loop,
                               tile_across_called_config,
                               tile_across_config_after_plain_write])
def test_tile_live_across_config_change_is_refused(p, monkeypatch):
    """Every precondition holds where it is checked, but the tile would be
    zeroed (natively; the emulation would abort): C generation refuses."""
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    with pytest.raises(MemGenError, match=r"writes AmxConfig .* while "
                       r"buffer 'c' in AMX_TILE0 is live"):
        p.compile(emulate=True)


@proc
def two_buffers_one_tile(C: i32[16, 16] @ DRAM, D: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    d: i32[16, 16] @ AMX_TILE0
    ld_c(d, D)
    st_c(C, c)


@proc
def load_store_tile0(D: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    d: i32[16, 16] @ AMX_TILE0
    ld_c(d, D)
    st_c(D, d)


@proc
def tile_live_across_tile_callee(C: i32[16, 16] @ DRAM,
                                 D: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    load_store_tile0(D)
    st_c(C, c)


@pytest.mark.parametrize("p, msg", [
    (two_buffers_one_tile, "allocates 'd' while buffer 'c'"),
    (tile_live_across_tile_callee, "calls 'load_store_tile0', which "
     "allocates in AMX_TILE0 while buffer 'c'")])
def test_two_live_buffers_in_one_tile_are_refused(p, msg, monkeypatch):
    """Two buffers in tile register 0 live at once would both be tmm0 (the
    second load overwrites the first: C = D natively): refused."""
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    with pytest.raises(MemGenError, match=msg):
        p.compile(emulate=True)


@proc
def tiles_in_sequence(C: i32[16, 16] @ DRAM, D: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    for i in seq(0, 2):
        c: i32[16, 16] @ AMX_TILE0
        ld_c(c, C)
        st_c(D, c)
    load_store_tile0(D)
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    load_store_tile0(C)


@pytest.mark.parametrize("mode", MODES)
def test_tiles_in_sequence_are_accepted(mode, monkeypatch):
    """Buffers of one tile whose lifetimes do not overlap, and a
    configuration between them, are fine."""
    f = _compile(tiles_in_sequence, mode, monkeypatch)
    C = _edge_fill((16, 16), I32_EDGES, 7).astype(np.int32)
    D = np.zeros_like(C)
    f(C, D)
    assert np.array_equal(D, C)


def test_refused_tile_permission_is_a_clear_error(monkeypatch):
    """When Linux refuses the AMX tile state, a native AMX callable raises
    before running any C (the request itself is made once per process)."""
    from exo_hl.codegen_c import host_cpu
    assert host_cpu._amx_permission() == "" or not NATIVE
    monkeypatch.setattr(host_cpu, "_amx_permission",
                        lambda: "the Linux kernel refused the AMX tile state")
    with pytest.raises(RuntimeError, match="refused the AMX tile state"):
        host_cpu.check_host("k", {"amx-tile", "amx-int8"}, frozenset())
    # emulated: no request, no error
    host_cpu.check_host("k", {"amx-tile"}, frozenset(), {"amx-tile"})


# ---------------------------------------------------------------------------
# AmxConfig is per-thread state: par loops that use tiles


@proc
def tiles_per_row_block(n: size, A: ui8[n, 16, 64] @ DRAM,
                        B: i8[16, 16, 4] @ DRAM, C: i32[n, 16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    for i in seq(0, n):
        c: i32[16, 16] @ AMX_TILE0
        ld_c(c, C[i, 0:16, 0:16])
        a: ui8[16, 64] @ AMX_TILE4
        ld_a(a, A[i, 0:16, 0:64])
        b: i8[16, 16, 4] @ AMX_TILE6
        ld_b(b, B)
        dp_us(c, a, b)
        st_c(C[i, 0:16, 0:16], c)


@pytest.mark.parametrize("mode", MODES)
def test_par_loop_of_tiles_configures_every_thread(mode, monkeypatch):
    """The configuration is written once, before the loop; the iterations
    only read it, so ``parallelize`` proves them race-free. The hardware
    (and the emulation) keep the configuration per thread: another thread
    has none, and its first tile load faults (the emulation aborts). Each
    iteration therefore loads the loop's entry configuration into its
    thread's tile unit first (AmxConfig's thread_entry; a no-op where it
    is loaded already)."""
    from apps.common.blas_env import openmp_threads, set_openmp_threads
    p = tiles_per_row_block.parallelize('i')
    c = p.c_code_str()
    loop = c[c.index("for (int_fast32_t i = "):]
    assert loop.index("exo_hl_amx_ldtilecfg(") < loop.index("_tile_loadd")
    assert ", 1);" in loop[:loop.index("_tile_loadd")]   # as thread entry
    assert "ctxt->AmxConfig_rows0" in loop[:loop.index("_tile_loadd")]
    f = _compile(p, mode, monkeypatch)
    n = 8
    A = _edge_fill((n, 16, 64), U8_EDGES, 1).astype(np.uint8)
    B = _edge_fill((16, 16, 4), S8_EDGES, 2).astype(np.int8)
    C = _edge_fill((n, 16, 16), I32_EDGES, 3).astype(np.int32)
    want = np.stack([_dp_ref(A[i], B, C[i]) for i in range(n)])
    before = openmp_threads()
    try:
        assert set_openmp_threads(2)
        got = C.copy()
        f(n, A, B, got)
    finally:
        set_openmp_threads(before or 1)
    assert np.array_equal(got, want)


@proc
def configured_per_row_block(n: size, C: i32[n, 16, 16] @ DRAM):
    for i in seq(0, n):
        ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
        c: i32[16, 16] @ AMX_TILE0
        ld_c(c, C[i, 0:16, 0:16])
        st_c(C[i, 0:16, 0:16], c)


def test_par_loop_writing_the_configuration_is_refused():
    """An iteration that writes AmxConfig races with the others (config
    state is one location in the IR, whatever the hardware keeps)."""
    with pytest.raises(SchedulingError, match="not race-free"):
        configured_per_row_block.parallelize('i')


def test_shared_config_gets_no_thread_entry():
    """Only configs declared with ``thread_entry`` are re-established per
    iteration: a par loop reading ordinary config state emits nothing."""
    from exo_hl import config, index, par

    @config
    class Shared:
        k: index

    @proc
    def reads_shared(n: size, x: i32[n] @ DRAM):
        Shared.k = 3
        for i in par(0, n):
            if Shared.k == 3:
                x[i] = 1

    assert amx.AmxConfig.thread_entry is not None
    assert Shared.thread_entry is None
    with pytest.raises(TypeError, match="thread_entry"):
        config(thread_entry="ldtilecfg")
    c = reads_shared.c_code_str()
    loop = c[c.index("for (int_fast32_t i = "):]
    assert loop.index("if (ctxt->Shared_k == 3)") < 80   # nothing before
    x = np.zeros(4, np.int32)
    reads_shared.compile()(4, x)
    assert list(x) == [1] * 4


@proc
def tile_across_par(n: size, C: i32[16, 16] @ DRAM,
                    D: i32[n, 16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    for i in seq(0, n):
        st_c(D[i, 0:16, 0:16], c)


def test_tile_used_across_par_loop_is_refused(monkeypatch):
    """The iterations only read the tile, so they are race-free; but a
    tile is a register of the thread that loaded it, and another thread's
    iterations would store its own tmm0 (garbage): C generation refuses."""
    monkeypatch.setenv("EXO_HL_HOST_CPU", "avx2,fma")
    p = tile_across_par.parallelize('i')
    with pytest.raises(MemGenError, match=r"par loop's body uses buffer "
                       r"'c' in AMX_TILE0, allocated outside the loop"):
        p.compile(emulate=True)
    tile_across_par.compile(emulate=True)     # seq: fine


@proc
def configured_by_hand(C: i32[16, 16] @ DRAM, D: i32[16, 16] @ DRAM):
    AmxConfig.rows0 = 16
    AmxConfig.colsb0 = 64
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    st_c(D, c)


@proc
def set_rows_by_hand(r: index):
    assert 0 <= r and r <= 16
    AmxConfig.rows0 = r


@proc
def configured_in_callee(C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    set_rows_by_hand(16)
    load_store_tile0(C)


def test_a_hand_write_of_the_configuration_is_refused():
    """AmxConfig is per-thread hardware state: a plain write changes the
    IR's configuration, not the tile unit's, and the tile load after it
    ran on an unconfigured unit (was accepted; the emulation aborted the
    process with #UD). C generation refuses the write, also in a called
    procedure; interpret() still runs it; ldtilecfg compiles."""
    with pytest.raises(MemGenError, match=r"writes AmxConfig.rows0 by "
                       r"hand \(AmxConfig.rows0 = 16\): AmxConfig is "
                       r"per-thread hardware state"):
        configured_by_hand.c_code_str()
    with pytest.raises(MemGenError, match=r"in procedure 'set_rows_by_hand'"
                       r".*\(called from 'configured_in_callee'\)"):
        configured_in_callee.c_code_str()
    C = np.arange(256, dtype=np.int32).reshape(16, 16)
    D = np.zeros_like(C)
    configured_by_hand.interpret(C, D)
    assert np.array_equal(D, C)
    dpbusd_full.c_code_str()


def test_gemm_bench_help_prints(capsys):
    """apps/gemm_amx/bench.py --help printed nothing and raised: argparse
    formats help strings with %, and --n-extra's said 'R % 32'."""
    from apps.gemm_amx import bench
    with pytest.raises(SystemExit) as e:
        bench.main(["--help"])
    assert e.value.code == 0
    assert "--n-extra" in capsys.readouterr().out


def test_blocking_probe_variants():
    """apps/gemm_amx/probe_blocking.py (a benchmark script): its variant
    names map to the harness's arguments, a K-blocked order once per K
    block, and an unknown name or C mode is refused before anything is
    compiled or run."""
    from apps.gemm_amx import probe_blocking as pb
    specs = pb._specs(["kernel", "io-kc/C-L1", "blis"], [8, 16], [4])
    assert specs == [("kernel", "0:0:0"), ("io-kc=8/C-L1", "4:8:1"),
                     ("io-kc=16/C-L1", "4:16:1"),
                     ("blis kc=8 mc=128", f"9:{(4 << 8) | 8}:0"),
                     ("blis kc=16 mc=128", f"9:{(4 << 8) | 16}:0")]
    for bad in (["nope"], ["kernel/C-nowhere"], ["pipelined+Bt1"],
                ["kernel+Ct1"]):
        with pytest.raises(SystemExit, match="unknown variant"):
            pb._specs(bad, [8])
    # a load hint is a last suffix, a fourth field for the harness
    assert pb._specs(["kernel/no-C+Bt1", "io-kc+At1"], [16]) == [
        ("kernel/no-C+Bt1", "0:0:2:1"), ("io-kc=16+At1", "4:16:0:2")]
    # the operand bounds and prefetches are hints too; ``@NC`` a fifth
    # field (column blocks), after a hint field of 0 when there is none
    assert pb._specs(["kernel+ops-L1", "io-kc+Bt1+pfB", "r7-rot@512",
                      "kernel+Bt1@512"], [8]) == [
        ("kernel+ops-L1", "0:0:0:3"), ("io-kc=8+Bt1+pfB", "4:8:0:4"),
        ("r7-rot@512", "14:0:0:0:512"), ("kernel+Bt1@512", "0:0:0:1:512")]
    for bad in (["r7+Bt1"], ["strip@512"], ["blis+Bt1+pfB"]):
        with pytest.raises(SystemExit, match="unknown variant"):
            pb._specs(bad, [8])
    with pytest.raises(SystemExit, match="unknown column block"):
        pb._specs(["kernel@100"], [8])


@proc
def hand_write_then_loop(C: i32[16, 16] @ DRAM, D: i32[16, 16] @ DRAM):
    AmxConfig.rows0 = 8
    for i in seq(0, 16):
        for j in seq(0, 16):
            D[i, j] = C[i, j]


@pytest.mark.parametrize("before", [True, False])
def test_configure_tiles_finds_its_writes_by_place(before):
    """configure_tiles found its own config writes by their text, so an
    earlier write of the same field (here the user's ``AmxConfig.rows0 =
    8``) was taken for its first one: the sixteen writes were split around
    it and the ldtilecfg replace was refused. It now follows them by place:
    the user's write stays, the ldtilecfg sits next to the anchor."""
    p = hand_write_then_loop
    q = amx.configure_tiles(p, p.find_loop('i'), {0: (16, 64)}, before=before)
    body = [s.text().splitlines()[0] for s in q.body()]
    assert body[0] == "AmxConfig.rows0 = 8"
    where = 1 if before else 2
    assert body[where].startswith("ldtilecfg(16, 0,"), body
    assert body[3 - where].startswith("for i in seq(0, 16)"), body
    assert len(body) == 3


# ---------------------------------------------------------------------------
# tileloaddt1 (tile_load(..., stream=True)): the GEMMs load B with it

ld_bs = amx.tile_load(6, 'i8', (16, 16, 4), stream=True)


@proc
def dpbusd_stream_b(A: ui8[16, 64] @ DRAM, B: i8[16, 16, 4] @ DRAM,
                    C: i32[16, 16] @ DRAM):
    ldtilecfg(16, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
    c: i32[16, 16] @ AMX_TILE0
    ld_c(c, C)
    a: ui8[16, 64] @ AMX_TILE4
    ld_a(a, A)
    b: i8[16, 16, 4] @ AMX_TILE6
    ld_bs(b, B)
    dp_us(c, a, b)
    st_c(C, c)


@pytest.mark.parametrize("mode", MODES)
def test_tile_load_stream_is_tileloaddt1_with_the_same_body(mode,
                                                            monkeypatch):
    """The no-reuse hint changes the instruction, not the body: printed
    as its own instruction, its C is _tile_stream_loadd, and a tile
    product on a B loaded so equals numpy (emulated and native)."""
    assert ld_bs is not ld_b
    # made by the factory (memoized, but the suite may clear the caches)
    assert amx.tile_load(6, 'i8', [16, 16, 4], stream=True).name() == \
        ld_bs.name() == 'tileloaddt1_t6_i8_16x16x4'
    assert "tileloaddt1_t6_i8_16x16x4(b, B)" in str(dpbusd_stream_b)
    c_code = dpbusd_stream_b.c_code_str()
    assert "_tile_stream_loadd(6, " in c_code
    assert "_tile_stream_loadd(0, " not in c_code
    f = _compile(dpbusd_stream_b, mode, monkeypatch)
    A = _edge_fill((16, 64), U8_EDGES, 3).astype(np.uint8)
    B = _edge_fill((16, 16, 4), S8_EDGES, 4).astype(np.int8)
    C = _edge_fill((16, 16), I32_EDGES, 5).astype(np.int32)
    got = C.copy()
    f(A, B, got)
    assert np.array_equal(got, _dp_ref(A, B, C))


def test_tile_load_stream_keeps_the_preconditions():
    """tileloaddt1 has tileloadd's configuration preconditions: a
    configuration of the wrong shape is refused by @proc and by
    replace."""
    ld_cs = amx.tile_load(0, 'i32', (16, 16), stream=True)
    with pytest.raises(Exception, match="AmxConfig|precondition"):
        @proc
        def wrong_rows_stream(C: i32[16, 16] @ DRAM):
            ldtilecfg(8, 0, 0, 0, 16, 0, 16, 0, 64, 0, 0, 0, 64, 0, 64, 0)
            c: i32[16, 16] @ AMX_TILE0
            ld_cs(c, C)

    @proc
    def copy_in_s(C: i32[16, 16] @ DRAM):
        c: i32[16, 16] @ DRAM
        for i in seq(0, 16):
            for j in seq(0, 16):
                c[i, j] = C[i, j]
    p = copy_in_s.set_memory('c', AMX_TILE0)
    q = amx.configure_tiles(p, p.find_loop('i'), {0: (8, 64)})
    with pytest.raises(SchedulingError):
        q.replace(q.find_loop('i'), ld_cs)
    q = amx.configure_tiles(p, p.find_loop('i'), {0: (16, 64)})
    assert "tileloaddt1_t0_i32_16x16" in str(q.replace(q.find_loop('i'),
                                                       ld_cs))


def test_gemm_loads_b_with_the_no_reuse_hint():
    """The GEMMs' B tiles (tmm6, tmm7) stream from the packed column block
    with tileloaddt1, so A's reused row block stays in L1; the A and C
    tiles keep tileloadd."""
    from apps.gemm_amx.schedule import gemm_bf16, gemm_u8s8, schedule
    for alg in (gemm_u8s8, gemm_bf16):
        c_code = schedule(alg).c_code_str()
        for t in (6, 7):
            assert f"_tile_stream_loadd({t}, &Bp[" in c_code
        for t in (0, 1, 2, 3, 4, 5):
            assert f"_tile_stream_loadd({t}, " not in c_code
            assert f"_tile_loadd({t}, " in c_code
