"""AVX-512 as a user library: a register memory and 16-lane f32 instructions.

Written exactly as a user would write it (public ``exo_hl`` API only). The
memory ``AVX512`` holds ``__m512`` registers: a buffer ``f32[..., 16]``
becomes an array of ``__m512`` (one register per row of 16 lanes), and C
code may not read it directly, so only the instructions below touch it.
Each instruction's body is its exact meaning (what ``interpret`` runs and
what ``replace`` matches); its template is the intrinsic emitted in C.

Why one module of this size: it is the whole library a user imports for
one register memory, as ``avx2/lib.py`` is; the instructions share the
memory, the C header and helper code and ``INSTRS`` (what ``replace_all``
and ``vectorize`` select from), and each is a short, independent
definition.
"""
from __future__ import annotations

from exo_hl import DRAM, f32, instr, seq, size, ui16
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.hw_libs.vector_registers import VectorRegisters

LANES = 16  # f32 lanes of one zmm register
LANES16 = 32  # ui16 lanes of one zmm register

# Emitted once per generated .c file. Every instruction and the register
# memory declare ``avx512f``, so the functions using them are compiled for
# AVX-512 by their own target attribute whatever the build's flags are.
_INCLUDE = "#include <immintrin.h>\n"
_FEATURES = {"avx512f"}
_FEATURES_BW = {"avx512f", "avx512bw"}   # 16-bit lanes

# Helper functions, emitted once per .c file by the instructions that call
# them: static inline with their own target attribute (none under an
# emulation layer that supplies AVX-512 in portable C, so the compiler never
# emits AVX-512 instructions for them there).
_HELPER = _INCLUDE + """
#ifndef EXO_HL_AVX512_HELPER
#if (defined(__GNUC__) || defined(__clang__)) && \\
    !(defined(SIMDE_VERSION) && !defined(SIMDE_X86_AVX512F_NATIVE))
#define EXO_HL_AVX512_HELPER static inline __attribute__((target("avx512f")))
#else
#define EXO_HL_AVX512_HELPER static inline
#endif
#endif
"""

_REDUCE_ADD = _HELPER + """
/* the sum of the 16 lanes as a fixed pairwise tree: lane i + lane i+8,
   then i + i+4, then i + i+2, then lane 0 + lane 1 (the body of
   mm512_reduce_add_ps spells out the same tree, so the two agree bit for
   bit). Not _mm512_reduce_add_ps: its order is the compiler's. */
EXO_HL_AVX512_HELPER float exo_hl_mm512_reduce_add_ps(__m512 v) {
    __m256 a = _mm256_add_ps(
        _mm512_castps512_ps256(v),
        _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 b = _mm_add_ps(_mm256_castps256_ps128(a),
                          _mm256_extractf128_ps(a, 1));
    __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    __m128 d = _mm_add_ss(c, _mm_shuffle_ps(c, c, 1));
    return _mm_cvtss_f32(d);
}
"""


class AVX512(VectorRegisters):
    """16-float vector registers (``__m512``), and ``__m512i`` of 32 x
    ui16 or bf16, 64 x ui8 or i8, 16 x i32.

    A buffer's last dimension must be exactly 16 and its other sizes
    constant: ``t: f32[16]`` is one register, ``t: f32[6, 4, 16]`` an array
    of 24 registers (gcc keeps constant-indexed arrays in registers once the
    loops over them are unrolled).

    >>> p = p.set_memory('C_reg', AVX512)      # C_reg: f32[6, 16] -> 6 registers
    """

    registers = {"float": ("__m512", LANES),
                 "uint16_t": ("__m512i", LANES16),   # ui16 and bf16
                 "uint8_t": ("__m512i", 64), "int8_t": ("__m512i", 64),
                 "int32_t": ("__m512i", LANES)}
    cpu_features = frozenset(_FEATURES)


# ---------------------------------------------------------------------------
# loads and stores

@instr("{dst_data} = _mm512_loadu_ps(&{src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_loadu_ps(dst: [f32][16] @ AVX512, src: [f32][16] @ DRAM):
    """Load 16 floats from memory into a register (unaligned).

    >>> p = p.replace(p.find_loop('ji'), mm512_loadu_ps)    # C_reg[ji] = C[...]
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[i]


@instr("_mm512_storeu_ps(&{dst_data}, {src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_storeu_ps(dst: [f32][16] @ DRAM, src: [f32][16] @ AVX512):
    """Store a register's 16 floats to memory (unaligned).

    >>> p = p.replace(p.find_loop('ji'), mm512_storeu_ps)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[i]


@instr("_mm512_storeu_ps(&{dst_data}, "
       "_mm512_max_ps({src_data}, _mm512_setzero_ps()));",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_storeu_relu_ps(dst: [f32][16] @ DRAM, src: [f32][16] @ AVX512):
    """Store ``relu(src)`` (16 floats, unaligned): a ReLU fused into the
    store of an accumulator tile. ``vmaxps(src, 0)`` returns its second
    operand, +0.0, when ``src`` is -0.0 or NaN, which is what ``relu``
    means in C (``x > 0 ? x : 0``).

    >>> p = p.replace(p.find_loop('ol'), mm512_storeu_relu_ps)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = relu(src[i])


@instr("{dst_data} = _mm512_maskz_loadu_ps("
       "(__mmask16)((1u << {m}) - 1u), &{src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_maskz_loadu_ps(m: size, dst: [f32][16] @ AVX512,
                         src: [f32][m] @ DRAM):
    """Load the first ``m`` lanes, zero the rest (a tail of ``m`` floats).

    >>> p = p.replace(p.find_loop('ji'), mm512_maskz_loadu_ps)  # the last, partial tile
    """
    assert m <= 16
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        if i < m:
            dst[i] = src[i]
        else:
            dst[i] = 0.0


@instr("_mm512_mask_storeu_ps(&{dst_data}, "
       "(__mmask16)((1u << {m}) - 1u), {src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_mask_storeu_ps(m: size, dst: [f32][m] @ DRAM,
                         src: [f32][16] @ AVX512):
    """Store the first ``m`` lanes (a tail of ``m`` floats).

    >>> p = p.replace(p.find_loop('ji'), mm512_mask_storeu_ps)
    """
    assert m <= 16
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, m):
        dst[i] = src[i]


@instr("{dst_data} = _mm512_setzero_ps();", _INCLUDE, cpu_features=_FEATURES)
def mm512_setzero_ps(dst: [f32][16] @ AVX512):
    """Set all 16 lanes to 0.0.

    >>> p = p.replace(p.find_loop('ji'), mm512_setzero_ps)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = 0.0


@instr("{dst_data} = _mm512_set1_ps({src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_set1_ps(dst: [f32][16] @ AVX512, src: [f32][1] @ DRAM):
    """Broadcast one float from memory into all 16 lanes.

    >>> p = p.replace(p.find_loop('ji'), mm512_set1_ps)     # a_vec[ji] = A[i, k]
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[0]


@instr("{dst_data} = _mm512_set1_ps({src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_set1_scalar_ps(dst: [f32][16] @ AVX512, src: f32):
    """Broadcast a scalar (a ``f32`` variable or argument, not a window)
    into all 16 lanes. For a literal, bind it to a scalar first
    (``stdlib.bind_const``), then hoist that out of the loop.

    >>> p = p.replace(p.find_loop('ji'), mm512_set1_scalar_ps)   # cv[ji] = c
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = src


# ---------------------------------------------------------------------------
# arithmetic

@instr("{dst_data} = _mm512_add_ps({a_data}, {b_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_add3_ps(dst: [f32][16] @ AVX512, a: [f32][16] @ AVX512,
                  b: [f32][16] @ AVX512):
    """``dst = a + b`` lane-wise, three operands (``mm256_add_ps``'s
    twin; ``mm512_add_ps`` is the accumulating ``dst += src``).

    >>> p = p.replace(p.find_loop('ji'), mm512_add3_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = _mm512_max_ps({a_data}, {b_data});", _INCLUDE,
       cpu_features=_FEATURES)
def mm512_max_ps(dst: [f32][16] @ AVX512, a: [f32][16] @ AVX512,
                 b: [f32][16] @ AVX512):
    """``dst = a > b ? a : b`` lane-wise: exactly ``vmaxps``, which returns
    its second operand when the two compare equal (+0.0, -0.0) or either is
    NaN. ``select(x, v, y, z)`` is ``x < v ? y : z``.

    >>> p = p.replace(p.find_loop('ji'), mm512_max_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] = select(b[i], a[i], a[i], b[i])


@instr("{dst_data} = _mm512_max_ps({src_data}, _mm512_setzero_ps());",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_relu_ps(dst: [f32][16] @ AVX512, src: [f32][16] @ AVX512):
    """``dst = relu(src)`` lane-wise in registers; -0.0 and NaN give +0.0
    (``vmaxps(src, +0.0)`` returns its second operand), as ``relu`` does.

    >>> p = p.replace(p.find_loop('ji'), mm512_relu_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        dst[i] = relu(src[i])


@instr("{dst_data} += exo_hl_mm512_reduce_add_ps({src_data});",
       _REDUCE_ADD, cpu_features=_FEATURES)
def mm512_reduce_add_ps(dst: [f32][1] @ DRAM, src: [f32][16] @ AVX512):
    """``dst[0] +=`` the sum of the 16 lanes, summed as a fixed pairwise
    tree (lanes ``i`` and ``i + 8``, then ``i + 4``, ``i + 2``, ``i + 1``):
    the body is that tree, so C and ``interpret`` agree bit for bit, also
    on sums that cancel. It matches a statement written as this tree (not
    a loop summing the lanes in index order, which rounds differently).

    >>> p = p.replace(p.find('s[_] += _'), mm512_reduce_add_ps)
    """
    assert stride(src, 0) == 1
    dst[0] += (((src[0] + src[8]) + (src[4] + src[12]))
               + ((src[2] + src[10]) + (src[6] + src[14]))) + \
        (((src[1] + src[9]) + (src[5] + src[13]))
         + ((src[3] + src[11]) + (src[7] + src[15])))

@instr("{dst_data} = _mm512_fmadd_ps({a_data}, {b_data}, {dst_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_fmadd_ps(dst: [f32][16] @ AVX512, a: [f32][16] @ AVX512,
                   b: [f32][16] @ AVX512):
    """``dst += a * b`` lane-wise, one rounding (fused).

    >>> p = p.replace(p.find_loop('ji'), mm512_fmadd_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = _mm512_fmadd_ps(_mm512_set1_ps({a_data}), {b_data}, "
       "{dst_data});", _INCLUDE, cpu_features=_FEATURES)
def mm512_fmadd_bcst_ps(dst: [f32][16] @ AVX512, a: [f32][1] @ DRAM,
                        b: [f32][16] @ AVX512):
    """``dst += a[0] * b``: the SGEMM micro-kernel's step (one element of A
    broadcast, times a register of B); gcc folds the broadcast into the FMA
    or shares it between FMAs.

    Replaces ``for ji in seq(0, 16): C_reg[ii, ji] += A[i, k] * B[k, 16*jo + ji]``:

    >>> p = p.replace(p.find_loop('ji'), mm512_fmadd_bcst_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = _mm512_add_ps({dst_data}, {src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_add_ps(dst: [f32][16] @ AVX512, src: [f32][16] @ AVX512):
    """``dst += src`` lane-wise (both in registers).

    >>> p = p.replace(p.find_loop('ji'), mm512_add_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        dst[i] += src[i]


@instr("{dst_data} = _mm512_mul_ps({a_data}, {b_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_mul_ps(dst: [f32][16] @ AVX512, a: [f32][16] @ AVX512,
                 b: [f32][16] @ AVX512):
    """``dst = a * b`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), mm512_mul_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] = a[i] * b[i]


@instr("{dst_data} = _mm512_add_ps({dst_data}, _mm512_loadu_ps(&{src_data}));",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_add_loadu_ps(dst: [f32][16] @ AVX512, src: [f32][16] @ DRAM):
    """``dst += src`` with ``src`` in memory (accumulating a staged tile).

    >>> p = p.replace(p.find_loop('ji'), mm512_add_loadu_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        dst[i] += src[i]


@instr("_mm512_storeu_ps(&{dst_data}, "
       "_mm512_add_ps(_mm512_loadu_ps(&{dst_data}), {src_data}));",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_reduce_storeu_ps(dst: [f32][16] @ DRAM, src: [f32][16] @ AVX512):
    """``dst += src`` into memory (the store of ``stage_mem(accum=True)``).

    >>> p = p.replace(p.find_loop('ji'), mm512_reduce_storeu_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        dst[i] += src[i]


# ---------------------------------------------------------------------------
# tails: the first m lanes only (prefix instructions)
#
# Each specification runs over all 16 lanes and tests ``i < m``, the shape
# ``stage_mem`` gives the copies of a window running past the buffer (and
# ``vectorize(tail='mask')`` the tail's body). Lanes ``m..15`` of the
# destination keep their values (merge masking: a masked add or multiply,
# an FMA blended into the destination by the mask). The
# tail's load is ``mm512_maskz_loadu_ps`` (its lanes past ``m`` are 0).

_MASK = "(__mmask16)((1u << {m}) - 1u)"


@instr("_mm512_mask_storeu_ps(&{dst_data}, " + _MASK + ", {src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_prefix_storeu_ps(m: size, dst: [f32][m] @ DRAM,
                           src: [f32][16] @ AVX512):
    """Store the first ``m`` lanes (memory past ``dst[m - 1]`` is not
    touched): the store of a tail staged by ``stage_mem`` past the end.

    >>> p = p.replace(p.find_loop('i0'), mm512_prefix_storeu_ps)
    >>> # for i0 in seq(0, 16): if i0 < n - 16 * io: y[16 * io + i0] = yv[i0]
    """
    assert m <= 16
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        if i < m:
            dst[i] = src[i]


@instr("{dst_data} = _mm512_mask_add_ps({dst_data}, " + _MASK +
       ", {dst_data}, {src_data});", _INCLUDE, cpu_features=_FEATURES)
def mm512_prefix_add_ps(m: size, dst: [f32][16] @ AVX512,
                        src: [f32][16] @ AVX512):
    """``dst += src`` in the first ``m`` lanes; the others keep ``dst``.

    >>> p = p.replace(p.find_loop('ii'), mm512_prefix_add_ps)
    """
    assert m <= 16
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        if i < m:
            dst[i] += src[i]


@instr("{dst_data} = _mm512_mask_mul_ps({dst_data}, " + _MASK +
       ", {a_data}, {b_data});", _INCLUDE, cpu_features=_FEATURES)
def mm512_prefix_mul_ps(m: size, dst: [f32][16] @ AVX512,
                        a: [f32][16] @ AVX512, b: [f32][16] @ AVX512):
    """``dst = a * b`` in the first ``m`` lanes; the others keep ``dst``.

    >>> p = p.replace(p.find_loop('ii'), mm512_prefix_mul_ps)
    """
    assert m <= 16
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        if i < m:
            dst[i] = a[i] * b[i]


@instr("{dst_data} = _mm512_mask_blend_ps(" + _MASK + ", {dst_data}, "
       "_mm512_fmadd_ps({a_data}, {b_data}, {dst_data}));", _INCLUDE,
       cpu_features=_FEATURES)
def mm512_prefix_fmadd_ps(m: size, dst: [f32][16] @ AVX512,
                          a: [f32][16] @ AVX512, b: [f32][16] @ AVX512):
    """``dst += a * b`` (fused) in the first ``m`` lanes; the others keep
    ``dst``.

    >>> p = p.replace(p.find_loop('ii'), mm512_prefix_fmadd_ps)
    """
    assert m <= 16
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        if i < m:
            dst[i] += a[i] * b[i]


@instr("{dst_data} = _mm512_mask_blend_ps(" + _MASK + ", {dst_data}, "
       "_mm512_fmadd_ps(_mm512_set1_ps({a_data}), {b_data}, {dst_data}));",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_prefix_fmadd_bcst_ps(m: size, dst: [f32][16] @ AVX512,
                               a: [f32][1] @ DRAM, b: [f32][16] @ AVX512):
    """``dst += a[0] * b`` (fused) in the first ``m`` lanes; the others
    keep ``dst``: the tail of ``y += a * x``.

    >>> p = p.replace(p.find_loop('ii'), mm512_prefix_fmadd_bcst_ps)
    """
    assert m <= 16
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        if i < m:
            dst[i] += a[0] * b[i]


# ---------------------------------------------------------------------------
# ui16: 32 lanes in __m512i (Halide's 16-bit blur)

@instr("{dst_data} = _mm512_loadu_si512((const void *)&{src_data});",
       _INCLUDE, cpu_features=_FEATURES)
def mm512_loadu_epi16(dst: [ui16][32] @ AVX512, src: [ui16][32] @ DRAM):
    """``dst = src``: 32 ui16 lanes, unaligned.

    >>> p = p.replace(p.find_loop('xi'), mm512_loadu_epi16)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 32):
        dst[i] = src[i]


@instr("_mm512_storeu_si512((void *)&{dst_data}, {src_data});", _INCLUDE,
       cpu_features=_FEATURES)
def mm512_storeu_epi16(dst: [ui16][32] @ DRAM, src: [ui16][32] @ AVX512):
    """``dst = src``: 32 ui16 lanes, unaligned.

    >>> p = p.replace(p.find_loop('xi'), mm512_storeu_epi16)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 32):
        dst[i] = src[i]


@instr("{dst_data} = _mm512_srli_epi16(_mm512_mulhi_epu16(_mm512_add_epi16("
       "_mm512_add_epi16({a_data}, {b_data}), {c_data}), "
       "_mm512_set1_epi16((short)-21845)), 1);", _INCLUDE,
       cpu_features=_FEATURES_BW)
def mm512_mean3_wrap_epu16(dst: [ui16][32] @ AVX512, a: [ui16][32] @ AVX512,
                           b: [ui16][32] @ AVX512, c: [ui16][32] @ AVX512):
    """``dst = ((a + b + c) % 65536) / 3`` lane-wise: a sum wrapping modulo
    2**16, divided by 3 exactly as ``mulhi(·, 43691) >> 1`` (the AVX-512
    twin of ``mm256_mean3_wrap_epu16``; needs AVX-512BW).

    >>> p = p.replace(p.find_loop('xi'), mm512_mean3_wrap_epu16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert stride(c, 0) == 1
    for i in seq(0, 32):
        dst[i] = ((a[i] + b[i] + c[i]) % 65536) / 3


INSTRS = (mm512_loadu_ps, mm512_storeu_ps, mm512_storeu_relu_ps,
          mm512_maskz_loadu_ps,
          mm512_mask_storeu_ps, mm512_setzero_ps, mm512_set1_ps,
          mm512_set1_scalar_ps, mm512_add3_ps, mm512_max_ps, mm512_relu_ps,
          mm512_reduce_add_ps,
          mm512_fmadd_ps, mm512_fmadd_bcst_ps, mm512_add_ps, mm512_mul_ps,
          mm512_add_loadu_ps, mm512_reduce_storeu_ps, mm512_prefix_storeu_ps,
          mm512_prefix_add_ps, mm512_prefix_mul_ps, mm512_prefix_fmadd_ps,
          mm512_prefix_fmadd_bcst_ps,
          mm512_loadu_epi16, mm512_storeu_epi16, mm512_mean3_wrap_epu16)
