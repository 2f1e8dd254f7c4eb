"""Gemmini (a 16x16 int8 systolic-array DNN accelerator) as a user library.

Written exactly as a vendor would write it, with the public ``exo_hl`` API
only: two on-chip memories C code may not touch (``GEMM_SCRATCH``,
``GEMM_ACCUM``), the accelerator's configuration registers as ``@config``
classes, and ``@instr`` procedures whose bodies are their exact meaning.

Why one module of this size: a hardware library is read as one datasheet;
the memories, configuration registers and instructions refer to each other
and to the C functional model, and most of its length is their docstrings.

The device does not exist on this machine, so every instruction's C template
calls a *functional model* of it in plain C (``c_global`` pieces below). The
model is faithful where scheduling matters:

- the configuration registers *are* the ``@config`` fields below: each
  template names them as ``{ConfigLoad.src_stride}`` (the field in the
  compiled callable's context struct), so ``config_*`` instructions, plain
  field writes (``configwrite_at``, ``bind_config``, an inlined
  ``config_ld``) and plain field reads all see one state, in ``interpret()``
  and in ``compile()`` alike;
- the load and store engines take their DRAM row stride from those
  registers, never from the instruction, so a missing or wrongly hoisted
  config write computes garbage;
- ``mvout`` writes DRAM with the store engine's stride register and applies
  ReLU when the activation register says so (the scale is an operand);
- arithmetic is integer-exact and identical to the instruction bodies, so
  ``interpret()`` (bodies) and ``compile()`` (model) agree bit for bit.

Rounding of the store: ``acc_scale(v, s)`` is the f32 product ``(float)v * s``
rounded to nearest, ties to even (``nearbyintf`` under the default rounding
mode; ``numpy.rint`` in the interpreter), saturated to the i32 range (NaN
gives 0); ``clamp_i8`` then saturates to [-128, 127].

The model counts issued instructions in the C global
``gemmini_sim_instr_count`` (read it with ``instr_count(compiled)``). The
counters are weak definitions, so several generated files link into one
program and share them (one simulated device).
"""
from __future__ import annotations

import ctypes

import numpy as np

from exo_hl import (DRAM, Memory, MemGenError, config, extern, f32, i8, i32,
                    instr, seq, size)
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.core_ir.memory import const_value

DIM = 16  # the systolic array is DIM x DIM


# ---------------------------------------------------------------------------
# the functional model (C), in include-guarded pieces: a generated file only
# gets the pieces its instructions use (no unused static functions)

def _piece(name, text):
    guard = f"GEMMINI_SIM_{name.upper()}"
    return f"#ifndef {guard}\n#define {guard}\n{text.strip()}\n#endif\n"


_COUNT = _piece("count", """
#include <stdint.h>
#include <stdbool.h>
/* instructions issued (non-static so a host can read it through dlsym);
   atomic: the threads of a par loop issue instructions concurrently.
   Weak: every generated file defines them, a program holds one pair. */
#if defined(__GNUC__) || defined(__clang__)
#define GEMMINI_SIM_SHARED __attribute__((weak))
#else
#define GEMMINI_SIM_SHARED
#endif
extern _Atomic uint64_t gemmini_sim_instr_count;
GEMMINI_SIM_SHARED _Atomic uint64_t gemmini_sim_instr_count = 0;
/* of which configuration writes (config_ld*, config_st) */
extern _Atomic uint64_t gemmini_sim_config_count;
GEMMINI_SIM_SHARED _Atomic uint64_t gemmini_sim_config_count = 0;
""")

_SCALE = _piece("scale", """
#include <stdint.h>
#include <math.h>
/* round((float)v * s) to nearest-even, saturated to int32; NaN -> 0 */
static inline int32_t gemm_acc_scale(int32_t v, float s) {
    float f = nearbyintf((float)v * s);
    if (f != f) return 0;
    if (f >= 2147483648.0f) return INT32_MAX;
    if (f < -2147483648.0f) return INT32_MIN;
    return (int32_t)f;
}
""")

_CLAMP = _piece("clamp", """
#include <stdint.h>
static inline int32_t gemm_clamp_i8(int32_t v) {
    return v > 127 ? 127 : (v < -128 ? -128 : v);
}
""")

_CONFIG_LD = _COUNT + _piece("config_ld", """
/* write a load engine's source-stride register */
static inline void gemm_config_ld(int_fast32_t *reg, int_fast32_t stride) {
    gemmini_sim_instr_count++;
    gemmini_sim_config_count++;
    *reg = stride;
}
""")

_CONFIG_ST = _COUNT + _piece("config_st", """
/* write the store engine's stride and activation registers */
static inline void gemm_config_st(int_fast32_t *stride_reg, bool *act_reg,
                                  int_fast32_t stride, bool act) {
    gemmini_sim_instr_count++;
    gemmini_sim_config_count++;
    *stride_reg = stride;
    *act_reg = act;
}
""")

_MVIN_I8 = _COUNT + _piece("mvin_i8", """
/* DRAM rows (`src_rs`: the load engine's stride register) -> n x m
   scratchpad rows */
static inline void gemm_mvin_i8(int_fast32_t src_rs, const int8_t *src,
                                int8_t *dst,
                                int_fast32_t dst_rs, int_fast32_t n,
                                int_fast32_t m) {
    gemmini_sim_instr_count++;
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            dst[i * dst_rs + j] = src[i * src_rs + j];
}
""")

_MVIN_I32 = _COUNT + _piece("mvin_i32", """
/* DRAM i32 rows (`src_rs`: the load engine's stride register) ->
   accumulator rows */
static inline void gemm_mvin_i32(int_fast32_t src_rs, const int32_t *src,
                                 int32_t *dst,
                                 int_fast32_t dst_rs, int_fast32_t n,
                                 int_fast32_t m) {
    gemmini_sim_instr_count++;
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            dst[i * dst_rs + j] = src[i * src_rs + j];
}
""")

_ZERO = _COUNT + _piece("zero", """
static inline void gemm_zero_acc(int32_t *dst, int_fast32_t dst_rs,
                                 int_fast32_t n, int_fast32_t m) {
    gemmini_sim_instr_count++;
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            dst[i * dst_rs + j] = 0;
}
""")

_MATMUL = _COUNT + _piece("matmul", """
/* preload + compute: c[16x16] += a[16x16] @ b[16x16], i32 wrap-around */
static inline void gemm_matmul(const int8_t *a, int_fast32_t a_rs,
                               const int8_t *b, int_fast32_t b_rs,
                               int32_t *c, int_fast32_t c_rs) {
    gemmini_sim_instr_count += 2;
    for (int_fast32_t i = 0; i < 16; i++)
        for (int_fast32_t j = 0; j < 16; j++) {
            uint32_t s = (uint32_t)c[i * c_rs + j];
            for (int_fast32_t k = 0; k < 16; k++)
                s += (uint32_t)((int32_t)a[i * a_rs + k] *
                                (int32_t)b[k * b_rs + j]);
            c[i * c_rs + j] = (int32_t)s;
        }
}
""")

_MATMUL_SIZED = _COUNT + _piece("matmul_sized", """
/* preload + compute on a partial block: c[n x m] += a[n x k] @ b[k x m] */
static inline void gemm_matmul_sized(const int8_t *a, int_fast32_t a_rs,
                                     const int8_t *b, int_fast32_t b_rs,
                                     int32_t *c, int_fast32_t c_rs,
                                     int_fast32_t n, int_fast32_t m,
                                     int_fast32_t k) {
    gemmini_sim_instr_count += 2;
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++) {
            uint32_t s = (uint32_t)c[i * c_rs + j];
            for (int_fast32_t l = 0; l < k; l++)
                s += (uint32_t)((int32_t)a[i * a_rs + l] *
                                (int32_t)b[l * b_rs + j]);
            c[i * c_rs + j] = (int32_t)s;
        }
}
""")

_MVOUT_ACC_I8 = _COUNT + _SCALE + _CLAMP + _piece("mvout_acc_i8", """
/* accumulator rows -> DRAM i8 rows (`dst_rs`, `act`: the store engine's
   registers): scale, ReLU if configured, saturate */
static inline void gemm_mvout_acc_i8(int_fast32_t dst_rs, bool act,
                                     const int32_t *src, int_fast32_t src_rs,
                                     int8_t *dst, int_fast32_t n,
                                     int_fast32_t m, float scale) {
    gemmini_sim_instr_count++;
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++) {
            int32_t v = gemm_acc_scale(src[i * src_rs + j], scale);
            if (act && v < 0) v = 0;
            dst[i * dst_rs + j] = (int8_t)gemm_clamp_i8(v);
        }
}
""")

_MVOUT_ACC_I32 = _COUNT + _piece("mvout_acc_i32", """
/* accumulator rows -> DRAM i32 rows (`dst_rs`: the store engine's stride
   register), unscaled (full-width output) */
static inline void gemm_mvout_acc_i32(int_fast32_t dst_rs,
                                      const int32_t *src, int_fast32_t src_rs,
                                      int32_t *dst, int_fast32_t n,
                                      int_fast32_t m) {
    gemmini_sim_instr_count++;
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            dst[i * dst_rs + j] = src[i * src_rs + j];
}
""")

_MVOUT_SPAD = _COUNT + _piece("mvout_spad", """
/* scratchpad rows -> DRAM i8 rows (`dst_rs`: the store engine's stride
   register) */
static inline void gemm_mvout_spad(int_fast32_t dst_rs,
                                   const int8_t *src, int_fast32_t src_rs,
                                   int8_t *dst, int_fast32_t n,
                                   int_fast32_t m) {
    gemmini_sim_instr_count++;
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            dst[i * dst_rs + j] = src[i * src_rs + j];
}
""")


def instr_count(compiled) -> int:
    """Instructions the model has issued in ``compiled`` (the callable from
    ``p.compile()``) since its library was loaded or last reset.

    >>> f = matmul.compile(); reset_instr_count(f); f(*args)
    >>> instr_count(f)                    # mvin, matmul, mvout, config ...
    """
    return _counter(compiled).value


def config_count(compiled) -> int:
    """Of the instructions counted by ``instr_count``, the configuration
    writes (``config_ld*``, ``config_st``) the model has issued.

    >>> reset_instr_count(f); f(*args); config_count(f)   # hoisted: 3
    3
    """
    return _counter(compiled, "gemmini_sim_config_count").value


def reset_instr_count(compiled) -> None:
    """Set the instruction and configuration-write counters of ``compiled``
    back to zero.

    >>> reset_instr_count(f); instr_count(f)
    0
    """
    _counter(compiled).value = 0
    _counter(compiled, "gemmini_sim_config_count").value = 0


def _counter(compiled, name="gemmini_sim_instr_count"):
    lib = ctypes.CDLL(compiled.library_path)
    return ctypes.c_uint64.in_dll(lib, name)


# ---------------------------------------------------------------------------
# externs used by the store semantics (and by algorithms that want to be
# mapped onto it)

def _i32_result(arg_types):
    return i32


def _scale_interp(v, s):
    f = np.rint(np.float32(v) * np.float32(s))
    if np.isnan(f):
        return 0
    if f >= np.float32(2147483648.0):
        return 2**31 - 1
    if f < np.float32(-2147483648.0):
        return -2**31
    return int(f)


@extern("gemm_acc_scale({0}, {1})", typecheck=_i32_result, c_global=_SCALE)
def acc_scale(v, s):
    """round-to-nearest-even of ``f32(v) * s``, saturated to i32.

    >>> acc_scale.interpret([7, 0.5])     # 3.5 rounds to even
    4
    """
    return _scale_interp(v, s)


@extern("gemm_clamp_i8({0})", typecheck=_i32_result, c_global=_CLAMP)
def clamp_i8(v):
    """saturate an integer to [-128, 127].

    >>> clamp_i8.interpret([300]), clamp_i8.interpret([-7])
    (127, -7)
    """
    v = int(v)
    return 127 if v > 127 else (-128 if v < -128 else v)


# ---------------------------------------------------------------------------
# memories

class _OnChip(Memory):
    """On-chip SRAM: rows of exactly DIM elements, constant sizes.

    Simulated as one C array per allocation (the model needs no global
    address map: instructions receive pointers). ``can_read()`` is False,
    so generated C reaches it only through instructions.
    """
    ELEM = ""

    @classmethod
    def global_(cls):
        return "#include <stdint.h>\n"

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        name = cls.__name__
        if prim_type != cls.ELEM:
            raise MemGenError(f"{srcinfo}: {name} holds {cls.ELEM}, "
                              f"'{new_name}' is {prim_type}")
        if not shape:
            raise MemGenError(f"{srcinfo}: {name} holds tiles of rows, not "
                              f"scalars ('{new_name}')")
        total = 1
        for s in shape:
            v = const_value(s)
            if v is None:
                raise MemGenError(f"{srcinfo}: {name} buffer '{new_name}' "
                                  f"needs constant sizes, got "
                                  f"{', '.join(map(str, shape))}")
            total *= v
        if const_value(shape[-1]) != DIM:
            raise MemGenError(f"{srcinfo}: {name} rows are exactly {DIM} "
                              f"wide, '{new_name}' has {shape[-1]}")
        return f"{prim_type} {new_name}[{total}];"

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo):
        return ""

    @classmethod
    def can_read(cls):
        return False


class GEMM_SCRATCH(_OnChip):
    """The scratchpad: int8 operand rows of 16.

    >>> @proc
    ... def tile(A: i8[16, 16] @ DRAM):
    ...     a: i8[16, 16] @ GEMM_SCRATCH    # loaded with ld_i8 only
    """
    ELEM = "int8_t"


class GEMM_ACCUM(_OnChip):
    """The accumulator: int32 partial-sum rows of 16.

    >>> p = p.set_memory('acc', GEMM_ACCUM)   # then zero_acc_i32 / matmul_i8
    """
    ELEM = "int32_t"


# ---------------------------------------------------------------------------
# configuration state (Gemmini's config_ld / config_st / config_ex registers)

@config
class ConfigLoad:
    """Load engine 0 (``ld_i8``): the DRAM row stride of its source.

    >>> p = p.configwrite_at(p.find_loop('i0'), ConfigLoad, 'src_stride',
    ...                      'stride(A, 0)', before=True)
    """
    src_stride: stride


@config
class ConfigLoadId1:
    """Load engine 1 (``ld_i8_id1``): a second operand stream, with its own
    source stride.

    >>> p = p.replace(p.find('ConfigLoadId1.src_stride = _'), config_ld_id1)
    """
    src_stride: stride


@config
class ConfigLoadAcc:
    """Load engine 2 (``ld_acc_i32``): accumulator bias loads.

    >>> p = p.replace(p.find('ConfigLoadAcc.src_stride = _'), config_ld_acc)
    """
    src_stride: stride


@config
class ConfigStore:
    """The store engine: DRAM row stride and activation (ReLU on/off).

    >>> p = p.replace((p.find('ConfigStore.dst_stride = _'),
    ...                p.find('ConfigStore.act = _')), config_st)
    """
    dst_stride: stride
    act: bool


# ---------------------------------------------------------------------------
# configuration instructions

@instr("gemm_config_ld(&{ConfigLoad.src_stride}, {src_stride});",
       _CONFIG_LD)
def config_ld(src_stride: stride):
    """Set load engine 0's source stride (``ConfigLoad.src_stride``).

    >>> p = p.replace(p.find('ConfigLoad.src_stride = _'), config_ld)
    """
    ConfigLoad.src_stride = src_stride


@instr("gemm_config_ld(&{ConfigLoadId1.src_stride}, {src_stride});",
       _CONFIG_LD)
def config_ld_id1(src_stride: stride):
    """Set load engine 1's source stride (``ConfigLoadId1.src_stride``).

    >>> p = p.replace(p.find('ConfigLoadId1.src_stride = _'), config_ld_id1)
    """
    ConfigLoadId1.src_stride = src_stride


@instr("gemm_config_ld(&{ConfigLoadAcc.src_stride}, {src_stride});",
       _CONFIG_LD)
def config_ld_acc(src_stride: stride):
    """Set load engine 2's source stride (``ConfigLoadAcc.src_stride``).

    >>> p = p.replace(p.find('ConfigLoadAcc.src_stride = _'), config_ld_acc)
    """
    ConfigLoadAcc.src_stride = src_stride


@instr("gemm_config_st(&{ConfigStore.dst_stride}, &{ConfigStore.act}, "
       "{dst_stride}, {act});", _CONFIG_ST)
def config_st(dst_stride: stride, act: bool):
    """Set the store engine's DRAM stride and activation together.

    >>> p = p.replace((p.find('ConfigStore.dst_stride = _'),
    ...                p.find('ConfigStore.act = _')), config_st)
    """
    ConfigStore.dst_stride = dst_stride
    ConfigStore.act = act


# ---------------------------------------------------------------------------
# data movement

@instr("gemm_mvin_i8({ConfigLoad.src_stride}, &{src_data}, &{dst_data}, "
       "{dst}.strides[0], {n}, {m});", _MVIN_I8)
def ld_i8(n: size, m: size, src: [i8][n, m] @ DRAM,
          dst: [i8][n, 16] @ GEMM_SCRATCH):
    """mvin on load engine 0: up to 16 x 16 int8 DRAM elements into
    scratchpad rows; ``ConfigLoad.src_stride`` must be the source's row stride.

    >>> p = p.replace(p.find_loop('i0'), ld_i8)
    """
    assert stride(dst, 1) == 1
    assert n <= 16 and m <= 16
    assert stride(src, 1) == 1
    assert ConfigLoad.src_stride == stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@instr("gemm_mvin_i8({ConfigLoadId1.src_stride}, &{src_data}, &{dst_data}, "
       "{dst}.strides[0], {n}, {m});", _MVIN_I8)
def ld_i8_id1(n: size, m: size, src: [i8][n, m] @ DRAM,
              dst: [i8][n, 16] @ GEMM_SCRATCH):
    """mvin on load engine 1 (a second operand stream); its stride is
    ``ConfigLoadId1.src_stride``.

    >>> p = p.replace(p.find_loop('i2'), ld_i8_id1)
    """
    assert stride(dst, 1) == 1
    assert n <= 16 and m <= 16
    assert stride(src, 1) == 1
    assert ConfigLoadId1.src_stride == stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@instr("gemm_mvin_i32({ConfigLoadAcc.src_stride}, &{src_data}, &{dst_data}, "
       "{dst}.strides[0], {n}, {m});", _MVIN_I32)
def ld_acc_i32(n: size, m: size, src: [i32][n, m] @ DRAM,
               dst: [i32][n, 16] @ GEMM_ACCUM):
    """Bias load: DRAM i32 rows into the accumulator (load engine 2).

    >>> p = p.replace(p.find_loop('i1'), ld_acc_i32)
    """
    assert stride(dst, 1) == 1
    assert n <= 16 and m <= 16
    assert stride(src, 1) == 1
    assert ConfigLoadAcc.src_stride == stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@instr("gemm_mvin_i32({ConfigLoadAcc.src_stride}, &{src_data}, &{dst_data}, "
       "{dst}.strides[0], {n}, {m});", _MVIN_I32)
def ld_acc_i32_bcast(n: size, m: size, src: [i32][m] @ DRAM,
                     dst: [i32][n, 16] @ GEMM_ACCUM):
    """Broadcast bias load: one DRAM i32 row into ``n`` accumulator rows.
    The engine has no broadcast mode; it is load engine 2 with source
    stride 0, so ``ConfigLoadAcc.src_stride`` must be 0.

    >>> p = p.configwrite_at(p.find_loop('i1'), ConfigLoadAcc, 'src_stride',
    ...                      '0', before=True)
    >>> p = p.replace(p.find_loop('i1'), ld_acc_i32_bcast)
    """
    assert stride(dst, 1) == 1
    assert n <= 16 and m <= 16
    assert stride(src, 0) == 1
    assert ConfigLoadAcc.src_stride == 0
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[j]


@instr("gemm_zero_acc(&{dst_data}, {dst}.strides[0], {n}, {m});", _ZERO)
def zero_acc_i32(n: size, m: size, dst: [i32][n, 16] @ GEMM_ACCUM):
    """Zero ``n`` x ``m`` accumulator elements.

    >>> p = p.replace(p.find_loop('ii'), zero_acc_i32)
    """
    assert stride(dst, 1) == 1
    assert n <= 16 and m <= 16
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = 0


@instr("gemm_matmul(&{a_data}, {a}.strides[0], &{b_data}, {b}.strides[0], "
       "&{c_data}, {c}.strides[0]);", _MATMUL)
def matmul_i8(a: [i8][16, 16] @ GEMM_SCRATCH, b: [i8][16, 16] @ GEMM_SCRATCH,
              c: [i32][16, 16] @ GEMM_ACCUM):
    """preload b, compute: c += a @ b with i32 accumulation.

    >>> p = p.replace(p.find_loop('ii'), matmul_i8)
    """
    assert stride(a, 1) == 1 and stride(b, 1) == 1 and stride(c, 1) == 1
    for i in seq(0, 16):
        for j in seq(0, 16):
            for k in seq(0, 16):
                c[i, j] += a[i, k] * b[k, j]


@instr("gemm_matmul_sized(&{a_data}, {a}.strides[0], &{b_data}, "
       "{b}.strides[0], &{c_data}, {c}.strides[0], {n}, {m}, {k});",
       _MATMUL_SIZED)
def matmul_i8_sized(n: size, m: size, k: size,
                    a: [i8][n, 16] @ GEMM_SCRATCH,
                    b: [i8][k, 16] @ GEMM_SCRATCH,
                    c: [i32][n, 16] @ GEMM_ACCUM):
    """preload b, compute on a partial block (the edge of a matrix or a
    batch of fewer than 16 rows): ``c[:n, :m] += a[:n, :k] @ b[:k, :m]``.

    >>> p = p.replace(p.find_loop('bi #1'), matmul_i8_sized)
    """
    assert stride(a, 1) == 1 and stride(b, 1) == 1 and stride(c, 1) == 1
    assert n <= 16 and m <= 16 and k <= 16
    for i in seq(0, n):
        for j in seq(0, m):
            for l in seq(0, k):
                c[i, j] += a[i, l] * b[l, j]


@instr("gemm_mvout_acc_i8({ConfigStore.dst_stride}, {ConfigStore.act}, "
       "&{src_data}, {src}.strides[0], &{dst_data}, "
       "{n}, {m}, {scale});", _MVOUT_ACC_I8)
def st_acc_i8(n: size, m: size, scale: f32,
              src: [i32][n, 16] @ GEMM_ACCUM,
              dst: [i8][n, m] @ DRAM):
    """mvout with scaling and saturation; the activation must be off.

    >>> p = p.replace(p.find_loop('ii'), st_acc_i8)
    """
    assert stride(src, 1) == 1
    assert n <= 16 and m <= 16
    assert stride(dst, 1) == 1
    assert ConfigStore.dst_stride == stride(dst, 0)
    assert not ConfigStore.act
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = clamp_i8(acc_scale(src[i, j], scale))


@instr("gemm_mvout_acc_i8({ConfigStore.dst_stride}, {ConfigStore.act}, "
       "&{src_data}, {src}.strides[0], &{dst_data}, "
       "{n}, {m}, {scale});", _MVOUT_ACC_I8)
def st_acc_i8_relu(n: size, m: size, scale: f32,
              src: [i32][n, 16] @ GEMM_ACCUM,
                   dst: [i8][n, m] @ DRAM):
    """mvout with scaling, ReLU and saturation (activation on).

    >>> p = p.replace(p.find_loop('ii'), st_acc_i8_relu)
    """
    assert stride(src, 1) == 1
    assert n <= 16 and m <= 16
    assert stride(dst, 1) == 1
    assert ConfigStore.dst_stride == stride(dst, 0)
    assert ConfigStore.act
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = clamp_i8(relu(acc_scale(src[i, j], scale)))


@instr("gemm_mvout_acc_i32({ConfigStore.dst_stride}, &{src_data}, "
       "{src}.strides[0], &{dst_data}, {n}, {m});", _MVOUT_ACC_I32)
def st_acc_i32(n: size, m: size, src: [i32][n, 16] @ GEMM_ACCUM,
               dst: [i32][n, m] @ DRAM):
    """Full-width mvout: raw i32 partial sums (no scale, no activation).

    >>> p = p.replace(p.find_loop('ii'), st_acc_i32)
    """
    assert stride(src, 1) == 1
    assert n <= 16 and m <= 16
    assert stride(dst, 1) == 1
    assert ConfigStore.dst_stride == stride(dst, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@instr("gemm_mvout_spad({ConfigStore.dst_stride}, &{src_data}, "
       "{src}.strides[0], &{dst_data}, {n}, {m});", _MVOUT_SPAD)
def st_i8(n: size, m: size, src: [i8][n, 16] @ GEMM_SCRATCH,
          dst: [i8][n, m] @ DRAM):
    """Scratchpad rows back to DRAM (no scaling).

    >>> p = p.replace(p.find_loop('ii'), st_i8)
    """
    assert stride(src, 1) == 1
    assert n <= 16 and m <= 16
    assert stride(dst, 1) == 1
    assert ConfigStore.dst_stride == stride(dst, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


MEMORIES = (GEMM_SCRATCH, GEMM_ACCUM)
CONFIGS = (ConfigLoad, ConfigLoadId1, ConfigLoadAcc, ConfigStore)
INSTRS = (config_ld, config_ld_id1, config_ld_acc, config_st, ld_i8,
          ld_i8_id1, ld_acc_i32, ld_acc_i32_bcast, zero_acc_i32, matmul_i8,
          matmul_i8_sized, st_acc_i8, st_acc_i8_relu, st_acc_i32, st_i8)
