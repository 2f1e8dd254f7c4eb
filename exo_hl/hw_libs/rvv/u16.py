"""RVV ui16 lanes (LMUL 1, ``vuint16m1_t`` registers in memory ``RVV``):
the vector length for 16-bit elements, loads, stores, the wrapping add
and the two means of three of apps/blur.

The vector length is the same config state ``VL.vl`` as for f32: it is a
number of elements, the value the C passes to each intrinsic. What
differs is how many lanes a register has. At LMUL 1 a machine's VLMAX for
16-bit elements is VLEN / 16, twice its VLMAX for 32-bit ones (``2 *
VL.vlmax``): at least 8 (VLEN >= 128), at most 4096. So
``rvv_vsetvl_e16m1(n)`` asserts ``n <= 8`` (exact on every machine, as
``rvv_vsetvl_e32m1``'s ``n <= 4``), ``rvv_vsetvl_min_e16m1(avl)`` sets
``min(avl, 2 * VLMAX)`` after ``rvv_vsetvlmax_e32m1``, and every ui16
instruction asserts ``n <= 8 or n <= 2 * VL.vlmax``. A length of 8 set
here is refused by an f32 LMUL-1 instruction (``n <= 4 or n <=
VL.vlmax`` is not known), which would act on fewer lanes than its body
says; a length of at most 4 is exact for both.

Integer bodies are exact on the whole ui16 range, under the rules the
AVX2 and NEON libraries' are (docs/semantics.md): data arithmetic on ui16
happens in ``int`` and every write wraps to 16 bits. The exact mean of
three needs 18 bits: the C forms the sum in 32-bit lanes with widening
adds (``vwaddu``), divides by 3 with the high half of a multiply by
``0xAAAAAAAB`` and a narrowing shift by 1 (``floor(x / 3) ==
(x * 0xAAAAAAAB) >> 33`` for every 32-bit ``x``); the wrapping one adds in
16 bits and divides the same way with ``0xAAAB`` (``>> 17``, every 16-bit
``x``). The 32-bit lanes of a ``vuint32m2_t`` group number the same as
the 16-bit lanes of one register, so the same ``vl`` serves both.

Why a module of its own: ``lib.py`` is the f32 library; these are the
16-bit pixel instructions (image kernels), a separate set a schedule
imports with the rest from ``exo_hl.hw_libs.rvv``.
"""
from __future__ import annotations

from exo_hl import DRAM, instr, seq, size, ui16
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)

from .lib import _INCLUDE, _RVV, RVV, VL

# ---------------------------------------------------------------------------
# the vector length for 16-bit elements


@instr("{VL.vl} = __riscv_vsetvl_e16m1({n});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_e16m1(n: size):
    """``vl = n`` for ui16 registers (``n <= 8``: exact on every RVV
    machine, whose VLMAX for e16 m1 is at least 8).

    >>> p = p.replace(p.find('VL.vl = _'), rvv_vsetvl_e16m1)
    """
    assert n <= 8
    VL.vl = n


@instr("{VL.vl} = __riscv_vsetvl_e16m1({avl} < 2 * {VL.vlmax} ? {avl} "
       ": 2 * {VL.vlmax});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_min_e16m1(avl: size):
    """``vl = min(avl, 2 * VLMAX)``, the machine's length for ui16
    registers (VLEN / 16; after ``rvv_vsetvlmax_e32m1``; the C clamps
    ``avl`` first, so ``vsetvl`` returns it exactly).

    >>> # if Strip.off < n: rvv_vsetvl_min_e16m1(n - Strip.off); ...
    """
    assert VL.vlmax >= 4
    assert VL.vlmax <= 2048
    if avl < 2 * VL.vlmax:
        VL.vl = avl
    else:
        VL.vl = 2 * VL.vlmax


# ---------------------------------------------------------------------------
# loads, stores, arithmetic

@instr("{dst_data} = __riscv_vle16_v_u16m1_tu({dst_data}, &{src_data}, "
       "{VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vle16_u16(n: size, dst: [ui16][n] @ RVV, src: [ui16][n] @ DRAM):
    """Load ``n`` = ``vl`` ui16 (``vle16.v``, tail undisturbed).

    >>> p = p.replace(p.find_loop('xi'), rvv_vle16_u16)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("__riscv_vse16_v_u16m1(&{dst_data}, {src_data}, {VL.vl});",
       _INCLUDE, cpu_features=_RVV)
def rvv_vse16_u16(n: size, dst: [ui16][n] @ DRAM, src: [ui16][n] @ RVV):
    """Store the first ``n`` = ``vl`` ui16 lanes (``vse16.v``).

    >>> p = p.replace(p.find_loop('xi'), rvv_vse16_u16)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("{dst_data} = __riscv_vadd_vv_u16m1_tu({dst_data}, {a_data}, "
       "{b_data}, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vadd_vv_u16(n: size, dst: [ui16][n] @ RVV, a: [ui16][n] @ RVV,
                    b: [ui16][n] @ RVV):
    """``dst = a + b`` in ``n`` lanes, modulo 2**16 (the write wraps).

    >>> p = p.replace(p.find_loop('xi'), rvv_vadd_vv_u16)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] = a[i] + b[i]


@instr("{dst_data} = __riscv_vnsrl_wx_u16m1_tu({dst_data}, "
       "__riscv_vmulhu_vx_u32m2(__riscv_vwaddu_wv_u32m2("
       "__riscv_vwaddu_vv_u32m2({a_data}, {b_data}, {VL.vl}), {c_data}, "
       "{VL.vl}), 0xAAAAAAABu, {VL.vl}), 1, {VL.vl});",
       _INCLUDE, cpu_features=_RVV)
def rvv_mean3_u16(n: size, dst: [ui16][n] @ RVV, a: [ui16][n] @ RVV,
                  b: [ui16][n] @ RVV, c: [ui16][n] @ RVV):
    """``dst = (a + b + c) / 3`` in ``n`` lanes, the exact floor of the
    mean of three on the whole ui16 range (the sum, up to 196605, is
    formed in ``int``): one stage of a 3x3 box blur. Two widening adds
    (32-bit sums), the high half of a multiply by ``0xAAAAAAAB`` and a
    narrowing shift by 1: four instructions.

    >>> p = p.replace(p.find_loop('xi'), rvv_mean3_u16)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert stride(c, 0) == 1
    for i in seq(0, n):
        dst[i] = (a[i] + b[i] + c[i]) / 3


@instr("{dst_data} = __riscv_vsrl_vx_u16m1_tu({dst_data}, "
       "__riscv_vmulhu_vx_u16m1(__riscv_vadd_vv_u16m1(__riscv_vadd_vv_u16m1("
       "{a_data}, {b_data}, {VL.vl}), {c_data}, {VL.vl}), 0xAAABu, "
       "{VL.vl}), 1, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_mean3_wrap_u16(n: size, dst: [ui16][n] @ RVV, a: [ui16][n] @ RVV,
                       b: [ui16][n] @ RVV, c: [ui16][n] @ RVV):
    """``dst = ((a + b + c) % 65536) / 3`` in ``n`` lanes: the sum wraps
    modulo 2**16 as in 16-bit arithmetic (Halide's ``apps/blur`` stage),
    then is divided by 3 exactly. Two wrapping adds, the high half of a
    multiply by ``0xAAAB``, a shift by 1.

    >>> p = p.replace(p.find_loop('xi'), rvv_mean3_wrap_u16)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    assert stride(c, 0) == 1
    for i in seq(0, n):
        dst[i] = ((a[i] + b[i] + c[i]) % 65536) / 3


INSTRS = (rvv_vsetvl_e16m1, rvv_vsetvl_min_e16m1, rvv_vle16_u16,
          rvv_vse16_u16, rvv_vadd_vv_u16, rvv_mean3_u16, rvv_mean3_wrap_u16)
