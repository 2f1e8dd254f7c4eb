"""A toy 16x16 matrix accelerator, written as a hardware library (paper §3.2).

Everything here uses only the public exo_hl API, the way an accelerator
vendor would: two memories that C code may not touch directly, one piece of
configuration state, and instructions whose bodies are their semantics and
whose templates are the C emitted at each call.

The "hardware" is simulated in plain C (the instructions' ``c_global``
pieces below) so the scheduled kernels run on this machine. The
simulation is faithful where it matters for scheduling: the load engine reads
its source row stride from a configuration register set by ``config_ld``, not
from the instruction, so a kernel that forgets (or wrongly hoists) the config
write computes garbage, exactly as it would on the device. That register is
the ``ConfigLoad.src_stride`` field itself (templates name it
``{ConfigLoad.src_stride}``): a plain write of the field configures the
engine as ``config_ld`` does, with no second copy to diverge.
"""
from __future__ import annotations

from exo_hl import DRAM, Memory, MemGenError, config, f32, instr, seq, size
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.core_ir.memory import const_value

DIM = 16  # the systolic array is DIM x DIM

# ---------------------------------------------------------------------------
# the C simulator of the device
#
# Each instruction's ``c_global`` carries only the simulator pieces it uses
# (a file must not define static functions it never calls: -Wunused-function),
# each piece under an include guard so instructions sharing one (ld_data and
# ld_data_cfg share the register and mvin) never define it twice.

def _piece(name, text):
    guard = f"TOY_SIM_{name.upper()}"
    return f"#ifndef {guard}\n#define {guard}\n{text.strip()}\n#endif\n"


_CONFIG_LD = _piece("config_ld", """
#include <stdint.h>
/* write the load engine's stride register (ConfigLoad.src_stride) */
static inline void toy_config_ld(int_fast32_t *reg, int_fast32_t s) {
    *reg = s;
}
""")

_MVIN = _piece("mvin", """
#include <stdint.h>
/* mvin: DRAM rows (stride `src_rs` from the config register) ->
   scratchpad rows */
static inline void toy_mvin(int_fast32_t src_rs, const float *src, float *dst,
                            int_fast32_t dst_rs, int_fast32_t n,
                            int_fast32_t m) {
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            dst[i * dst_rs + j] = src[i * src_rs + j];
}
""")

_MVIN_STR = _piece("mvin_str", """
#include <stdint.h>
/* mvin_str: the second load engine, stride given in the instruction */
static inline void toy_mvin_str(const float *src, int_fast32_t src_rs,
                                float *dst, int_fast32_t dst_rs,
                                int_fast32_t n, int_fast32_t m) {
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            dst[i * dst_rs + j] = src[i * src_rs + j];
}
""")

_MATMUL = _piece("matmul", """
#include <stdint.h>
/* matmul: acc[16x16] += a[16x16] * b[16x16] (all on-chip) */
static inline void toy_matmul(const float *a, int_fast32_t a_rs,
                              const float *b, int_fast32_t b_rs,
                              float *c, int_fast32_t c_rs) {
    for (int_fast32_t i = 0; i < 16; i++)
        for (int_fast32_t j = 0; j < 16; j++)
            for (int_fast32_t k = 0; k < 16; k++)
                c[i * c_rs + j] += a[i * a_rs + k] * b[k * b_rs + j];
}
""")

_ZERO_ACC = _piece("zero_acc", """
#include <stdint.h>
/* zero_acc: clear n x m accumulator rows */
static inline void toy_zero_acc(float *dst, int_fast32_t dst_rs,
                                int_fast32_t n, int_fast32_t m) {
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            dst[i * dst_rs + j] = 0.0f;
}
""")

_MVOUT = _piece("mvout", """
#include <stdint.h>
/* mvout: accumulator rows -> DRAM, overwriting (acc = 0) or adding (acc = 1) */
static inline void toy_mvout(const float *src, int_fast32_t src_rs,
                             float *dst, int_fast32_t dst_rs,
                             int_fast32_t n, int_fast32_t m, int acc) {
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++) {
            if (acc) dst[i * dst_rs + j] += src[i * src_rs + j];
            else     dst[i * dst_rs + j] = src[i * src_rs + j];
        }
}
""")


# ---------------------------------------------------------------------------
# memories

class _OnChip(Memory):
    """On-chip SRAM: rows of exactly DIM elements, sizes known statically.

    Simulated as C arrays on the stack; direct loads and stores from C are
    forbidden (``can_read() is False``), so only instructions touch it.
    """

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        if not shape:
            raise MemGenError(f"{srcinfo}: {cls.__name__} holds tiles, not "
                              f"scalars ('{new_name}')")
        sizes = [const_value(s) for s in shape]   # None: a run-time size
        if None in sizes:
            raise MemGenError(f"{srcinfo}: {cls.__name__} buffer "
                              f"'{new_name}' needs constant sizes, got "
                              f"{', '.join(map(str, shape))}")
        if sizes[-1] != DIM:
            raise MemGenError(f"{srcinfo}: {cls.__name__} rows are exactly "
                              f"{DIM} wide, '{new_name}' has {shape[-1]}")
        total = 1
        for s in sizes:
            total *= s
        return f"{prim_type} {new_name}[{total}];"

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo):
        return ""

    @classmethod
    def can_read(cls):
        return False


class SCRATCH(_OnChip):
    """The scratchpad: operand tiles for the matmul engine."""


class ACCUM(_OnChip):
    """The accumulator: result tiles, only written by matmul / zero_acc."""


# ---------------------------------------------------------------------------
# configuration state

@config
class ConfigLoad:
    src_stride: stride


# ---------------------------------------------------------------------------
# instructions

@instr("toy_config_ld(&{ConfigLoad.src_stride}, {s});", _CONFIG_LD)
def config_ld(s: stride):
    ConfigLoad.src_stride = s


@instr("toy_mvin({ConfigLoad.src_stride}, &{src_data}, &{dst_data}, "
       "{dst}.strides[0], {n}, {m});", _MVIN)
def ld_data(n: size, m: size, src: [f32][n, m] @ DRAM,
            dst: [f32][n, 16] @ SCRATCH):
    assert n <= 16 and m <= 16
    assert ConfigLoad.src_stride == stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@instr("toy_mvin_str(&{src_data}, {src}.strides[0], &{dst_data}, "
       "{dst}.strides[0], {n}, {m});", _MVIN_STR)
def ld_data_str(n: size, m: size, src: [f32][n, m] @ DRAM,
                dst: [f32][n, 16] @ SCRATCH):
    assert n <= 16 and m <= 16
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@instr("toy_matmul(&{a_data}, {a}.strides[0], &{b_data}, {b}.strides[0], "
       "&{c_data}, {c}.strides[0]);", _MATMUL)
def matmul(a: [f32][16, 16] @ SCRATCH, b: [f32][16, 16] @ SCRATCH,
           c: [f32][16, 16] @ ACCUM):
    for i in seq(0, 16):
        for j in seq(0, 16):
            for k in seq(0, 16):
                c[i, j] += a[i, k] * b[k, j]


@instr("toy_zero_acc(&{dst_data}, {dst}.strides[0], {n}, {m});", _ZERO_ACC)
def zero_acc(n: size, m: size, dst: [f32][n, 16] @ ACCUM):
    assert n <= 16 and m <= 16
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = 0.0


@instr("toy_mvout(&{src_data}, {src}.strides[0], &{dst_data}, "
       "{dst}.strides[0], {n}, {m}, 1);", _MVOUT)
def st_acc_add(n: size, m: size, src: [f32][n, 16] @ ACCUM,
               dst: [f32][n, m] @ DRAM):
    assert n <= 16 and m <= 16
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] += src[i, j]


@instr("toy_mvout(&{src_data}, {src}.strides[0], &{dst_data}, "
       "{dst}.strides[0], {n}, {m}, 0);", _MVOUT)
def st_acc(n: size, m: size, src: [f32][n, 16] @ ACCUM,
           dst: [f32][n, m] @ DRAM):
    assert n <= 16 and m <= 16
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


# ---------------------------------------------------------------------------
# the self-configuring load of §3.2.3, and its split form (§3.2.4)

@instr("toy_mvin({src}.strides[0], &{src_data}, &{dst_data}, "
       "{dst}.strides[0], {n}, {m});", _MVIN)
def ld_data_cfg(n: size, m: size, src: [f32][n, m] @ DRAM,
                dst: [f32][n, 16] @ SCRATCH):
    """Load that sets the stride register itself: always correct, but it
    flushes the pipeline on every call. (Its body, the meaning, leaves
    ``ConfigLoad.src_stride`` alone, so the model loads with the source's
    own stride and leaves that field alone too; ``split_config`` is
    equivalent to it only modulo the field.)"""
    assert n <= 16 and m <= 16
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


def split_config(load=ld_data_cfg):
    """``load`` rewritten into ``config_ld(stride(src, 0)); ld_data(...)``.

    ``configwrite_at`` adds the register write (the result is equivalent to
    ``load`` only modulo ``ConfigLoad.src_stride``: call_eqv checks that in
    each calling context); the two ``replace`` calls select the config and
    the configured-load instructions, the second one only because the
    write before it makes ld_data's precondition provable.
    """
    p = load.configwrite_at('i', ConfigLoad, 'src_stride', 'stride(src, 0)',
                            before=True)
    p = p.replace(p.find('ConfigLoad.src_stride = _'), config_ld)
    return p.replace(p.find_loop('i'), ld_data)


ACCEL_MEMS = (SCRATCH, ACCUM)
INSTRS = (config_ld, ld_data, ld_data_str, matmul, zero_acc, st_acc_add,
          st_acc, ld_data_cfg)
