"""ARM NEON (AArch64 Advanced SIMD) as a user library: 128-bit registers.

Written exactly as a user would write it (public ``exo_hl`` API only). The
memory ``Neon`` holds one kind of register per element type:

- ``float32x4_t`` for f32, 4 lanes: a buffer ``f32[..., 4]``;
- ``float16x8_t`` for f16, 8 lanes: a buffer ``f16[..., 8]`` (needs the
  ``fp16`` feature: ARMv8.2-A half-precision arithmetic);
- ``float64x2_t`` for f64, 2 lanes: a buffer ``f64[..., 2]``;
- ``uint16x8_t`` for ui16, 8 lanes: a buffer ``ui16[..., 8]`` (image
  kernels on 16-bit pixels, such as apps/blur).

Each instruction's body is its exact meaning (what ``interpret`` runs and
what ``replace`` matches); its template is the intrinsic emitted in C; it
declares the CPU features it needs (``neon``; the f16 arithmetic ``neon``
and ``fp16``). Nothing here runs on x86: ``compile(target='aarch64')``
cross-compiles and runs the code under ``qemu-aarch64`` (docs/arm_riscv.md).

Rounding: ``vmlaq`` (``neon_vmla_*``) is a multiply then an add, two
roundings, as its body; the ``vfma*`` instructions (``neon_vfmla_*``) are
fused, one rounding, the documented exception (as x86's ``fmadd``): they
equal their bodies wherever the product is exact. ``neon_reduce_add_4xf32``
adds lanes in index order (``vaddvq_f32`` adds pairwise and rounds
differently), ``neon_vmax_4xf32`` is ``a > b ? a : b`` (a compare and a
select: ``vmaxq_f32`` returns NaN for a NaN operand and +0.0 for
``max(-0.0, +0.0)``, which no body of ours spells).

Integer bodies (ui16) are exact on the whole ui16 range, under the rules
the AVX2 library's are (docs/semantics.md): data arithmetic on ui16
happens in ``int`` and every write wraps to 16 bits, so ``a + b`` is the
wrapping ``vaddq_u16``; division by 3 is ``(x * 43691) >> 17``, exact for
every 16-bit ``x``, computed with the widening multiply ``vmull_u16``
(the 32-bit products) and a narrowing shift.

Why one module of this size: it is the whole library a user imports for
one register memory, as ``avx2/lib.py`` is; each instruction is a short,
independent definition sharing the header and helpers.
"""
from __future__ import annotations

from exo_hl import DRAM, f16, f32, f64, index, instr, seq, size, ui16
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.hw_libs.vector_registers import VectorRegisters

LANES = 4      # f32 lanes of one q register
LANES16 = 8    # f16 lanes
LANES64 = 2    # f64 lanes
LANESU16 = 8   # ui16 lanes

_NEON = {"neon"}
_FP16 = {"neon", "fp16"}

_INCLUDE = "#include <arm_neon.h>\n"

_PREFIX = _INCLUDE + """
/* the first m floats of src, the other lanes 0.0f (memory past src[m-1]
   is not read) */
static inline float32x4_t exo_hl_neon_ld_prefix_f32(const float *src,
                                                    int m) {
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < m; i++)
        t[i] = src[i];
    return vld1q_f32(t);
}
/* store the first m lanes of v (memory past dst[m-1] is not touched) */
static inline void exo_hl_neon_st_prefix_f32(float *dst, float32x4_t v,
                                             int m) {
    float t[4];
    vst1q_f32(t, v);
    for (int i = 0; i < m; i++)
        dst[i] = t[i];
}
"""

_REDUCE = _INCLUDE + """
/* acc + v[0] + v[1] + v[2] + v[3], in lane order as the body adds
   (vaddvq_f32 adds pairwise: 1e8 + 1 - 1e8 + 1 would give 0) */
static inline float exo_hl_neon_reduce_add_f32(float acc, float32x4_t v) {
    acc += vgetq_lane_f32(v, 0);
    acc += vgetq_lane_f32(v, 1);
    acc += vgetq_lane_f32(v, 2);
    acc += vgetq_lane_f32(v, 3);
    return acc;
}
"""

_DIV3 = _INCLUDE + """
/* x / 3 lane-wise for every 16-bit x: (x * 43691) >> 17, 43691 =
   ceil(2**17 / 3); the products (below 2**32) by the widening multiply,
   their high halves by a narrowing shift, then one more shift (guarded:
   both the mean3 helpers' snippets carry it) */
#ifndef EXO_HL_NEON_DIV3_U16
#define EXO_HL_NEON_DIV3_U16
static inline uint16x8_t exo_hl_neon_div3_u16(uint16x8_t x) {
    const uint16x4_t k = vdup_n_u16(43691);
    uint32x4_t lo = vmull_u16(vget_low_u16(x), k);
    uint32x4_t hi = vmull_u16(vget_high_u16(x), k);
    return vshrq_n_u16(vcombine_u16(vshrn_n_u32(lo, 16),
                                    vshrn_n_u32(hi, 16)), 1);
}
#endif
"""

_MEAN3 = _DIV3 + """
/* (a + b + c) / 3 lane-wise, exact for all 16-bit inputs though the sum
   needs 18 bits: with q = (a>>2) + (b>>2) + (c>>2) and
   r = (a&3) + (b&3) + (c&3), a + b + c = 4q + r, so the quotient is
   q + (q + r) / 3, where q + r <= 49158 fits a lane */
static inline uint16x8_t exo_hl_neon_mean3_u16(uint16x8_t a, uint16x8_t b,
                                               uint16x8_t c) {
    const uint16x8_t low2 = vdupq_n_u16(3);
    uint16x8_t q = vaddq_u16(vaddq_u16(vshrq_n_u16(a, 2), vshrq_n_u16(b, 2)),
                             vshrq_n_u16(c, 2));
    uint16x8_t r = vaddq_u16(vaddq_u16(vandq_u16(a, low2),
                                       vandq_u16(b, low2)),
                             vandq_u16(c, low2));
    return vaddq_u16(q, exo_hl_neon_div3_u16(vaddq_u16(q, r)));
}
"""


class Neon(VectorRegisters):
    """128-bit NEON q registers: ``float32x4_t`` (4 x f32),
    ``float16x8_t`` (8 x f16, with ``fp16``), ``float64x2_t`` (2 x f64),
    ``uint16x8_t`` (8 x ui16).

    >>> p = p.set_memory('C_reg', Neon)        # C_reg: f32[8, 3, 4] -> 24 registers
    """

    registers = {"float": ("float32x4_t", LANES),
                 "_Float16": ("float16x8_t", LANES16),
                 "double": ("float64x2_t", LANES64),
                 "uint16_t": ("uint16x8_t", LANESU16)}
    cpu_features = frozenset(_NEON)

    @classmethod
    def global_(cls):
        return _INCLUDE


# ===========================================================================
# f32: 4 lanes in float32x4_t
# ---------------------------------------------------------------------------
# loads, stores, constants

@instr("{dst_data} = vld1q_f32(&{src_data});", _INCLUDE, cpu_features=_NEON)
def neon_vld_4xf32(dst: [f32][4] @ Neon, src: [f32][4] @ DRAM):
    """Load 4 floats from memory into a register.

    >>> p = p.replace(p.find_loop('ji'), neon_vld_4xf32)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 4):
        dst[i] = src[i]


@instr("vst1q_f32(&{dst_data}, {src_data});", _INCLUDE, cpu_features=_NEON)
def neon_vst_4xf32(dst: [f32][4] @ DRAM, src: [f32][4] @ Neon):
    """Store a register's 4 floats to memory.

    >>> p = p.replace(p.find_loop('ji'), neon_vst_4xf32)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 4):
        dst[i] = src[i]


@instr("{dst_data} = exo_hl_neon_ld_prefix_f32(&{src_data}, (int)({m}));",
       _PREFIX, cpu_features=_NEON)
def neon_vld_prefix_4xf32(m: size, dst: [f32][4] @ Neon,
                          src: [f32][m] @ DRAM):
    """Load the first ``m`` floats, zero the other lanes (a tail of ``m``
    floats; memory past ``src[m - 1]`` is not read).

    >>> p = p.replace(p.find_loop('ji'), neon_vld_prefix_4xf32)
    """
    assert m <= 4
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 4):
        if i < m:
            dst[i] = src[i]
        else:
            dst[i] = 0.0


@instr("exo_hl_neon_st_prefix_f32(&{dst_data}, {src_data}, (int)({m}));",
       _PREFIX, cpu_features=_NEON)
def neon_vst_prefix_4xf32(m: size, dst: [f32][m] @ DRAM,
                          src: [f32][4] @ Neon):
    """Store the first ``m`` lanes (memory past ``dst[m - 1]`` is not
    touched): the store of a tail.

    >>> p = p.replace(p.find_loop('ji'), neon_vst_prefix_4xf32)
    """
    assert m <= 4
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, m):
        dst[i] = src[i]


@instr("{dst_data} = vld1q_dup_f32(&{src_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_broadcast_4xf32(dst: [f32][4] @ Neon, src: [f32][1] @ DRAM):
    """Broadcast one float from memory into all 4 lanes.

    >>> p = p.replace(p.find_loop('ji'), neon_broadcast_4xf32)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 4):
        dst[i] = src[0]


@instr("{dst_data} = vdupq_n_f32({src_data});", _INCLUDE, cpu_features=_NEON)
def neon_broadcast_4xf32_scalar(dst: [f32][4] @ Neon, src: f32):
    """Broadcast a scalar (a ``f32`` variable or argument) into all 4
    lanes.

    >>> p = p.replace(p.find_loop('ji'), neon_broadcast_4xf32_scalar)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 4):
        dst[i] = src


@instr("{dst_data} = vdupq_n_f32(0.0f);", _INCLUDE, cpu_features=_NEON)
def neon_zero_4xf32(dst: [f32][4] @ Neon):
    """Set all 4 lanes to 0.0.

    >>> p = p.replace(p.find_loop('ji'), neon_zero_4xf32)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 4):
        dst[i] = 0.0


@instr("{dst_data} = {src_data};", _INCLUDE, cpu_features=_NEON)
def neon_reg_copy_4xf32(dst: [f32][4] @ Neon, src: [f32][4] @ Neon):
    """Copy a register.

    >>> p = p.replace(p.find_loop('ji'), neon_reg_copy_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 4):
        dst[i] = src[i]


# ---------------------------------------------------------------------------
# arithmetic

@instr("{dst_data} = vaddq_f32({a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vadd_4xf32(dst: [f32][4] @ Neon, a: [f32][4] @ Neon,
                    b: [f32][4] @ Neon):
    """``dst = a + b`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), neon_vadd_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = vaddq_f32({dst_data}, {src_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vacc_4xf32(dst: [f32][4] @ Neon, src: [f32][4] @ Neon):
    """``dst += src`` lane-wise (accumulating partial sums).

    >>> p = p.replace(p.find_loop('ji'), neon_vacc_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 4):
        dst[i] += src[i]


@instr("{dst_data} = vmulq_f32({a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vmul_4xf32(dst: [f32][4] @ Neon, a: [f32][4] @ Neon,
                    b: [f32][4] @ Neon):
    """``dst = a * b`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), neon_vmul_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] = a[i] * b[i]


@instr("{dst_data} = vnegq_f32({src_data});", _INCLUDE, cpu_features=_NEON)
def neon_vneg_4xf32(dst: [f32][4] @ Neon, src: [f32][4] @ Neon):
    """``dst = -src`` lane-wise (flips the sign bit, also of 0.0 and NaN).

    >>> p = p.replace(p.find_loop('ji'), neon_vneg_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 4):
        dst[i] = -src[i]


@instr("{dst_data} = vbslq_f32(vcgtq_f32({a_data}, {b_data}), {a_data}, "
       "{b_data});", _INCLUDE, cpu_features=_NEON)
def neon_vmax_4xf32(dst: [f32][4] @ Neon, a: [f32][4] @ Neon,
                    b: [f32][4] @ Neon):
    """``dst = a > b ? a : b`` lane-wise (a compare and a bit select; it
    returns ``b`` when the two compare equal or either is NaN, like x86's
    ``vmaxps``). ``select(x, v, y, z)`` is ``x < v ? y : z``.

    >>> p = p.replace(p.find_loop('ji'), neon_vmax_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] = select(b[i], a[i], a[i], b[i])


@instr("{dst_data} = vmlaq_f32({dst_data}, {a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vmla_4xf32(dst: [f32][4] @ Neon, a: [f32][4] @ Neon,
                    b: [f32][4] @ Neon):
    """``dst += a * b`` lane-wise, a multiply then an add (two roundings,
    as the body: ``vmlaq_f32``).

    >>> p = p.replace(p.find_loop('ji'), neon_vmla_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = vmlaq_n_f32({dst_data}, {b_data}, {a_data});",
       _INCLUDE, cpu_features=_NEON)
def neon_vmla_bcst_4xf32(dst: [f32][4] @ Neon, a: [f32][1] @ DRAM,
                         b: [f32][4] @ Neon):
    """``dst += a[0] * b``, a multiply then an add (two roundings, as the
    body: ``vmlaq_n_f32``): the SGEMM step that equals ``interpret()``
    bit for bit on any data.

    >>> p = p.replace(p.find_loop('ji'), neon_vmla_bcst_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = vfmaq_f32({dst_data}, {a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vfmla_4xf32(dst: [f32][4] @ Neon, a: [f32][4] @ Neon,
                     b: [f32][4] @ Neon):
    """``dst += a * b`` lane-wise, fused (one rounding).

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = vfmaq_laneq_f32({dst_data}, {a_data}, {b_data}, "
       "{lane});", _INCLUDE, cpu_features=_NEON)
def neon_vfmla_lane_4xf32(dst: [f32][4] @ Neon, a: [f32][4] @ Neon,
                          b: [f32][4] @ Neon, lane: index):
    """``dst += a * b[lane]``, fused: the lane of ``b`` broadcast (one
    instruction, ``fmla v.4s, v.4s, v.s[lane]``). ``lane`` must be a
    constant in the C (unroll the loop that gives it).

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_lane_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert lane >= 0
    assert lane < 4
    for i in seq(0, 4):
        dst[i] += a[i] * b[lane]


@instr("{dst_data} = vfmaq_n_f32({dst_data}, {b_data}, {a_data});",
       _INCLUDE, cpu_features=_NEON)
def neon_vfmla_bcst_4xf32(dst: [f32][4] @ Neon, a: [f32][1] @ DRAM,
                          b: [f32][4] @ Neon):
    """``dst += a[0] * b``, fused: one element of memory broadcast.

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_bcst_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = vmlaq_f32({c_data}, {a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vmla_ex_4xf32(dst: [f32][4] @ Neon, c: [f32][4] @ Neon,
                       a: [f32][4] @ Neon, b: [f32][4] @ Neon):
    """``dst = c + a * b`` lane-wise, a multiply then an add (two
    roundings): a multiply-add into another register.

    >>> p = p.replace(p.find_loop('ji'), neon_vmla_ex_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(c, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] = c[i] + a[i] * b[i]


@instr("{dst_data} = vfmaq_laneq_f32({c_data}, {a_data}, {b_data}, "
       "{lane});", _INCLUDE, cpu_features=_NEON)
def neon_vfmla_lane_ex_4xf32(dst: [f32][4] @ Neon, c: [f32][4] @ Neon,
                             a: [f32][4] @ Neon, b: [f32][4] @ Neon,
                             lane: index):
    """``dst = c + a * b[lane]``, fused, into another register (``lane`` a
    constant in the C).

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_lane_ex_4xf32)
    """
    assert stride(dst, 0) == 1
    assert stride(c, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert lane >= 0
    assert lane < 4
    for i in seq(0, 4):
        dst[i] = c[i] + a[i] * b[lane]


@instr("{dst_data} = exo_hl_neon_reduce_add_f32({dst_data}, {src_data});",
       _REDUCE, cpu_features=_NEON)
def neon_reduce_add_4xf32(dst: [f32][1] @ DRAM, src: [f32][4] @ Neon):
    """``dst[0] += src[0] + src[1] + src[2] + src[3]``, in lane order.

    >>> p = p.replace(p.find_loop('ji'), neon_reduce_add_4xf32)
    """
    assert stride(src, 0) == 1
    for i in seq(0, 4):
        dst[0] += src[i]


# ===========================================================================
# f16: 8 lanes in float16x8_t (ARMv8.2-A FP16 arithmetic)

@instr("{dst_data} = vld1q_f16((const float16_t *)&{src_data});", _INCLUDE,
       cpu_features=_FP16)
def neon_vld_8xf16(dst: [f16][8] @ Neon, src: [f16][8] @ DRAM):
    """Load 8 halves from memory.

    >>> p = p.replace(p.find_loop('ji'), neon_vld_8xf16)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[i]


@instr("vst1q_f16((float16_t *)&{dst_data}, {src_data});", _INCLUDE,
       cpu_features=_FP16)
def neon_vst_8xf16(dst: [f16][8] @ DRAM, src: [f16][8] @ Neon):
    """Store a register's 8 halves.

    >>> p = p.replace(p.find_loop('ji'), neon_vst_8xf16)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[i]


@instr("{dst_data} = vld1q_dup_f16((const float16_t *)&{src_data});",
       _INCLUDE, cpu_features=_FP16)
def neon_broadcast_8xf16(dst: [f16][8] @ Neon, src: [f16][1] @ DRAM):
    """Broadcast one half from memory into all 8 lanes.

    >>> p = p.replace(p.find_loop('ji'), neon_broadcast_8xf16)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[0]


@instr("{dst_data} = vreinterpretq_f16_u16(vdupq_n_u16(0));", _INCLUDE,
       cpu_features=_FP16)
def neon_zero_8xf16(dst: [f16][8] @ Neon):
    """Set all 8 lanes to +0.0.

    >>> p = p.replace(p.find_loop('ji'), neon_zero_8xf16)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = 0.0


@instr("{dst_data} = vaddq_f16({a_data}, {b_data});", _INCLUDE,
       cpu_features=_FP16)
def neon_vadd_8xf16(dst: [f16][8] @ Neon, a: [f16][8] @ Neon,
                    b: [f16][8] @ Neon):
    """``dst = a + b`` lane-wise in f16.

    >>> p = p.replace(p.find_loop('ji'), neon_vadd_8xf16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = vmulq_f16({a_data}, {b_data});", _INCLUDE,
       cpu_features=_FP16)
def neon_vmul_8xf16(dst: [f16][8] @ Neon, a: [f16][8] @ Neon,
                    b: [f16][8] @ Neon):
    """``dst = a * b`` lane-wise in f16.

    >>> p = p.replace(p.find_loop('ji'), neon_vmul_8xf16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] = a[i] * b[i]


@instr("{dst_data} = vfmaq_f16({dst_data}, {a_data}, {b_data});", _INCLUDE,
       cpu_features=_FP16)
def neon_vfmla_8xf16(dst: [f16][8] @ Neon, a: [f16][8] @ Neon,
                     b: [f16][8] @ Neon):
    """``dst += a * b`` lane-wise in f16, fused (one rounding).

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_8xf16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = vfmaq_laneq_f16({dst_data}, {a_data}, {b_data}, "
       "{lane});", _INCLUDE, cpu_features=_FP16)
def neon_vfmla_lane_8xf16(dst: [f16][8] @ Neon, a: [f16][8] @ Neon,
                          b: [f16][8] @ Neon, lane: index):
    """``dst += a * b[lane]`` in f16, fused; ``lane`` a constant in the C.

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_lane_8xf16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert lane >= 0
    assert lane < 8
    for i in seq(0, 8):
        dst[i] += a[i] * b[lane]


@instr("{dst_data} = vfmaq_f16({dst_data}, "
       "vld1q_dup_f16((const float16_t *)&{a_data}), {b_data});", _INCLUDE,
       cpu_features=_FP16)
def neon_vfmla_bcst_8xf16(dst: [f16][8] @ Neon, a: [f16][1] @ DRAM,
                          b: [f16][8] @ Neon):
    """``dst += a[0] * b`` in f16, fused: one element of memory broadcast.

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_bcst_8xf16)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = vfmaq_f16({c_data}, {a_data}, {b_data});", _INCLUDE,
       cpu_features=_FP16)
def neon_vfmla_ex_8xf16(dst: [f16][8] @ Neon, c: [f16][8] @ Neon,
                        a: [f16][8] @ Neon, b: [f16][8] @ Neon):
    """``dst = c + a * b`` in f16, fused, into another register.

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_ex_8xf16)
    """
    assert stride(dst, 0) == 1
    assert stride(c, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] = c[i] + a[i] * b[i]


# ===========================================================================
# f64: 2 lanes in float64x2_t

@instr("{dst_data} = vld1q_f64(&{src_data});", _INCLUDE, cpu_features=_NEON)
def neon_vld_2xf64(dst: [f64][2] @ Neon, src: [f64][2] @ DRAM):
    """Load 2 doubles.

    >>> p = p.replace(p.find_loop('ji'), neon_vld_2xf64)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 2):
        dst[i] = src[i]


@instr("vst1q_f64(&{dst_data}, {src_data});", _INCLUDE, cpu_features=_NEON)
def neon_vst_2xf64(dst: [f64][2] @ DRAM, src: [f64][2] @ Neon):
    """Store 2 doubles.

    >>> p = p.replace(p.find_loop('ji'), neon_vst_2xf64)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 2):
        dst[i] = src[i]


@instr("{dst_data} = vld1q_dup_f64(&{src_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_broadcast_2xf64(dst: [f64][2] @ Neon, src: [f64][1] @ DRAM):
    """Broadcast one double from memory into both lanes.

    >>> p = p.replace(p.find_loop('ji'), neon_broadcast_2xf64)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 2):
        dst[i] = src[0]


@instr("{dst_data} = vdupq_n_f64(0.0);", _INCLUDE, cpu_features=_NEON)
def neon_zero_2xf64(dst: [f64][2] @ Neon):
    """Set both lanes to 0.0.

    >>> p = p.replace(p.find_loop('ji'), neon_zero_2xf64)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 2):
        dst[i] = 0.0


@instr("{dst_data} = vaddq_f64({a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vadd_2xf64(dst: [f64][2] @ Neon, a: [f64][2] @ Neon,
                    b: [f64][2] @ Neon):
    """``dst = a + b`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), neon_vadd_2xf64)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 2):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = vmulq_f64({a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vmul_2xf64(dst: [f64][2] @ Neon, a: [f64][2] @ Neon,
                    b: [f64][2] @ Neon):
    """``dst = a * b`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), neon_vmul_2xf64)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 2):
        dst[i] = a[i] * b[i]


@instr("{dst_data} = vfmaq_f64({dst_data}, {a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vfmla_2xf64(dst: [f64][2] @ Neon, a: [f64][2] @ Neon,
                     b: [f64][2] @ Neon):
    """``dst += a * b`` lane-wise, fused (one rounding).

    >>> p = p.replace(p.find_loop('ji'), neon_vfmla_2xf64)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 2):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = vdupq_n_f64({src_data});", _INCLUDE, cpu_features=_NEON)
def neon_broadcast_2xf64_scalar(dst: [f64][2] @ Neon, src: f64):
    """Broadcast a scalar (an ``f64`` variable or argument) into both
    lanes.

    >>> p = p.replace(p.find_loop('ji'), neon_broadcast_2xf64_scalar)
    """
    assert stride(dst, 0) == 1
    for i in seq(0, 2):
        dst[i] = src


@instr("{dst_data} = {src_data};", _INCLUDE, cpu_features=_NEON)
def neon_reg_copy_2xf64(dst: [f64][2] @ Neon, src: [f64][2] @ Neon):
    """Copy a register.

    >>> p = p.replace(p.find_loop('ji'), neon_reg_copy_2xf64)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 2):
        dst[i] = src[i]


@instr("{dst_data} = vnegq_f64({src_data});", _INCLUDE, cpu_features=_NEON)
def neon_vneg_2xf64(dst: [f64][2] @ Neon, src: [f64][2] @ Neon):
    """``dst = -src`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), neon_vneg_2xf64)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 2):
        dst[i] = -src[i]


@instr("{dst_data} = vaddq_f64({dst_data}, {src_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vacc_2xf64(dst: [f64][2] @ Neon, src: [f64][2] @ Neon):
    """``dst += src`` lane-wise.

    >>> p = p.replace(p.find_loop('ji'), neon_vacc_2xf64)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 2):
        dst[i] += src[i]


@instr("{dst_data} = vmlaq_f64({dst_data}, {a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vmla_2xf64(dst: [f64][2] @ Neon, a: [f64][2] @ Neon,
                    b: [f64][2] @ Neon):
    """``dst += a * b`` lane-wise, a multiply then an add (two roundings,
    as the body: ``vmlaq_f64``).

    >>> p = p.replace(p.find_loop('ji'), neon_vmla_2xf64)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 2):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = ({dst_data} + vgetq_lane_f64({src_data}, 0)) + "
       "vgetq_lane_f64({src_data}, 1);", _INCLUDE, cpu_features=_NEON)
def neon_reduce_add_2xf64(dst: [f64][1] @ DRAM, src: [f64][2] @ Neon):
    """``dst[0] += src[0] + src[1]``, in lane order.

    >>> p = p.replace(p.find_loop('ji'), neon_reduce_add_2xf64)
    """
    assert stride(src, 0) == 1
    for i in seq(0, 2):
        dst[0] += src[i]


@instr("{dst_data} = vcvt_f64_f32(vget_low_f32({src_data}));", _INCLUDE,
       cpu_features=_NEON)
def neon_cvt_low_f32_to_f64(dst: [f64][2] @ Neon, src: [f32][4] @ Neon):
    """Widen lanes 0 and 1 of an f32 register to f64 (exact).

    >>> p = p.replace(p.find_loop('ji'), neon_cvt_low_f32_to_f64)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 2):
        dst[i] = src[i]


@instr("{dst_data} = vcvt_high_f64_f32({src_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_cvt_high_f32_to_f64(dst: [f64][2] @ Neon, src: [f32][4] @ Neon):
    """Widen lanes 2 and 3 of an f32 register to f64 (exact).

    >>> p = p.replace(p.find_loop('ji'), neon_cvt_high_f32_to_f64)
    """
    assert stride(dst, 0) == 1
    assert stride(src, 0) == 1
    for i in seq(0, 2):
        dst[i] = src[i + 2]


# ===========================================================================
# ui16: 8 lanes in uint16x8_t

@instr("{dst_data} = vld1q_u16(&{src_data});", _INCLUDE, cpu_features=_NEON)
def neon_vld_8xu16(dst: [ui16][8] @ Neon, src: [ui16][8] @ DRAM):
    """Load 8 ui16 from memory into a register.

    >>> p = p.replace(p.find_loop('xi'), neon_vld_8xu16)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[i]


@instr("vst1q_u16(&{dst_data}, {src_data});", _INCLUDE, cpu_features=_NEON)
def neon_vst_8xu16(dst: [ui16][8] @ DRAM, src: [ui16][8] @ Neon):
    """Store a register's 8 ui16 to memory.

    >>> p = p.replace(p.find_loop('xi'), neon_vst_8xu16)
    """
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[i]


@instr("{dst_data} = vaddq_u16({a_data}, {b_data});", _INCLUDE,
       cpu_features=_NEON)
def neon_vadd_8xu16(dst: [ui16][8] @ Neon, a: [ui16][8] @ Neon,
                    b: [ui16][8] @ Neon):
    """``dst = a + b`` lane-wise, modulo 2**16 (the write wraps).

    >>> p = p.replace(p.find_loop('xi'), neon_vadd_8xu16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = exo_hl_neon_mean3_u16({a_data}, {b_data}, {c_data});",
       _MEAN3, cpu_features=_NEON)
def neon_mean3_8xu16(dst: [ui16][8] @ Neon, a: [ui16][8] @ Neon,
                     b: [ui16][8] @ Neon, c: [ui16][8] @ Neon):
    """``dst = (a + b + c) / 3`` lane-wise, the exact floor of the mean of
    three on the whole ui16 range (the sum, up to 196605, is formed in
    ``int``): one stage of a 3x3 box blur. Seven 16-bit operations on the
    quarters and low bits of the inputs, then a division by 3 (a widening
    multiply and two shifts).

    >>> p = p.replace(p.find_loop('xi'), neon_mean3_8xu16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert stride(c, 0) == 1
    for i in seq(0, 8):
        dst[i] = (a[i] + b[i] + c[i]) / 3


@instr("{dst_data} = exo_hl_neon_div3_u16(vaddq_u16(vaddq_u16({a_data}, "
       "{b_data}), {c_data}));", _DIV3, cpu_features=_NEON)
def neon_mean3_wrap_8xu16(dst: [ui16][8] @ Neon, a: [ui16][8] @ Neon,
                          b: [ui16][8] @ Neon, c: [ui16][8] @ Neon):
    """``dst = ((a + b + c) % 65536) / 3`` lane-wise: the sum wraps modulo
    2**16 as in 16-bit arithmetic (Halide's ``apps/blur`` stage), then is
    divided by 3 exactly. Two wrapping adds, a widening multiply, shifts.

    >>> p = p.replace(p.find_loop('xi'), neon_mean3_wrap_8xu16)
    """
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert stride(c, 0) == 1
    for i in seq(0, 8):
        dst[i] = ((a[i] + b[i] + c[i]) % 65536) / 3


INSTRS = (neon_vld_4xf32, neon_vst_4xf32, neon_vld_prefix_4xf32,
          neon_vst_prefix_4xf32, neon_broadcast_4xf32,
          neon_broadcast_4xf32_scalar, neon_zero_4xf32, neon_reg_copy_4xf32,
          neon_vadd_4xf32, neon_vacc_4xf32, neon_vmul_4xf32, neon_vneg_4xf32,
          neon_vmax_4xf32, neon_vmla_4xf32, neon_vmla_bcst_4xf32,
          neon_vfmla_4xf32,
          neon_vfmla_lane_4xf32, neon_vfmla_bcst_4xf32,
          neon_vmla_ex_4xf32, neon_vfmla_lane_ex_4xf32,
          neon_reduce_add_4xf32,
          neon_vld_8xf16, neon_vst_8xf16, neon_broadcast_8xf16,
          neon_zero_8xf16, neon_vadd_8xf16, neon_vmul_8xf16,
          neon_vfmla_8xf16, neon_vfmla_lane_8xf16, neon_vfmla_bcst_8xf16,
          neon_vfmla_ex_8xf16,
          neon_vld_2xf64, neon_vst_2xf64, neon_broadcast_2xf64,
          neon_zero_2xf64, neon_vadd_2xf64, neon_vmul_2xf64,
          neon_vfmla_2xf64, neon_broadcast_2xf64_scalar,
          neon_reg_copy_2xf64, neon_vneg_2xf64, neon_vacc_2xf64,
          neon_vmla_2xf64, neon_reduce_add_2xf64, neon_cvt_low_f32_to_f64,
          neon_cvt_high_f32_to_f64,
          neon_vld_8xu16, neon_vst_8xu16, neon_vadd_8xu16, neon_mean3_8xu16,
          neon_mean3_wrap_8xu16)
