"""AVX-512 BF16 and VNNI: dot products of bf16 pairs and of int8 quads.

A user library like ``lib.py`` (public API only), in the same ``AVX512``
register memory: a ``bf16[32]`` register is one ``__m512i`` of 32 bf16
(16 pairs), an ``ui8[64]``/``i8[64]`` register 64 bytes (16 quads), an
``i32[16]`` register 16 dwords.

The dot products reduce along K inside a register: lane ``i`` of the f32
or i32 accumulator takes the pair ``2i, 2i+1`` (the quad ``4i .. 4i+3``)
of each source. So a GEMM feeds them B packed in the *VNNI layout*
``Bp[k // 2, j, k % 2]`` (``Bp[k // 4, j, k % 4]`` for int8), and A as a
broadcast pair (quad) ``A[i, 2p:2p+2]``: the ``_bcst`` forms take both
from memory, B as a ``[16, 2]`` (``[16, 4]``) window of the packed
panel.

Exactness (docs/hw_avx512.md):

- ``vpdpbusd``'s body is exact: u8 x s8 products summed into an i32 that
  wraps, and wrapping sums may be taken in any order.
- ``vpdpbusds`` saturates the sum to i32: its body sums in an ``f64``
  scalar (exact: |sum| < 2**33) and stores it into the i32 (conversion
  saturates, docs/semantics.md).
- ``vdpbf16ps`` is, per lane, two fused multiply-adds, the odd pair
  first: ``dst = fma(a1, b1, dst); dst = fma(a0, b0, dst)``, with
  denormal inputs read as zero and denormal results flushed to zero
  (Intel's pseudo-code; checked bit for bit on 9.6 million random lanes of
  a Xeon with AVX512_BF16). The body is ``dst += a1 * b1; dst += a0 *
  b0`` in that order: a product of two bf16 is exact in f32, so it rounds
  like the fused one, **except** where a product overflows or underflows
  f32 or a denormal is read or made (DAZ/FTZ); there the body (IEEE,
  gradual underflow) and the instruction differ. A kernel whose values
  stay in the normal range (any bf16 GEMM on data of moderate range) is
  bit-exact with ``interpret()``; the emulation (``compile(emulate=True)``)
  computes what the hardware computes, DAZ/FTZ included.
- ``vcvtne2ps2bf16``'s body (a store of f32 into bf16) is exact except on
  a denormal f32, which the instruction reads as zero (giving the zero of
  its sign) and the store rounds (docs/semantics.md "bf16"); a denormal
  below half the smallest bf16 denormal rounds to zero in both.
"""
from __future__ import annotations

from exo_hl import DRAM, bf16, f32, f64, i8, i32, instr, seq, ui8
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)

from .lib import AVX512

_FEATURES = {"avx512f"}
_BF16 = {"avx512f", "avx512bf16"}
_VNNI = {"avx512f", "avx512vnni"}

# Helpers, emitted once per .c file by the instructions that use them (each
# on its own: an unused static function is a warning). The
# BF16 intrinsics take __m512bh, whose definition differs between compilers
# and emulation layers: the generated code only ever sees __m512i (the bits)
# through these helpers. Under compile(emulate=True) the emulation header
# (codegen_c/x86_emulation) supplies exo_hl_emu_* with the instructions'
# exact semantics and defines EXO_HL_EMU_AVX512BF16.
_DP_HELPER = """#include <immintrin.h>
#ifndef EXO_HL_MM512_DPBF16_PS
#define EXO_HL_MM512_DPBF16_PS
#if defined(EXO_HL_EMU_AVX512BF16)
#define exo_hl_mm512_dpbf16_ps exo_hl_emu_mm512_dpbf16_ps
#else
static inline __attribute__((target("avx512f,avx512bf16"))) __m512
exo_hl_mm512_dpbf16_ps(__m512 acc, __m512i a, __m512i b) {
    return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
}
#endif
#endif
"""
_CVT_HELPER = """#include <immintrin.h>
#ifndef EXO_HL_MM512_CVTNE2PS_BF16
#define EXO_HL_MM512_CVTNE2PS_BF16
#if defined(EXO_HL_EMU_AVX512BF16)
#define exo_hl_mm512_cvtne2ps_bf16 exo_hl_emu_mm512_cvtne2ps_bf16
#else
static inline __attribute__((target("avx512f,avx512bf16"))) __m512i
exo_hl_mm512_cvtne2ps_bf16(__m512 hi, __m512 lo) {
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}
#endif
#endif
"""

# A pair of bf16 (a quad of bytes) from memory as one dword, for a
# broadcast: memcpy (no type punning; compilers make it one 32-bit load
# that the broadcast folds). The dword holds the bytes in memory order,
# which is the lane order of _mm512_set1_epi32 on x86.
_PAIR_HELPER = """#include <stdint.h>
#include <string.h>
#ifndef EXO_HL_DWORD_OF_U16
#define EXO_HL_DWORD_OF_U16
static inline int32_t exo_hl_dword_of_u16(const uint16_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#endif
"""
_QUAD_HELPER = """#include <stdint.h>
#include <string.h>
#ifndef EXO_HL_DWORD_OF_U8
#define EXO_HL_DWORD_OF_U8
static inline int32_t exo_hl_dword_of_u8(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#endif
"""

_INCLUDE = "#include <immintrin.h>\n"


# ---------------------------------------------------------------------------
# moves of bf16, int8 and i32 registers

@instr("{dst_data} = _mm512_loadu_si512((const void *)&{src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_loadu_bf16(dst: [bf16][32] @ AVX512, src: [bf16][32] @ DRAM):
    """``dst = src``: 32 bf16 (16 pairs), unaligned.

    >>> p = p.replace(p.find_loop('i0'), mm512_loadu_bf16)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 32):
        dst[i] = src[i]


@instr("_mm512_storeu_si512((void *)&{dst_data}, {src_data});", _INCLUDE,
       cpu_features=_FEATURES)
def mm512_storeu_bf16(dst: [bf16][32] @ DRAM, src: [bf16][32] @ AVX512):
    """``dst = src``: 32 bf16, unaligned.

    >>> p = p.replace(p.find_loop('i0'), mm512_storeu_bf16)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 32):
        dst[i] = src[i]


@instr("{dst_data} = _mm512_loadu_si512((const void *)&{src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_loadu_epu8(dst: [ui8][64] @ AVX512, src: [ui8][64] @ DRAM):
    """``dst = src``: 64 unsigned bytes (16 quads), unaligned.

    >>> p = p.replace(p.find_loop('i0'), mm512_loadu_epu8)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 64):
        dst[i] = src[i]


@instr("{dst_data} = _mm512_loadu_si512((const void *)&{src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_loadu_epi8(dst: [i8][64] @ AVX512, src: [i8][64] @ DRAM):
    """``dst = src``: 64 signed bytes (16 quads), unaligned.

    >>> p = p.replace(p.find_loop('i0'), mm512_loadu_epi8)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 64):
        dst[i] = src[i]


@instr("_mm512_storeu_si512((void *)&{dst_data}, {src_data});", _INCLUDE,
       cpu_features=_FEATURES)
def mm512_storeu_epu8(dst: [ui8][64] @ DRAM, src: [ui8][64] @ AVX512):
    """``dst = src``: 64 unsigned bytes, unaligned.

    >>> p = p.replace(p.find_loop('i0'), mm512_storeu_epu8)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 64):
        dst[i] = src[i]


@instr("_mm512_storeu_si512((void *)&{dst_data}, {src_data});", _INCLUDE,
       cpu_features=_FEATURES)
def mm512_storeu_epi8(dst: [i8][64] @ DRAM, src: [i8][64] @ AVX512):
    """``dst = src``: 64 signed bytes, unaligned.

    >>> p = p.replace(p.find_loop('i0'), mm512_storeu_epi8)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 64):
        dst[i] = src[i]


@instr("{dst_data} = _mm512_loadu_si512((const void *)&{src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_loadu_epi32(dst: [i32][16] @ AVX512, src: [i32][16] @ DRAM):
    """``dst = src``: 16 i32, unaligned.

    >>> p = p.replace(p.find_loop('ji'), mm512_loadu_epi32)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[i]


@instr("_mm512_storeu_si512((void *)&{dst_data}, {src_data});", _INCLUDE,
       cpu_features=_FEATURES)
def mm512_storeu_epi32(dst: [i32][16] @ DRAM, src: [i32][16] @ AVX512):
    """``dst = src``: 16 i32, unaligned.

    >>> p = p.replace(p.find_loop('ji'), mm512_storeu_epi32)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[i]


@instr("{dst_data} = _mm512_setzero_si512();", _INCLUDE,
       cpu_features=_FEATURES)
def mm512_setzero_epi32(dst: [i32][16] @ AVX512):
    """Set all 16 i32 lanes to 0.

    >>> p = p.replace(p.find_loop('ji'), mm512_setzero_epi32)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = 0


@instr("_mm512_storeu_si512((void *)&{dst_data}, _mm512_add_epi32("
       "_mm512_loadu_si512((const void *)&{dst_data}), {src_data}));",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_reduce_storeu_epi32(dst: [i32][16] @ DRAM,
                              src: [i32][16] @ AVX512):
    """``dst += src`` into memory, wrapping (the store of an i32
    accumulator tile staged with ``stage_mem(accum=True)``).

    >>> p = p.replace(p.find_loop('ji'), mm512_reduce_storeu_epi32)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        dst[i] += src[i]


# ---------------------------------------------------------------------------
# packing into the VNNI layout: rows of k interleaved (a transpose of 4 x 16
# bytes, or 2 x 16 bf16, into 16 groups), with SSE2 unpacks (every x86-64)

_PACK4 = """#include <immintrin.h>
#include <stdint.h>
#ifndef EXO_HL_PACK_VNNI_EPI8
#define EXO_HL_PACK_VNNI_EPI8
/* dst[16][4] = transpose(src rows r0..r3 of 16 bytes) */
static inline void exo_hl_pack_vnni_epi8(int8_t *dst, const int8_t *r0,
                                         const int8_t *r1, const int8_t *r2,
                                         const int8_t *r3) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)r0);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)r1);
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)r2);
    __m128i d = _mm_loadu_si128((const __m128i *)(const void *)r3);
    __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
    __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
    __m128i *out = (__m128i *)(void *)dst;
    _mm_storeu_si128(out, _mm_unpacklo_epi16(ab_lo, cd_lo));
    _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
    _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
    _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
}
#endif
"""

_PACK2 = """#include <immintrin.h>
#include <stdint.h>
#ifndef EXO_HL_PACK_VNNI_BF16
#define EXO_HL_PACK_VNNI_BF16
/* dst[16][2] = transpose(src rows r0, r1 of 16 bf16) */
static inline void exo_hl_pack_vnni_bf16(uint16_t *dst, const uint16_t *r0,
                                         const uint16_t *r1) {
    __m128i *out = (__m128i *)(void *)dst;
    for (int h = 0; h < 2; h++) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(r0 + 8 * h));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(r1 + 8 * h));
        _mm_storeu_si128(out + 2 * h, _mm_unpacklo_epi16(a, b));
        _mm_storeu_si128(out + 2 * h + 1, _mm_unpackhi_epi16(a, b));
    }
}
#endif
"""


@instr("exo_hl_pack_vnni_epi8(&{dst_data}, &{src_data}, "
       "&{src_data} + {src}.strides[0], &{src_data} + 2 * {src}.strides[0], "
       "&{src_data} + 3 * {src}.strides[0]);", _PACK4,
       cpu_features={"sse2"})
def pack_vnni_epi8(dst: [i8][16, 4] @ DRAM, src: [i8][4, 16] @ DRAM):
    """``dst[j, t] = src[t, j]``: 4 rows (k) of 16 signed bytes (columns)
    into the VNNI layout, 16 quads (one register's worth of B).

    >>> p = p.replace(p.find_loop('i3i'), pack_vnni_epi8)
    """
    assert stride(dst, 1) == 1
    assert stride(dst, 0) == 4
    assert stride(src, 1) == 1
    for j in seq(0, 16):
        for t in seq(0, 4):
            dst[j, t] = src[t, j]


@instr("exo_hl_pack_vnni_bf16(&{dst_data}, &{src_data}, "
       "&{src_data} + {src}.strides[0]);", _PACK2, cpu_features={"sse2"})
def pack_vnni_bf16(dst: [bf16][16, 2] @ DRAM, src: [bf16][2, 16] @ DRAM):
    """``dst[j, t] = src[t, j]``: 2 rows (k) of 16 bf16 (columns) into the
    VNNI layout, 16 pairs (one register's worth of B); bits copied.

    >>> p = p.replace(p.find_loop('i3i'), pack_vnni_bf16)
    """
    assert stride(dst, 1) == 1
    assert stride(dst, 0) == 2
    assert stride(src, 1) == 1
    for j in seq(0, 16):
        for t in seq(0, 2):
            dst[j, t] = src[t, j]


# ---------------------------------------------------------------------------
# BF16

@instr("{dst_data} = exo_hl_mm512_cvtne2ps_bf16({hi_data}, {lo_data});",
       _CVT_HELPER, cpu_features=_BF16)
def mm512_cvtne2ps_pbh(dst: [bf16][32] @ AVX512, lo: [f32][16] @ AVX512,
                       hi: [f32][16] @ AVX512):
    """``vcvtne2ps2bf16``: 32 f32 (``lo`` then ``hi``) rounded to bf16 in
    one register: a store of f32 into bf16 (round to nearest even, NaN
    quieted; docs/semantics.md "bf16"), except that the instruction reads
    a denormal f32 as zero.
    (``_mm512_cvtne2ps_pbh(hi, lo)`` puts its *second* operand low.)

    >>> p = p.replace(p.find_loop('i0'), mm512_cvtne2ps_pbh)
    """
    assert stride(dst, 0) == 1
    assert stride(lo, 0) == 1
    assert stride(hi, 0) == 1
    for i in seq(0, 16):
        dst[i] = lo[i]
    for i in seq(0, 16):
        dst[16 + i] = hi[i]


@instr("{dst_data} = exo_hl_mm512_dpbf16_ps({dst_data}, {a_data}, "
       "{b_data});", _DP_HELPER, cpu_features=_BF16)
def mm512_dpbf16_ps(dst: [f32][16] @ AVX512, a: [bf16][32] @ AVX512,
                    b: [bf16][32] @ AVX512):
    """``vdpbf16ps``: ``dst[i] += a[2i+1] * b[2i+1]``, then ``dst[i] +=
    a[2i] * b[2i]`` (the odd pair first, as the instruction sums). Exact
    while no product over/underflows and no denormal is read or made (the
    instruction fuses each step and flushes denormals; module docstring).

    >>> p = p.replace(p.find_loop('ji'), mm512_dpbf16_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        for t in seq(0, 2):
            dst[i] += a[2 * i + 1 - t] * b[2 * i + 1 - t]


@instr("{dst_data} = exo_hl_mm512_dpbf16_ps({dst_data}, "
       "_mm512_set1_epi32(exo_hl_dword_of_u16(&{a_data})), "
       "_mm512_loadu_si512((const void *)&{b_data}));",
       _DP_HELPER + _PAIR_HELPER, cpu_features=_BF16)
def mm512_dpbf16_bcst_ps(dst: [f32][16] @ AVX512, a: [bf16][2] @ DRAM,
                         b: [bf16][16, 2] @ DRAM):
    """``vdpbf16ps`` with one pair of A broadcast to every lane and B from
    memory: ``dst[i] += a[1] * b[i, 1]``, then ``+= a[0] * b[i, 0]``. The
    bf16 GEMM step: ``b`` is 16 columns x 2 k of B packed in the VNNI
    layout (64 contiguous bytes); with the step unrolled over rows, the
    compiler loads it once per k pair.

    >>> p = p.replace(p.find_loop('ji'), mm512_dpbf16_bcst_ps)
    """
    assert stride(a, 0) == 1
    assert stride(dst, 0) == 1
    assert stride(b, 1) == 1
    assert stride(b, 0) == 2
    for i in seq(0, 16):
        for t in seq(0, 2):
            dst[i] += a[1 - t] * b[i, 1 - t]


# ---------------------------------------------------------------------------
# VNNI

@instr("{dst_data} = _mm512_dpbusd_epi32({dst_data}, {a_data}, {b_data});",
       _INCLUDE, cpu_features=_VNNI)
def mm512_dpbusd_epi32(dst: [i32][16] @ AVX512, a: [ui8][64] @ AVX512,
                       b: [i8][64] @ AVX512):
    """``vpdpbusd``: ``dst[i] += sum over t < 4 of a[4i+t] * b[4i+t]``
    (unsigned times signed bytes, the i32 sum wrapping): exact.

    >>> p = p.replace(p.find_loop('ji'), mm512_dpbusd_epi32)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        for t in seq(0, 4):
            dst[i] += a[4 * i + t] * b[4 * i + t]


@instr("{dst_data} = _mm512_dpbusd_epi32({dst_data}, "
       "_mm512_set1_epi32(exo_hl_dword_of_u8(&{a_data})), "
       "_mm512_loadu_si512((const void *)&{b_data}));",
       _INCLUDE + _QUAD_HELPER, cpu_features=_VNNI)
def mm512_dpbusd_bcst_epi32(dst: [i32][16] @ AVX512, a: [ui8][4] @ DRAM,
                            b: [i8][16, 4] @ DRAM):
    """``vpdpbusd`` with one quad of A broadcast to every lane and B from
    memory: ``dst[i] += sum over t of a[t] * b[i, t]``. The int8 GEMM
    step: ``b`` is 16 columns x 4 k of B packed in the VNNI layout (64
    contiguous bytes).

    >>> p = p.replace(p.find_loop('ji'), mm512_dpbusd_bcst_epi32)
    """
    assert stride(a, 0) == 1
    assert stride(dst, 0) == 1
    assert stride(b, 1) == 1
    assert stride(b, 0) == 4
    for i in seq(0, 16):
        for t in seq(0, 4):
            dst[i] += a[t] * b[i, t]


@instr("{dst_data} = _mm512_dpbusds_epi32({dst_data}, {a_data}, "
       "{b_data});", _INCLUDE, cpu_features=_VNNI)
def mm512_dpbusds_epi32(dst: [i32][16] @ AVX512, a: [ui8][64] @ AVX512,
                        b: [i8][64] @ AVX512):
    """``vpdpbusds``: ``vpdpbusd`` with the sum saturated to the i32 range
    instead of wrapping. The body sums in an ``f64`` (exact) and stores it
    into the i32, which saturates.

    >>> p = p.replace(p.find_loop('ji'), mm512_dpbusds_epi32)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        s: f64 @ DRAM
        s = dst[i]
        for t in seq(0, 4):
            s += a[4 * i + t] * b[4 * i + t]
        dst[i] = s


INSTRS = (mm512_loadu_bf16, mm512_storeu_bf16, mm512_loadu_epu8,
          mm512_loadu_epi8, mm512_storeu_epu8, mm512_storeu_epi8, mm512_loadu_epi32, mm512_storeu_epi32,
          mm512_setzero_epi32, mm512_reduce_storeu_epi32,
          pack_vnni_epi8, pack_vnni_bf16,
          mm512_cvtne2ps_pbh, mm512_dpbf16_ps, mm512_dpbf16_bcst_ps,
          mm512_dpbusd_epi32, mm512_dpbusd_bcst_epi32, mm512_dpbusds_epi32)
