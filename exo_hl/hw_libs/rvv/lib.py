"""RISC-V Vector (RVV 1.0) for f32 as a user library, with the vector
length as configuration state.

Written exactly as a user would write it (public ``exo_hl`` API only).

The vector length. RVV instructions act on the first ``vl`` elements of a
register; ``vl`` is set by ``vsetvl`` and lives in a CSR. Here it is a
``@config`` field, ``VL.vl``: ``rvv_vsetvl_e32m1(n)`` writes it, and every
other instruction takes its length ``n`` as an argument and asserts
``VL.vl == n``. The checker therefore proves at every call that the
vector length in force is the one the instruction's body uses; a schedule
that calls an instruction under another ``vl`` (or none) is refused, and
a rewrite that moves a ``vsetvl`` past an instruction that depends on it
is refused like any other config dependence.

Vector-length agnostic, two ways. Lengths every machine has:
``vsetvl(n)`` sets ``vl = n`` exactly when ``n`` is at most VLMAX, and
the V extension requires VLEN >= 128, so VLMAX >= 4 for 32-bit elements
at LMUL 1 on every RVV 1.0 machine; ``rvv_vsetvl_e32m1`` asserts ``n <=
4``, and the same code computes the same result at any VLEN. The
machine's length: ``rvv_vsetvlmax_e32m1`` reads the machine's VLMAX into
``VL.vlmax`` (the checker knows only ``4 <= VL.vlmax <= 2048``) and
``rvv_vsetvl_min_e32m1(avl)`` sets ``vl = min(avl, VLMAX)``: a strip loop
(apps/saxpy_rvv) uses every lane of a longer machine, one executable for
all. A register holds more lanes on a longer machine; lanes past ``vl``
are left undisturbed (the ``_tu`` intrinsics), as the bodies say, and
never read. Every instruction asserts ``n <= 4 or n <= VL.vlmax`` (a
length its register has on this machine): a ``vl`` set for a register
group (``rvv_vsetvl_e32m8(32)``) is refused by an LMUL-1 instruction,
which would act on fewer lanes than its body says.

``VL.vlmax`` is the machine's, written by ``rvv_vsetvlmax_e32m1`` only: it
is a hardware-defined field, so C generation refuses a procedure that
writes it by hand (``VL.vlmax = 64``, the algorithm's stand-in, must be
``replace``d by ``rvv_vsetvlmax_e32m1``). A caller that passes a context
holding another value (a procedure that reads ``VL.vlmax`` without
calling ``rvv_vsetvlmax_e32m1`` first) still describes another machine
than the one the code runs on.

Registers. ``vfloat32m1_t`` is a sizeless type (no arrays of it in C), so
a buffer ``f32[..., 4] @ RVV`` (or ``f32[..., 2048]``, for the machine's
lengths) becomes one C variable per register,
initialised to zero (a register read before written reads 0.0, as a
stack array does), and may only be indexed with constants: unroll the
loops over it.

Rounding: ``rvv_vfmacc_*`` are fused (one rounding), equal to their
bodies where products are exact; ``rvv_vmacc_unfused_vf`` multiplies then
adds (two roundings, as its body); ``rvv_vfredosum`` sums in lane order
(the ordered reduction), as its body.
"""
from __future__ import annotations

from exo_hl import DRAM, MemGenError, config, f32, instr, seq, size
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.core_ir.memory import const_value
from exo_hl.hw_libs.vector_registers import VectorRegisters

LANES = 4          # lanes every RVV 1.0 machine has (VLEN >= 128, e32 m1)
MAX_LANES = 2048   # lanes no RVV 1.0 machine exceeds (VLEN <= 65536, e32 m1)
LANESU16 = 8       # ui16 lanes every machine has (e16 m1)
MAX_LANESU16 = 4096  # ui16 lanes no machine exceeds (e16 m1)

_RVV = {"rvv"}
_INCLUDE = "#include <riscv_vector.h>\n"

#: register type -> a C expression of a register with every lane zero
#: (what a register buffer is initialised to, as a stack array reads 0)
_ZERO = {**{f"vfloat32m{k}_t": f"__riscv_vfmv_v_f_f32m{k}(0.0f, "
            f"__riscv_vsetvlmax_e32m{k}())" for k in (1, 2, 4, 8)},
         "vuint16m1_t": "__riscv_vmv_v_x_u16m1(0, __riscv_vsetvlmax_e16m1())"}
#: register type -> the instruction setting a machine's length for it
_VSETVL_MIN = {**{f"vfloat32m{k}_t": f"rvv_vsetvl_min_e32m{k}"
                  for k in (1, 2, 4, 8)},
               "vuint16m1_t": "rvv_vsetvl_min_e16m1"}


@config(hardware_fields={"vlmax": "rvv_vsetvlmax_e32m1"})
class VL:
    """The vector length in force (RVV's ``vl`` CSR), set by
    ``rvv_vsetvl_e32m1`` (a length of at most 4), ``rvv_vsetvlmax_e32m1``
    and ``rvv_vsetvl_min_e32m1`` (any length); and the machine's VLMAX
    for e32 m1 (VLEN / 32), ``vlmax``, read by ``rvv_vsetvlmax_e32m1``
    (hardware-defined: compiled code writes it only by that call).

    >>> p = p.configwrite_at(p.find_loop('k'), VL, 'vl', '4', before=True)
    """
    vl: size
    vlmax: size


class RVVRegisters(VectorRegisters):
    """What the RVV register memories share: registers of LMUL ``lmul``
    (``vfloat32m{lmul}_t``, of which ``4 * lmul`` lanes every machine has
    and at most ``2048 * lmul`` any has), sizeless C variables, one per
    register, indexed with constants only. The memories are distinct
    classes, none a subclass of another, so an instruction of one LMUL
    takes no register of another. ``RVV`` (LMUL 1) also has ``vuint16m1_t``
    registers for ui16 (``u16.py``): twice the lanes, ``8`` to ``4096``."""

    lmul = 1
    registers = {"float": ("vfloat32m1_t", LANES)}
    cpu_features = frozenset(_RVV)

    @classmethod
    def global_(cls):
        return _INCLUDE

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        reg, lanes = cls._lanes(prim_type, new_name, srcinfo)
        name, most = cls.__name__, lanes * (MAX_LANES // LANES)
        if not shape or const_value(shape[-1]) not in (lanes, most):
            raise MemGenError(
                f"{srcinfo}: {name} buffers of {prim_type} need a last "
                f"dimension of {lanes} (one register, the lanes every "
                f"machine has) or {most} (one register of any machine: "
                f"for lengths from {_VSETVL_MIN[reg]}), '{new_name}' has "
                f"shape [{', '.join(map(str, shape))}]")
        regs = 1
        for s in shape[:-1]:
            v = const_value(s)
            if v is None:
                raise MemGenError(f"{srcinfo}: {name} buffer '{new_name}' "
                                  f"needs constant sizes, got {s}")
            regs *= v
        zero = _ZERO[reg]
        if len(shape) == 1:
            return f"{reg} {new_name} = {zero};"
        # one variable per register (each marked used: a schedule may
        # leave one unused), and the buffer's own name as a constant, for
        # the backend's unused-name bookkeeping, which sees only it
        regs_c = " ".join(f"{reg} {new_name}_{j} = {zero}; "
                          f"(void){new_name}_{j};" for j in range(regs))
        return f"{regs_c} enum {{ {new_name} = {regs} }};"

    @classmethod
    def window(cls, basetyp, baseptr, indices, strides, srcinfo):
        """The variable of the register at constant ``indices``."""
        if const_value(indices[-1]) != 0:
            raise MemGenError(f"{srcinfo}: {cls.__name__} buffer "
                              f"'{baseptr}' can only be addressed a whole "
                              f"register at a time (lane index "
                              f"{indices[-1]}, expected 0)")
        if len(indices) == 1:
            return baseptr
        flat = 0
        for i, s in zip(indices[:-1], strides[:-1]):
            iv, sv = const_value(i), const_value(s)
            if iv is None or sv is None:
                raise MemGenError(
                    f"{srcinfo}: RVV registers are sizeless C variables: "
                    f"'{baseptr}' must be indexed with constants (got "
                    f"{i}); unroll the loops over it")
            # strides[-2] is the last dimension's size: one register
            flat += iv * (sv // const_value(strides[-2]))
        return f"{baseptr}_{flat}"


class RVV(RVVRegisters):
    """RVV ``vfloat32m1_t`` registers (LMUL 1): a buffer ``f32[..., 4] @
    RVV`` (the ``LANES`` = 4 lanes every machine has: lengths set by
    ``rvv_vsetvl_e32m1``) or ``f32[..., 2048] @ RVV`` (``MAX_LANES``, as
    many as any machine has: lengths up to the machine's VLMAX, from
    ``rvv_vsetvl_min_e32m1``) is one C variable per register, indexed with
    constants only. The lanes past the machine's VLMAX exist only in the
    model; no instruction reaches them (each acts on ``VL.vl`` lanes, and
    ``VL.vl <= VL.vlmax``).

    ``vuint16m1_t`` registers hold ui16: ``ui16[..., 8] @ RVV``
    (``LANESU16``, lengths from ``rvv_vsetvl_e16m1``) or ``ui16[...,
    4096]`` (``MAX_LANESU16``, lengths up to the machine's ``2 *
    VL.vlmax``, from ``rvv_vsetvl_min_e16m1``); instructions in ``u16.py``.

    >>> p = p.set_memory('C_reg', RVV)      # C_reg: f32[4, 4] -> 4 registers
    """

    registers = {"float": ("vfloat32m1_t", LANES),
                 "uint16_t": ("vuint16m1_t", LANESU16)}


# ---------------------------------------------------------------------------
# the vector length

@instr("{VL.vl} = __riscv_vsetvl_e32m1({n});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_e32m1(n: size):
    """``vl = n`` (``n <= 4``: exact on every RVV machine).

    >>> p = p.replace(p.find('VL.vl = _'), rvv_vsetvl_e32m1)
    """
    assert n <= 4
    VL.vl = n


@instr("{VL.vlmax} = (int_fast32_t)__riscv_vsetvlmax_e32m1(); "
       "{VL.vl} = {VL.vlmax};", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvlmax_e32m1():
    """``vl = VLMAX``, the machine's number of f32 lanes in a register
    (VLEN / 32), also kept in ``VL.vlmax`` for ``rvv_vsetvl_min_e32m1``.

    VLMAX is a property of the machine, not of the program: the C reads
    it from the hardware; the body keeps the value ``VL.vlmax`` already
    holds (``interpret()``: the ``config_state`` given, unset = 0 meaning
    VLEN 128), brought into the range RVV 1.0 allows, 4 (VLEN >= 128) to
    2048 (VLEN <= 65536). So the checker knows only ``4 <= VL.vlmax <=
    2048``: what it proves holds at every VLEN.

    >>> p = p.replace(p.find('VL.vlmax = _').parent().expand(0, 2),
    ...               rvv_vsetvlmax_e32m1)
    """
    if VL.vlmax < 4:
        VL.vlmax = 4
    if VL.vlmax > 2048:
        VL.vlmax = 2048
    VL.vl = VL.vlmax


@instr("{VL.vl} = __riscv_vsetvl_e32m1({avl} < {VL.vlmax} ? {avl} : "
       "{VL.vlmax});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_min_e32m1(avl: size):
    """``vl = min(avl, VLMAX)``: the length of a strip of ``avl`` elements
    still to do, at the machine's vector length (after
    ``rvv_vsetvlmax_e32m1``). The C passes ``min(avl, VLMAX)`` to
    ``vsetvl``, which RVV 1.0 then returns exactly (for ``VLMAX < avl <
    2 * VLMAX`` it would let ``vsetvl(avl)`` return less than VLMAX).

    >>> # if Strip.off < n: rvv_vsetvl_min_e32m1(n - Strip.off); ...
    """
    assert VL.vlmax >= 4
    assert VL.vlmax <= 2048
    if avl < VL.vlmax:
        VL.vl = avl
    else:
        VL.vl = VL.vlmax


# ---------------------------------------------------------------------------
# loads, stores, constants

@instr("{dst_data} = __riscv_vle32_v_f32m1_tu({dst_data}, &{src_data}, "
       "{VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vle32_f32(n: size, dst: [f32][n] @ RVV, src: [f32][n] @ DRAM):
    """Load ``n`` = ``vl`` floats (``vle32.v``, tail undisturbed).

    >>> p = p.replace(p.find_loop('i1'), rvv_vle32_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("__riscv_vse32_v_f32m1(&{dst_data}, {src_data}, {VL.vl});", _INCLUDE,
       cpu_features=_RVV)
def rvv_vse32_f32(n: size, dst: [f32][n] @ DRAM, src: [f32][n] @ RVV):
    """Store the first ``n`` = ``vl`` lanes (``vse32.v``).

    >>> p = p.replace(p.find_loop('i1'), rvv_vse32_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("{dst_data} = __riscv_vfmv_v_f_f32m1_tu({dst_data}, {src_data}, "
       "{VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfmv_v_f_f32(n: size, dst: [f32][n] @ RVV, src: [f32][1] @ DRAM):
    """Broadcast one float from memory into ``n`` lanes (``vfmv.v.f``).

    >>> p = p.replace(p.find_loop('ji'), rvv_vfmv_v_f_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[0]


@instr("{dst_data} = __riscv_vfmv_v_f_f32m1_tu({dst_data}, {src_data}, "
       "{VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfmv_v_f_scalar_f32(n: size, dst: [f32][n] @ RVV, src: f32):
    """Broadcast a scalar (an ``f32`` variable or argument) into ``n``
    lanes.

    >>> p = p.replace(p.find_loop('ji'), rvv_vfmv_v_f_scalar_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src


@instr("{dst_data} = __riscv_vfmv_v_f_f32m1_tu({dst_data}, 0.0f, "
       "{VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vzero_f32(n: size, dst: [f32][n] @ RVV):
    """Set ``n`` lanes to 0.0.

    >>> p = p.replace(p.find_loop('ji'), rvv_vzero_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = 0.0


# ---------------------------------------------------------------------------
# arithmetic

@instr("{dst_data} = __riscv_vfadd_vv_f32m1_tu({dst_data}, {a_data}, "
       "{b_data}, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfadd_vv_f32(n: size, dst: [f32][n] @ RVV, a: [f32][n] @ RVV,
                     b: [f32][n] @ RVV):
    """``dst = a + b`` in ``n`` lanes.

    >>> p = p.replace(p.find_loop('ji'), rvv_vfadd_vv_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = __riscv_vfmul_vv_f32m1_tu({dst_data}, {a_data}, "
       "{b_data}, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfmul_vv_f32(n: size, dst: [f32][n] @ RVV, a: [f32][n] @ RVV,
                     b: [f32][n] @ RVV):
    """``dst = a * b`` in ``n`` lanes.

    >>> p = p.replace(p.find_loop('ji'), rvv_vfmul_vv_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] = a[i] * b[i]


@instr("{dst_data} = __riscv_vfmacc_vv_f32m1_tu({dst_data}, {a_data}, "
       "{b_data}, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfmacc_vv_f32(n: size, dst: [f32][n] @ RVV, a: [f32][n] @ RVV,
                      b: [f32][n] @ RVV):
    """``dst += a * b`` in ``n`` lanes, fused (``vfmacc.vv``).

    >>> p = p.replace(p.find_loop('ji'), rvv_vfmacc_vv_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = __riscv_vfmacc_vf_f32m1_tu({dst_data}, {a_data}, "
       "{b_data}, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfmacc_vf_f32(n: size, dst: [f32][n] @ RVV, a: [f32][1] @ DRAM,
                      b: [f32][n] @ RVV):
    """``dst += a[0] * b`` in ``n`` lanes, fused (``vfmacc.vf``: the
    scalar in an f register).

    >>> p = p.replace(p.find_loop('ji'), rvv_vfmacc_vf_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = __riscv_vfadd_vv_f32m1_tu({dst_data}, {dst_data}, "
       "__riscv_vfmul_vf_f32m1_tu({dst_data}, {b_data}, {a_data}, {VL.vl}), "
       "{VL.vl});",
       _INCLUDE, cpu_features=_RVV)
def rvv_vmacc_unfused_vf_f32(n: size, dst: [f32][n] @ RVV,
                             a: [f32][1] @ DRAM, b: [f32][n] @ RVV):
    """``dst += a[0] * b`` in ``n`` lanes, a multiply then an add (two
    roundings, as the body: ``vfmul.vf`` + ``vfadd.vv``): equal to
    ``interpret()`` bit for bit on any data. Both tail-undisturbed, so
    the loop needs no ``vsetvli`` to switch tail policies.

    >>> p = p.replace(p.find_loop('ji'), rvv_vmacc_unfused_vf_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredosum_vs_f32m1_"
       "f32m1({src_data}, __riscv_vfmv_s_f_f32m1({dst_data}, 1), "
       "{VL.vl}));", _INCLUDE, cpu_features=_RVV)
def rvv_vfredosum_f32(n: size, dst: [f32][1] @ DRAM, src: [f32][n] @ RVV):
    """``dst[0] += src[0] + ... + src[n-1]`` in lane order (the ordered
    sum ``vfredosum.vs``).

    >>> p = p.replace(p.find_loop('ji'), rvv_vfredosum_f32)
    """
    assert n <= 4 or n <= VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    for i in seq(0, n):
        dst[0] += src[i]


INSTRS = (rvv_vsetvl_e32m1, rvv_vsetvlmax_e32m1, rvv_vsetvl_min_e32m1,
          rvv_vle32_f32, rvv_vse32_f32, rvv_vfmv_v_f_f32,
          rvv_vfmv_v_f_scalar_f32, rvv_vzero_f32, rvv_vfadd_vv_f32,
          rvv_vfmul_vv_f32, rvv_vfmacc_vv_f32, rvv_vfmacc_vf_f32,
          rvv_vmacc_unfused_vf_f32, rvv_vfredosum_f32)
