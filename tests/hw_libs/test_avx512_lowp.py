"""AVX-512 BF16/VNNI (hw_libs/avx512/lowp.py) beyond the edge-value sweep
of test_edge_values.py: the order vdpbf16ps sums a pair in (odd first)
shown on a case where it decides the result; its DAZ/FTZ (where the body,
IEEE, differs), emulation against the hardware; replace() of a dot
product by the instruction, and the refusal of the other summation
order."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, bf16, f32, i8, i32, proc, seq, ui8
from exo_hl.codegen_c.host_cpu import host_features
from exo_hl.core_ir import datasem as D
from exo_hl.hw_libs.avx512 import (AVX512, mm512_dpbf16_ps,
                                   mm512_dpbusd_epi32, mm512_loadu_bf16,
                                   mm512_loadu_epi8, mm512_loadu_epi32,
                                   mm512_loadu_epu8, mm512_loadu_ps,
                                   mm512_storeu_epi32, mm512_storeu_ps)

from .emulation_tools import compile_emulated


@proc
def dp(acc: f32[16], a: bf16[32], b: bf16[32]):
    r: f32[16] @ AVX512
    x: bf16[32] @ AVX512
    y: bf16[32] @ AVX512
    mm512_loadu_ps(r, acc)
    mm512_loadu_bf16(x, a)
    mm512_loadu_bf16(y, b)
    mm512_dpbf16_ps(r, x, y)
    mm512_storeu_ps(acc, r)


def _emulated(p):
    f = compile_emulated(p)
    assert "avx512bf16" in f.emulated
    return f


def _run(f, acc, a, b):
    out = acc.copy()
    f(acc=out, a=a, b=b)
    return out


def test_the_odd_pair_is_summed_first():
    # 2**24 + 2 (odd pair) = 16777218, + 1 (even pair): a tie, to even
    # 16777220; the other order gives 16777216 + 1 -> 16777216, + 2.
    acc = np.full(16, 2.0 ** 24, np.float32)
    a = D.f32_to_bf16_bits(np.tile(np.float32([1.0, 2.0]), 16))
    b = D.f32_to_bf16_bits(np.ones(32, np.float32))
    want = np.full(16, 16777220.0, np.float32)
    for f in (dp.interpret, dp.compile(), _emulated(dp)):
        assert np.array_equal(_run(f, acc, a, b), want), f


def test_denormals_are_flushed_by_the_instruction_not_by_the_body():
    acc = np.zeros(16, np.float32)
    acc[1] = 1e-40                            # a denormal accumulator
    a = D.f32_to_bf16_bits(np.ones(32, np.float32))
    a[4] = 0x0001                             # a denormal bf16 factor
    b = D.f32_to_bf16_bits(np.ones(32, np.float32))
    b[:4] = b[5:] = 0
    got = _run(_emulated(dp), acc, a, b)
    body = _run(dp.interpret, acc, a, b)
    assert got[1] == 0 and body[1] == np.float32(1e-40)
    assert got[2] == 0 and body[2] == D.bf16_bits_to_f32(np.uint16(1))


@pytest.mark.skipif(host_features({"avx512bf16"}) != {"avx512bf16"},
                    reason="compared with the emulation where the CPU has "
                           "AVX512_BF16 (the emulation runs everywhere)")
def test_emulation_is_the_hardware_on_random_bits():
    rng = np.random.default_rng(3)
    f, g = dp.compile(), _emulated(dp)
    assert not f.emulated
    for _ in range(40):
        acc = rng.integers(0, 2**32, 16, dtype=np.uint64).astype(
            np.uint32).view(np.float32)
        a = rng.integers(0, 2**16, 32).astype(np.uint16)
        b = rng.integers(0, 2**16, 32).astype(np.uint16)
        # exponents near each other too, so sums cancel and round
        near = rng.integers(0x3C00, 0x4400, 32).astype(np.uint16)
        a[::3] = near[::3]
        b[::3] = near[1::3].repeat(3)[:len(b[::3])]
        x, y = _run(f, acc, a, b), _run(g, acc, a, b)
        same = (x.view(np.uint32) == y.view(np.uint32)) | (
            np.isnan(x) & np.isnan(y))
        assert same.all(), (acc, a, b, x, y)


@proc
def dot4(acc: i32[16], a: ui8[64], b: i8[64]):
    for i in seq(0, 16):
        for t in seq(0, 4):
            acc[i] += a[4 * i + t] * b[4 * i + t]


@proc
def dot2_even_first(acc: f32[16], a: bf16[32], b: bf16[32]):
    for i in seq(0, 16):
        for t in seq(0, 2):
            acc[i] += a[2 * i + t] * b[2 * i + t]


def _staged_dot4():
    p = dot4
    p = p.stage_mem(p.find_loop("i"), "acc[0:16]", "r")
    p = p.stage_mem(p.find_loop("i"), "a[0:64]", "x")
    p = p.stage_mem(p.find_loop("i"), "b[0:64]", "y")
    for name in ("r", "x", "y"):
        p = p.set_memory(name, AVX512)
    return p


def test_replace_a_quad_dot_product_by_vpdpbusd():
    p = _staged_dot4()
    p = p.replace(p.find_loop("i"), mm512_dpbusd_epi32)
    assert "mm512_dpbusd_epi32(r[0:16], x[0:64], y[0:64])" in str(p)
    for loop, move in (("i0", mm512_loadu_epi32), ("i1", mm512_loadu_epu8),
                       ("i2", mm512_loadu_epi8), ("i0", mm512_storeu_epi32)):
        p = p.replace(p.find_loop(loop), move)
    rng = np.random.default_rng(4)
    acc = rng.integers(-2**31, 2**31, 16, dtype=np.int64).astype(np.int32)
    a = rng.integers(0, 256, 64).astype(np.uint8)
    b = rng.integers(-128, 128, 64).astype(np.int8)
    want, got = acc.copy(), acc.copy()
    dot4.interpret(acc=want, a=a, b=b)
    p.compile()(acc=got, a=a, b=b)
    assert np.array_equal(want, got)


def test_replace_refuses_the_other_pair_order():
    p = dot2_even_first
    with pytest.raises(SchedulingError):
        p.replace(p.find_loop("i"), mm512_dpbf16_ps)
