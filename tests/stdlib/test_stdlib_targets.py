"""Targets of the stdlib compositions (issue 33, items 6-9): a second nest
after a first, an ``if`` as a level of ``compute_root``, a second ``pack``
of one buffer, ``replace_all``'s statements and arguments."""
from __future__ import annotations

import numpy as np
import pytest

import exo_hl.hw_libs.avx2 as avx2_module
from exo_hl import DRAM, SchedulingError, f32, i8, proc, seq, size, stride
from exo_hl.hw_libs.avx2 import AVX2, INSTRS, mm256_add_ps
from exo_hl.hw_libs.gemmini import INSTRS as GEMMINI, ConfigLoad
from exo_hl.hw_libs.gemmini import GEMM_SCRATCH, config_st, st_i8  # noqa: F401
from exo_hl.stdlib import compute_root, pack, replace_all, tile, vectorize


@proc
def adds(n: size, x: f32[n], y: f32[n], z: f32[n], w: f32[n]):
    assert n % 8 == 0
    for i in seq(0, n):
        z[i] = x[i] + y[i]
    for i in seq(0, n):
        w[i] = x[i] + y[i]


@proc
def adds_any(n: size, x: f32[n], y: f32[n], z: f32[n], w: f32[n]):
    for i in seq(0, n):
        z[i] = x[i] + y[i]
    for i in seq(0, n):
        w[i] = x[i] + y[i]


@pytest.mark.parametrize("tail", ["perfect", "cut", "mask"])
def test_vectorize_a_second_nest_after_the_first(tail, equiv):
    # the second vectorize found the first nest's loops by name: its
    # scalar remainder 'ii' (cut), its 'io' blocks (mask)
    p0 = adds if tail == "perfect" else adds_any
    p = vectorize(p0, "i", 8, AVX2, INSTRS, tail=tail)
    p = vectorize(p, "i", 8, AVX2, INSTRS, tail=tail)
    assert str(p).count("_add_ps(") == 2 * (1 + (tail == "mask"))
    equiv(p0, p, [{"n": 16}] if tail == "perfect" else [{"n": 13}])


@proc
def grids(M: size, N: size, x: f32[M, N], y: f32[M, N], z: f32[M, N]):
    assert M % 2 == 0 and N % 2 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            y[i, j] = x[i, j]
    for i in seq(0, M):
        for j in seq(0, N):
            z[i, j] = x[i, j]


@pytest.mark.parametrize("tail", ["perfect", "guard", "cut"])
def test_tile_a_second_nest_after_the_first(tail, equiv):
    p = tile(grids, "i", "j", 2, 2, tail=tail)
    p = tile(p, "i", "j", 2, 2, tail=tail)
    # both nests tiled: two 'io' and two 'jo' loops (with tail='cut' the
    # remainders stay untiled loops over i or j)
    assert len(p.find_loop("io", many=True)) == 2
    assert len(p.find_loop("jo", many=True)) == 2
    equiv(grids, p, [{"M": 4, "N": 6}])


@proc
def fused_if(n: size, c: size, x: f32[n], y: f32[n]):
    t: f32[n]
    for i in seq(0, n):
        if c > 2:
            t[i] = x[i] * 2.0
            y[i] = t[i] + 1.0


def test_compute_root_counts_an_if_as_a_level(equiv, same_text):
    # only the if was split and the producer stayed in the loop
    p = compute_root(fused_if, "t[_] = _")
    same_text(p, """
def fused_if(n: size, c: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    t: f32[n] @ DRAM
    for i in seq(0, n):
        if c > 2:
            t[i] = x[i] * 2.0
    for i in seq(0, n):
        if c > 2:
            y[i] = t[i] + 1.0""")
    equiv(fused_if, p, [{"n": 5, "c": 3}, {"n": 4, "c": 1}])


@proc
def fused_in_if(n: size, c: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if c > 2:
            t: f32
            t = x[i] * 2.0
            y[i] = t + 1.0


def test_compute_root_through_an_if_is_refused_not_partial():
    # t is one scalar per iteration, allocated inside the if: computing it
    # at the root would keep only the last value. Before, only the if was
    # split (t lifted one level) and the call returned with no error.
    with pytest.raises(SchedulingError, match="fission_after"):
        compute_root(fused_in_if, "t = _")


@proc
def gemm2(M: size, K: size, A: f32[M, K], B: f32[K, 16], C: f32[M, 16]):
    for i in seq(0, M):
        for j in seq(0, 16):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]
    for i in seq(0, M):
        for j in seq(0, 16):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def test_a_second_transposed_pack_transposes_its_own_buffer(equiv):
    # the second pack transposed the first B_pack back and left its own
    p = pack(gemm2, "B[0:K, 0:16]", "i", "transposed")
    p = pack(p, "B[0:K, 0:16]", "i #1", "transposed")
    text = str(p)
    assert "B_pack: f32[16, K]" in text and "B_pack_1: f32[16, K]" in text
    assert "B_pack[j, k]" in text and "B_pack_1[j, k]" in text
    equiv(gemm2, p, [{"M": 3, "K": 5}])


def test_pack_refuses_a_name_in_use():
    p = pack(gemm2, "B[0:K, 0:16]", "i", "row")
    with pytest.raises(SchedulingError):
        pack(p, "B[0:K, 0:16]", "i #1", "row", name="B_pack")


@pytest.mark.parametrize("bad", [None, avx2_module, "mm256_add_ps",
                                 ["mm256_add_ps"], [mm256_add_ps, None], 3])
def test_replace_all_refuses_what_is_not_instructions(bad):
    with pytest.raises(SchedulingError, match="replace_all"):
        replace_all(adds, bad)


def test_replace_all_replaces_statements_too():
    """Gemmini's config writes are statements: they stayed plain writes."""
    @proc
    def copy_in(A: i8[16, 32] @ DRAM, B: i8[16, 16] @ DRAM):
        t: i8[16, 16] @ GEMM_SCRATCH
        for i in seq(0, 16):
            for j in seq(0, 16):
                t[i, j] = A[i, j]
        config_st(stride(B, 0), False)
        st_i8(16, 16, t, B)

    p = copy_in.configwrite_at(copy_in.find_loop("i"), ConfigLoad,
                               "src_stride", "stride(A, 0)", before=True)
    q = replace_all(p, GEMMINI)
    assert "config_ld(stride(A, 0))" in str(q), str(q)
    assert "ConfigLoad.src_stride =" not in str(q)
    assert "ld_i8(16, 16" in str(q)
    A = np.arange(16 * 32).reshape(16, 32).astype(np.int8)
    B = np.zeros((16, 16), np.int8)
    q.interpret(A=A, B=B)
    assert np.array_equal(B, A[:, 0:16])


def test_replace_all_accepts_one_instruction_or_a_tuple():
    p = vectorize(adds, "i", 8, AVX2, INSTRS)
    assert "mm256_add_ps" in str(p)
    q = adds.split("i", 8, "io", "ii", tail="perfect")
    assert str(replace_all(q, mm256_add_ps)) == str(replace_all(q, (
        mm256_add_ps, )))
