"""AVX-512 BF16/VNNI (hw_libs/avx512/lowp.py) beyond the edge-value sweep
of test_edge_values.py: the order vdpbf16ps sums a pair in (odd first)
shown on a case where it decides the result; its DAZ/FTZ (where the body,
IEEE, differs), emulation against the hardware; replace() of a dot
product by the instruction, and the refusal of the other summation
order; ``vcvtne2ps2bf16``'s rounding where it decides (ties to even)."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, bf16, f32, i8, i32, proc, seq, ui8
from exo_hl.codegen_c.host_cpu import host_features
from exo_hl.core_ir import datasem as D
from exo_hl.hw_libs.avx512 import (AVX512, mm512_cvtne2ps_pbh,
                                   mm512_dpbf16_ps,
                                   mm512_dpbusd_epi32, mm512_loadu_bf16,
                                   mm512_loadu_epi8, mm512_loadu_epi32,
                                   mm512_loadu_epu8, mm512_loadu_ps,
                                   mm512_storeu_bf16, mm512_storeu_epi32,
                                   mm512_storeu_ps)

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


@proc
def cvt(lo: f32[16], hi: f32[16], out: bf16[32]):
    a: f32[16] @ AVX512
    b: f32[16] @ AVX512
    r: bf16[32] @ AVX512
    mm512_loadu_ps(a, lo)
    mm512_loadu_ps(b, hi)
    mm512_cvtne2ps_pbh(r, a, b)
    mm512_storeu_bf16(out, r)


def test_bf16_conversion_rounds_ties_to_even_as_its_body():
    """``vcvtne2ps2bf16`` against its body (the f32 -> bf16 store) where
    the rounding decides: the dropped 16 bits exactly half (a tie: to
    even, both for an even and an odd kept part), just below and above
    half, all ones, one; positive and negative; the largest finite f32
    (rounds to infinity), the smallest normals, a value whose carry
    reaches the exponent, NaNs. test_edge_values' values have no tie."""
    def nan(x):
        return ((x & 0x7F80) == 0x7F80) & ((x & 0x7F) != 0)
    bits = np.array([(hi << 16) | lo
                     for hi in (0x3F80, 0x3F81, 0xBF80, 0xBF81, 0x7F7F,
                                0xFF7F, 0x0080, 0x0081, 0x4B80, 0x3FFF,
                                0x7F80, 0x7FC0, 0x7F81)
                     for lo in (0x8000, 0x7FFF, 0x8001, 0xFFFF, 0x0001,
                                0x0000)], np.uint32)
    vals = np.zeros(96, np.float32)
    vals[:len(bits)] = bits.view(np.float32)
    runs = [_emulated(cvt)]
    if host_features({"avx512f", "avx512bf16"}) == {"avx512f", "avx512bf16"}:
        runs.append(cvt.compile())
    for chunk in vals.reshape(3, 32):
        lo, hi = chunk[:16].copy(), chunk[16:].copy()
        want = np.zeros(32, np.uint16)
        with np.errstate(all="ignore"):
            cvt.interpret(lo=lo, hi=hi, out=want)
        # the body rounds as datasem's f32 -> bf16 (1 + 2^-8: a tie, down
        # to 1; 1 + 3 2^-8: up to 1 + 2^-6; the largest f32: infinity)
        ok = ~nan(want)
        assert np.array_equal(want[ok], D.f32_to_bf16_bits(chunk)[ok])
        for f in runs:
            got = np.zeros(32, np.uint16)
            f(lo=lo, hi=hi, out=got)
            bad = (got != want) & ~(nan(got) & nan(want))
            assert not bad.any(), (f, [(hex(lo.view(np.uint32)[j % 16]
                                            if j < 16 else
                                            hi.view(np.uint32)[j - 16]),
                                        hex(got[j]), hex(want[j]))
                                       for j in np.nonzero(bad)[0]])
