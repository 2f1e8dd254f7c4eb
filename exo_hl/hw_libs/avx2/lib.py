"""AVX2 + FMA as a user library: 256-bit register memory and instructions.

Written exactly as a user would write it (public ``exo_hl`` API only). The
memory ``AVX2`` holds one kind of register per element type:

- ``__m256`` for f32, 8 lanes: a buffer ``f32[..., 8]``;
- ``__m256i`` for ui16, 16 lanes: a buffer ``ui16[..., 16]`` (image
  kernels on 16-bit pixels).

A buffer becomes an array of registers that only the instructions below may
touch. Each instruction's body is its exact meaning (what ``interpret`` runs
and what ``replace`` matches); its template is the intrinsic emitted in C,
and it declares the CPU features that intrinsic needs (``avx2``; the fused
multiply-adds ``avx2`` and ``fma``).

Integer bodies are exact on the whole ui16 range. Data arithmetic on ui16
values happens in ``int`` (C's promotion) and every write wraps to 16 bits,
so ``a + b`` is the wrapping ``_mm256_add_epi16``. The bodies that divide
(``avg``, ``mulhi``, ``srli``) divide non-negative values by powers of two
only, written so that they mean the same whether ``/`` is read as C's
integer division or as exact division with the write truncating the
result, and keep every intermediate below 2**31, so a body compiled as
plain C never overflows ``int``.

Division by a constant uses the multiply-high: for every ui16 ``x``,
``x // 3 == mulhi(x, 43691) >> 1`` (43691 = ceil(2**17 / 3); checked over
all 65536 values by the tests). The shorter ``mulhi(x, 21846)`` is *not*
``x // 3`` on the full range: it is wrong for 10923 values from 32768 up.

Why one module of this size: it is the whole library a user imports for
one register memory; the instructions share the memory, the C header and
helper snippets and ``INSTRS`` (what ``replace_all`` and ``vectorize``
select from), and each is a short, independent definition.
"""
from __future__ import annotations

from exo_hl import DRAM, bf16, f32, i8, instr, seq, size, ui8, ui16
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.hw_libs.vector_registers import VectorRegisters

# ``select`` in mm256_max_ps and ``relu`` in mm256_storeu_relu_ps are
# exo_hl's built-in externs (bodies are parsed
# by exo_hl, never run by Python).

LANES = 8      # f32 lanes of one ymm register
LANES16 = 16   # ui16 lanes of one ymm register

_AVX = {"avx2"}
_FMA = {"avx2", "fma"}

# Emitted once per generated .c file: the header, by the memory and every
# instruction; and each helper function, by the instructions that call it
# (only then: an unused static function is a warning). The helpers are
# static inline functions with their own target attribute, so a plain
# `cc -O2` build compiles them. Under an emulation layer that supplies AVX2
# in portable C (SIMDe without native AVX2) they carry none, so the
# compiler never emits AVX2 instructions for them.
_INCLUDE = "#include <immintrin.h>\n"

_HELPER = _INCLUDE + """
#ifndef EXO_HL_AVX2_HELPER
#if (defined(__GNUC__) || defined(__clang__)) && \\
    !(defined(SIMDE_VERSION) && !defined(SIMDE_X86_AVX2_NATIVE))
#define EXO_HL_AVX2_HELPER static inline __attribute__((target("avx2")))
#else
#define EXO_HL_AVX2_HELPER static inline
#endif
#endif
"""

_TAIL_MASK = _HELPER + """
/* lanes 0 .. m-1 all ones, the others zero: the mask of an m-float tail */
EXO_HL_AVX2_HELPER __m256i exo_hl_mm256_tail_mask(int m) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(m),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
"""

_REDUCE_ADD = _HELPER + """
/* acc + v[0] + v[1] + ... + v[7], added in lane order as the body adds
   (a pairwise sum rounds differently: 1e8 + 1 - 1e8 + 1 is 1 in order) */
EXO_HL_AVX2_HELPER float exo_hl_mm256_reduce_add_ps(float acc, __m256 v) {
    float lane[8];
    _mm256_storeu_ps(lane, v);
    for (int i = 0; i < 8; i++)
        acc += lane[i];
    return acc;
}
"""

_MEAN3 = _HELPER + """
/* (a + b + c) / 3 lane-wise, exact for all 16-bit inputs though the sum
   needs 18 bits: with q = (a>>2) + (b>>2) + (c>>2) and
   r = (a&3) + (b&3) + (c&3), a + b + c = 4q + r, so the quotient is
   q + (q + r) / 3, where q + r <= 49158 fits a lane and x / 3 is
   mulhi(x, 43691) >> 1 for every 16-bit x (43691 - 65536 = -21845). */
EXO_HL_AVX2_HELPER __m256i exo_hl_mm256_mean3_epu16(__m256i a, __m256i b,
                                                     __m256i c) {
    const __m256i low2 = _mm256_set1_epi16(3);
    __m256i q = _mm256_add_epi16(
        _mm256_add_epi16(_mm256_srli_epi16(a, 2), _mm256_srli_epi16(b, 2)),
        _mm256_srli_epi16(c, 2));
    __m256i r = _mm256_add_epi16(
        _mm256_add_epi16(_mm256_and_si256(a, low2), _mm256_and_si256(b, low2)),
        _mm256_and_si256(c, low2));
    __m256i d = _mm256_srli_epi16(
        _mm256_mulhi_epu16(_mm256_add_epi16(q, r),
                           _mm256_set1_epi16((short)-21845)), 1);
    return _mm256_add_epi16(q, d);
}
"""


class AVX2(VectorRegisters):
    """256-bit vector registers: ``__m256`` (8 x f32), ``__m256i``
    (16 x ui16).

    A buffer's last dimension must be exactly one register (8 floats or 16
    ui16) and its other sizes constant: ``t: f32[8]`` is one register,
    ``t: f32[6, 2, 8]`` an array of 12, ``p: ui16[3, 16]`` an array of 3.

    >>> p = p.set_memory('C_reg', AVX2)        # C_reg: f32[4, 8] -> 4 registers
    """

    registers = {"float": ("__m256", LANES),
                 "uint16_t": ("__m256i", LANES16)}
    cpu_features = frozenset(_AVX)


# ===========================================================================
# f32: 8 lanes in __m256
# ---------------------------------------------------------------------------
# loads, stores, constants

@instr("{dst_data} = _mm256_loadu_ps(&{src_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_loadu_ps(dst: [f32][8] @ AVX2, src: [f32][8] @ DRAM):
    """Load 8 floats from memory into a register (unaligned).

    >>> p = p.replace(p.find_loop('ji'), mm256_loadu_ps)    # C_reg[ji] = C[...]
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[i]


@instr("_mm256_storeu_ps(&{dst_data}, {src_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_storeu_ps(dst: [f32][8] @ DRAM, src: [f32][8] @ AVX2):
    """Store a register's 8 floats to memory (unaligned).

    >>> p = p.replace(p.find_loop('ji'), mm256_storeu_ps)   # C[...] = C_reg[ji]
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[i]


@instr("{dst_data} = _mm256_maskload_ps(&{src_data}, "
       "exo_hl_mm256_tail_mask((int)({m})));", _TAIL_MASK,
       cpu_features=_AVX)
def mm256_maskload_ps(m: size, dst: [f32][8] @ AVX2, src: [f32][m] @ DRAM):
    """Load the first ``m`` floats, zero the other lanes (a tail of ``m``
    floats; memory past ``src[m - 1]`` is not read).

    >>> p = p.replace(p.find_loop('ji'), mm256_maskload_ps)  # the last, partial tile
    """
    assert m <= 8
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        if i < m:
            dst[i] = src[i]
        else:
            dst[i] = 0.0


@instr("_mm256_maskstore_ps(&{dst_data}, "
       "exo_hl_mm256_tail_mask((int)({m})), {src_data});", _TAIL_MASK,
       cpu_features=_AVX)
def mm256_maskstore_ps(m: size, dst: [f32][m] @ DRAM, src: [f32][8] @ AVX2):
    """Store the first ``m`` lanes (a tail of ``m`` floats); memory past
    ``dst[m - 1]`` is not touched.

    >>> p = p.replace(p.find_loop('ji'), mm256_maskstore_ps)
    """
    assert m <= 8
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, m):
        dst[i] = src[i]


@instr("_mm256_storeu_ps(&{dst_data}, "
       "_mm256_max_ps({src_data}, _mm256_setzero_ps()));", _INCLUDE,
       cpu_features=_AVX)
def mm256_storeu_relu_ps(dst: [f32][8] @ DRAM, src: [f32][8] @ AVX2):
    """Store ``relu(src)`` (8 floats, unaligned): a ReLU fused into the
    store of an accumulator tile. ``vmaxps(src, 0)`` returns its second
    operand, +0.0, when ``src`` is -0.0 or NaN, which is what ``relu``
    means in C (``x > 0 ? x : 0``).

    >>> p = p.replace(p.find_loop('ol'), mm256_storeu_relu_ps)  # out[..] = relu(acc[..])
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = relu(src[i])


@instr("{dst_data} = _mm256_setzero_ps();", _INCLUDE, cpu_features=_AVX)
def mm256_setzero_ps(dst: [f32][8] @ AVX2):
    """Set all 8 lanes to 0.0.

    >>> p = p.replace(p.find_loop('ji'), mm256_setzero_ps)  # acc[ji] = 0.0
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = 0.0


@instr("{dst_data} = _mm256_broadcast_ss(&{src_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_broadcast_ss(dst: [f32][8] @ AVX2, src: [f32][1] @ DRAM):
    """Broadcast one float from memory into all 8 lanes.

    >>> p = p.replace(p.find_loop('ji'), mm256_broadcast_ss)  # a_vec[ji] = A[i, k]
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[0]


@instr("{dst_data} = _mm256_set1_ps({src_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_set1_scalar_ps(dst: [f32][8] @ AVX2, src: f32):
    """Broadcast a scalar (a ``f32`` variable or argument, not a window)
    into all 8 lanes. For a literal, bind it to a scalar first
    (``stdlib.bind_const``), then hoist that out of the loop.

    >>> p = p.replace(p.find_loop('ji'), mm256_set1_scalar_ps)   # cv[ji] = c
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src


# ---------------------------------------------------------------------------
# arithmetic

@instr("{dst_data} = _mm256_add_ps({a_data}, {b_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_add_ps(dst: [f32][8] @ AVX2, a: [f32][8] @ AVX2,
                 b: [f32][8] @ AVX2):
    """``dst = a + b`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), mm256_add_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = _mm256_mul_ps({a_data}, {b_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_mul_ps(dst: [f32][8] @ AVX2, a: [f32][8] @ AVX2,
                 b: [f32][8] @ AVX2):
    """``dst = a * b`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), mm256_mul_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] = a[i] * b[i]


@instr("{dst_data} = _mm256_max_ps({a_data}, {b_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_max_ps(dst: [f32][8] @ AVX2, a: [f32][8] @ AVX2,
                 b: [f32][8] @ AVX2):
    """``dst = a > b ? a : b`` lane-wise: exactly ``vmaxps``, which returns
    its second operand when the two compare equal (+0.0, -0.0) or either is
    NaN. ``select(x, v, y, z)`` is ``x < v ? y : z``.

    >>> p = p.replace(p.find_loop('ji'), mm256_max_ps)      # a ReLU against zeros
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] = select(b[i], a[i], a[i], b[i])


@instr("{dst_data} = _mm256_max_ps({src_data}, _mm256_setzero_ps());",
       _INCLUDE, cpu_features=_AVX)
def mm256_relu_ps(dst: [f32][8] @ AVX2, src: [f32][8] @ AVX2):
    """``dst = relu(src)`` lane-wise in registers; -0.0 and NaN give +0.0
    (``vmaxps(src, +0.0)`` returns its second operand), as ``relu`` does.

    >>> p = p.replace(p.find_loop('ji'), mm256_relu_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 8):
        dst[i] = relu(src[i])


@instr("{dst_data} = _mm256_fmadd_ps({a_data}, {b_data}, {dst_data});",
       _INCLUDE, cpu_features=_FMA)
def mm256_fmadd_ps(dst: [f32][8] @ AVX2, a: [f32][8] @ AVX2,
                   b: [f32][8] @ AVX2):
    """``dst += a * b`` lane-wise, one rounding (fused).

    >>> p = p.replace(p.find_loop('ji'), mm256_fmadd_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = _mm256_fmadd_ps(_mm256_broadcast_ss(&{a_data}), "
       "{b_data}, {dst_data});", _INCLUDE, cpu_features=_FMA)
def mm256_fmadd_bcst_ps(dst: [f32][8] @ AVX2, a: [f32][1] @ DRAM,
                        b: [f32][8] @ AVX2):
    """``dst += a[0] * b``: the SGEMM micro-kernel's step (one element of A
    broadcast, times a register of B).

    Replaces ``for ji in seq(0, 8): C_reg[ii, ji] += A[i, k] * B[k, 8*jo + ji]``:

    >>> p = p.replace(p.find_loop('ji'), mm256_fmadd_bcst_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = exo_hl_mm256_reduce_add_ps({dst_data}, {src_data});",
       _REDUCE_ADD,
       cpu_features=_AVX)
def mm256_reduce_add_ps(dst: [f32][1] @ DRAM, src: [f32][8] @ AVX2):
    """``dst[0] += src[0] + ... + src[7]`` (a dot product's last step).

    The C adds the lanes one at a time in index order, as the body does,
    so results equal ``interpret()``'s bit for bit (a pairwise sum, the
    fast horizontal add, gave 0.0 for 1e8 + 1 - 1e8 + 1).

    >>> p = p.replace(p.find_loop('ji'), mm256_reduce_add_ps)   # s += acc[ji]
    """
    assert stride(src, 0) == 1
    for i in seq(0, 8):
        dst[0] += src[i]


# ===========================================================================
# ui16: 16 lanes in __m256i
# ---------------------------------------------------------------------------
# loads, stores, constants

@instr("{dst_data} = _mm256_loadu_si256((const __m256i *)&{src_data});",
       _INCLUDE, cpu_features=_AVX)
def mm256_loadu_epi16(dst: [ui16][16] @ AVX2, src: [ui16][16] @ DRAM):
    """Load 16 ui16 from memory into a register (unaligned).

    >>> p = p.replace(p.find_loop('ji'), mm256_loadu_epi16)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[i]


@instr("_mm256_storeu_si256((__m256i *)&{dst_data}, {src_data});",
       _INCLUDE, cpu_features=_AVX)
def mm256_storeu_epi16(dst: [ui16][16] @ DRAM, src: [ui16][16] @ AVX2):
    """Store a register's 16 ui16 to memory (unaligned).

    >>> p = p.replace(p.find_loop('ji'), mm256_storeu_epi16)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[i]


@instr("{dst_data} = _mm256_set1_epi16((short){src_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_set1_epi16(dst: [ui16][16] @ AVX2, src: [ui16][1] @ DRAM):
    """Broadcast one ui16 from memory into all 16 lanes (a constant such as
    a multiplier for ``mm256_mulhi_epu16``).

    >>> p = p.replace(p.find_loop('ji'), mm256_set1_epi16)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[0]


# ---------------------------------------------------------------------------
# arithmetic

@instr("{dst_data} = _mm256_add_epi16({a_data}, {b_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_add_epi16(dst: [ui16][16] @ AVX2, a: [ui16][16] @ AVX2,
                    b: [ui16][16] @ AVX2):
    """``dst = a + b`` lane-wise, modulo 2**16 (the write wraps).

    >>> p = p.replace(p.find_loop('ji'), mm256_add_epi16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = _mm256_avg_epu16({a_data}, {b_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_avg_epu16(dst: [ui16][16] @ AVX2, a: [ui16][16] @ AVX2,
                    b: [ui16][16] @ AVX2):
    """``dst = (a + b + 1) >> 1`` lane-wise, without overflow (the sum is
    formed in ``int``, at most 131071).

    >>> p = p.replace(p.find_loop('ji'), mm256_avg_epu16)   # a box blur's rounding mean
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] = (a[i] + b[i] + 1) / 2


@instr("{dst_data} = _mm256_mulhi_epu16({a_data}, {b_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_mulhi_epu16(dst: [ui16][16] @ AVX2, a: [ui16][16] @ AVX2,
                      b: [ui16][16] @ AVX2):
    """``dst = (a * b) >> 16`` lane-wise (the high half of the 32-bit
    product). Written with ``a = 256 * hi + lo`` so that no intermediate
    reaches 2**31: ``(hi * b + (lo * b >> 8)) >> 8``.

    >>> p = p.replace(p.find_loop('ji'), mm256_mulhi_epu16)  # divide by a constant
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] = (a[i] / 256 * b[i] +
                  (a[i] - a[i] / 256 * 256) * b[i] / 256) / 256


@instr("{dst_data} = _mm256_srli_epi16({src_data}, (int)({k}));", _INCLUDE,
       cpu_features=_AVX)
def mm256_srli_epi16(k: size, dst: [ui16][16] @ AVX2,
                     src: [ui16][16] @ AVX2):
    """``dst = src >> k`` lane-wise (logical), ``1 <= k <= 15``; pass a
    constant ``k``. The body halves ``k`` times (``x >> k`` is ``x``
    halved, rounding down, ``k`` times).

    >>> p = p.replace(p.find_loop('ji'), mm256_srli_epi16)
    """
    assert k <= 15
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 16):
        dst[i] = src[i]
    for j in seq(0, k):
        for i in seq(0, 16):
            dst[i] = dst[i] / 2


# ---------------------------------------------------------------------------
# f32 tails: the first m lanes only (prefix instructions)
#
# Each specification runs over all 8 lanes and tests ``i < m``, the shape
# ``stage_mem`` gives the copies of a window running past the buffer (and
# ``vectorize(tail='mask')`` gives the tail's body). Lanes ``m..7`` of the
# destination keep their values: the arithmetic computes all lanes and
# blends the first ``m`` into the destination, a memory store is masked.
# The tail's load is ``mm256_maskload_ps`` (its lanes past ``m`` are 0).

_BLEND = ("{dst_data} = _mm256_blendv_ps({dst_data}, %s, "
          "_mm256_castsi256_ps(exo_hl_mm256_tail_mask((int)({m}))));")


@instr("_mm256_maskstore_ps(&{dst_data}, "
       "exo_hl_mm256_tail_mask((int)({m})), {src_data});", _TAIL_MASK,
       cpu_features=_AVX)
def mm256_prefix_store_ps(m: size, dst: [f32][m] @ DRAM,
                          src: [f32][8] @ AVX2):
    """Store the first ``m`` lanes (memory past ``dst[m - 1]`` is not
    touched): the store of a tail staged by ``stage_mem`` past the end.

    >>> p = p.replace(p.find_loop('i0'), mm256_prefix_store_ps)
    >>> # for i0 in seq(0, 8): if i0 < n - 8 * io: y[8 * io + i0] = yv[i0]
    """
    assert m <= 8
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        if i < m:
            dst[i] = src[i]


@instr(_BLEND % "_mm256_add_ps({a_data}, {b_data})", _TAIL_MASK,
       cpu_features=_AVX)
def mm256_prefix_add_ps(m: size, dst: [f32][8] @ AVX2, a: [f32][8] @ AVX2,
                        b: [f32][8] @ AVX2):
    """``dst = a + b`` in the first ``m`` lanes; the others keep ``dst``.

    >>> p = p.replace(p.find_loop('ii'), mm256_prefix_add_ps)
    >>> # for ii in seq(0, 8): if ii < n - 8 * io: zv[ii] = xv[ii] + yv[ii]
    """
    assert m <= 8
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        if i < m:
            dst[i] = a[i] + b[i]


@instr(_BLEND % "_mm256_mul_ps({a_data}, {b_data})", _TAIL_MASK,
       cpu_features=_AVX)
def mm256_prefix_mul_ps(m: size, dst: [f32][8] @ AVX2, a: [f32][8] @ AVX2,
                        b: [f32][8] @ AVX2):
    """``dst = a * b`` in the first ``m`` lanes; the others keep ``dst``.

    >>> p = p.replace(p.find_loop('ii'), mm256_prefix_mul_ps)
    """
    assert m <= 8
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        if i < m:
            dst[i] = a[i] * b[i]


@instr(_BLEND % "_mm256_fmadd_ps({a_data}, {b_data}, {dst_data})",
       _TAIL_MASK, cpu_features=_FMA)
def mm256_prefix_fmadd_ps(m: size, dst: [f32][8] @ AVX2, a: [f32][8] @ AVX2,
                          b: [f32][8] @ AVX2):
    """``dst += a * b`` (fused) in the first ``m`` lanes; the others keep
    ``dst``.

    >>> p = p.replace(p.find_loop('ii'), mm256_prefix_fmadd_ps)
    """
    assert m <= 8
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        if i < m:
            dst[i] += a[i] * b[i]


@instr(_BLEND % ("_mm256_fmadd_ps(_mm256_broadcast_ss(&{a_data}), "
                 "{b_data}, {dst_data})"), _TAIL_MASK, cpu_features=_FMA)
def mm256_prefix_fmadd_bcst_ps(m: size, dst: [f32][8] @ AVX2,
                               a: [f32][1] @ DRAM, b: [f32][8] @ AVX2):
    """``dst += a[0] * b`` (fused) in the first ``m`` lanes; the others
    keep ``dst``: the tail of ``y += a * x``.

    >>> p = p.replace(p.find_loop('ii'), mm256_prefix_fmadd_bcst_ps)
    >>> # for ii in seq(0, 8): if ii < n - 8 * io: yv[ii] += a[0] * xv[ii]
    """
    assert m <= 8
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        if i < m:
            dst[i] += a[0] * b[i]


@instr("{dst_data} = exo_hl_mm256_mean3_epu16({a_data}, {b_data}, {c_data});",
       _MEAN3, cpu_features=_AVX)
def mm256_mean3_epu16(dst: [ui16][16] @ AVX2, a: [ui16][16] @ AVX2,
                      b: [ui16][16] @ AVX2, c: [ui16][16] @ AVX2):
    """``dst = (a + b + c) / 3`` lane-wise, the exact floor of the mean of
    three on the whole ui16 range (the sum, up to 196605, is formed in
    ``int``): one stage of a 3x3 box blur. Seven 16-bit operations on the
    quarters and low bits of the inputs, then a multiply-high.

    >>> p = p.replace(p.find_loop('xi'), mm256_mean3_epu16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert stride(c, 0) == 1
    for i in seq(0, 16):
        dst[i] = (a[i] + b[i] + c[i]) / 3


@instr("{dst_data} = _mm256_srli_epi16(_mm256_mulhi_epu16(_mm256_add_epi16("
       "_mm256_add_epi16({a_data}, {b_data}), {c_data}), "
       "_mm256_set1_epi16((short)-21845)), 1);", _INCLUDE, cpu_features=_AVX)
def mm256_mean3_wrap_epu16(dst: [ui16][16] @ AVX2, a: [ui16][16] @ AVX2,
                           b: [ui16][16] @ AVX2, c: [ui16][16] @ AVX2):
    """``dst = ((a + b + c) % 65536) / 3`` lane-wise: the sum wraps modulo
    2**16 as in 16-bit arithmetic (Halide's ``apps/blur`` stage), then is
    divided by 3 exactly with ``mulhi(·, 43691) >> 1``. Four operations.

    >>> p = p.replace(p.find_loop('xi'), mm256_mean3_wrap_epu16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert stride(c, 0) == 1
    for i in seq(0, 16):
        dst[i] = ((a[i] + b[i] + c[i]) % 65536) / 3



# ---------------------------------------------------------------------------
# cache hints (no values: not in INSTRS, which replace_all and vectorize
# select from; put in place with ``Procedure.insert_noop_call``)

@instr("_mm_prefetch((const char *)&{src_data}, _MM_HINT_T0);", _INCLUDE)
def mm_prefetch_t0(src: [f32][1] @ DRAM):
    """Prefetch the cache line holding ``src[0]`` into every cache level
    (``prefetcht0``). SSE, so any x86-64 (no CPU feature declared); the
    AVX-512 library exports the same instruction.

    The body reads ``src[0]`` into a local and changes nothing else: the
    effect analysis sees a read of the window and no write, so
    ``insert_noop_call`` may add the call anywhere, and the bounds check
    proves the address inside its buffer. The hardware would not fault
    on an address outside, but C makes computing such a pointer undefined,
    so a schedule may not prefetch past a buffer's end: guard the call
    (or clamp the index) at the last iterations instead.

    >>> p = p.insert_noop_call(p.find_loop('k').body()[0].before(),
    ...                        mm_prefetch_t0, ['B[k + 8, j:j + 1]'])
    """
    t: f32 @ DRAM
    t = src[0]


# The same prefetch for the other element types a packed panel may hold
# (the AVX-512 VNNI/BF16 and AMX GEMMs pack i8, ui8 and bf16 operands): a
# window must match the callee's type, so each type needs its own
# instruction. Same template, same read-only body.

@instr("_mm_prefetch((const char *)&{src_data}, _MM_HINT_T0);", _INCLUDE)
def mm_prefetch_t0_epi8(src: [i8][1] @ DRAM):
    """``prefetcht0`` of the line holding ``src[0]``, an ``i8`` (as
    ``mm_prefetch_t0``: reads ``src[0]``, changes nothing).

    >>> p = p.insert_noop_call(gap, mm_prefetch_t0_epi8,
    ...                        ['B_pack[jo, ko, kq + 8, 0, 0, 0:1]'])
    """
    t: i8 @ DRAM
    t = src[0]


@instr("_mm_prefetch((const char *)&{src_data}, _MM_HINT_T0);", _INCLUDE)
def mm_prefetch_t0_epu8(src: [ui8][1] @ DRAM):
    """``prefetcht0`` of the line holding ``src[0]``, a ``ui8`` (as
    ``mm_prefetch_t0``: reads ``src[0]``, changes nothing).

    >>> p = p.insert_noop_call(gap, mm_prefetch_t0_epu8,
    ...                        ['A[i, k + 64:k + 65]'])
    """
    t: ui8 @ DRAM
    t = src[0]


@instr("_mm_prefetch((const char *)&{src_data}, _MM_HINT_T0);", _INCLUDE)
def mm_prefetch_t0_bf16(src: [bf16][1] @ DRAM):
    """``prefetcht0`` of the line holding ``src[0]``, a ``bf16`` (as
    ``mm_prefetch_t0``: reads ``src[0]``, changes nothing).

    >>> p = p.insert_noop_call(gap, mm_prefetch_t0_bf16,
    ...                        ['B_pack[jo, ko, kk + 8, 0, 0, 0:1]'])
    """
    t: bf16 @ DRAM
    t = src[0]

INSTRS = (mm256_loadu_ps, mm256_storeu_ps, mm256_storeu_relu_ps,
          mm256_maskload_ps,
          mm256_maskstore_ps, mm256_setzero_ps, mm256_broadcast_ss,
          mm256_set1_scalar_ps, mm256_relu_ps,
          mm256_add_ps, mm256_mul_ps, mm256_max_ps, mm256_fmadd_ps,
          mm256_fmadd_bcst_ps, mm256_reduce_add_ps,
          mm256_loadu_epi16, mm256_storeu_epi16, mm256_set1_epi16,
          mm256_add_epi16, mm256_avg_epu16, mm256_mulhi_epu16,
          mm256_srli_epi16, mm256_prefix_store_ps, mm256_prefix_add_ps,
          mm256_prefix_mul_ps, mm256_prefix_fmadd_ps,
          mm256_prefix_fmadd_bcst_ps, mm256_mean3_epu16,
          mm256_mean3_wrap_epu16)
