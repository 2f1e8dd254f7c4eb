"""RVV register groups (LMUL 2, 4, 8) for f32: the same vector length
``VL.vl``, 2, 4 or 8 registers acting as one.

A group of LMUL ``k`` holds ``k`` times the lanes of one register: ``4 *
k`` on every machine (VLEN >= 128), up to ``2048 * k`` on the longest.
``rvv_vsetvl_e32m{k}(n)`` sets a length of at most ``4 * k`` (exact
everywhere); ``rvv_vsetvl_min_e32m{k}(avl)`` sets ``min(avl, k *
VLMAX)``, the machine's length for the group, after
``rvv_vsetvlmax_e32m1`` (``VL.vlmax``). Memories ``RVVM2``, ``RVVM4``,
``RVVM8``: buffers ``f32[..., 4 * k]`` or ``f32[..., 2048 * k]``, one C
variable (``vfloat32m{k}_t``) per group. Loads, stores and the
multiply-adds of SAXPY and SGEMM, as in ``lib.py`` (tail undisturbed;
``vmacc_unfused`` two roundings, ``vfmacc`` fused). Each asserts ``n <=
4 * k or n <= k * VL.vlmax``: a length the group has on this machine.

Why a module of its own: ``lib.py`` is LMUL 1, what most schedules use;
these are the same instructions again for wider groups, each a short
definition (a user library writes each out: there is no instruction
template in exo_hl's public API).
"""
from __future__ import annotations

from exo_hl import DRAM, f32, instr, seq, size
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)

from .lib import _INCLUDE, _RVV, LANES, VL, RVVRegisters


class RVVM2(RVVRegisters):
    """``vfloat32m2_t`` register groups (LMUL 2): ``f32[..., 8]`` (the
    lanes every machine has) or ``f32[..., 4096]`` (any machine's).

    >>> p = p.set_memory('xr', RVVM2)
    """

    lmul = 2
    registers = {"float": ("vfloat32m2_t", 2 * LANES)}


class RVVM4(RVVRegisters):
    """``vfloat32m4_t`` register groups (LMUL 4): ``f32[..., 16]`` (the
    lanes every machine has) or ``f32[..., 8192]`` (any machine's).

    >>> p = p.set_memory('xr', RVVM4)
    """

    lmul = 4
    registers = {"float": ("vfloat32m4_t", 4 * LANES)}


class RVVM8(RVVRegisters):
    """``vfloat32m8_t`` register groups (LMUL 8): ``f32[..., 32]`` (the
    lanes every machine has) or ``f32[..., 16384]`` (any machine's).

    >>> p = p.set_memory('xr', RVVM8)
    """

    lmul = 8
    registers = {"float": ("vfloat32m8_t", 8 * LANES)}


# ---------------------------------------------------------------------------
# LMUL 2

@instr("{VL.vl} = __riscv_vsetvl_e32m2({n});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_e32m2(n: size):
    """``vl = n`` for groups of 2 (``n <= 8``: exact on every machine).

    >>> p = p.replace(p.find('VL.vl = _'), rvv_vsetvl_e32m2)
    """
    assert n <= 8
    VL.vl = n


@instr("{VL.vl} = __riscv_vsetvl_e32m2({avl} < 2 * {VL.vlmax} ? {avl} "
       ": 2 * {VL.vlmax});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_min_e32m2(avl: size):
    """``vl = min(avl, 2 * VLMAX)``, the machine's length for groups of
    2 (after ``rvv_vsetvlmax_e32m1``; the C clamps ``avl`` first, so
    ``vsetvl`` returns it exactly).

    >>> # if Strip.off < n: rvv_vsetvl_min_e32m2(n - Strip.off); ...
    """
    assert VL.vlmax >= 4
    assert VL.vlmax <= 2048
    if avl < 2 * VL.vlmax:
        VL.vl = avl
    else:
        VL.vl = 2 * VL.vlmax


@instr("{dst_data} = __riscv_vle32_v_f32m2_tu({dst_data}, &{src_data}, "
       "{VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vle32_f32m2(n: size, dst: [f32][n] @ RVVM2, src: [f32][n] @ DRAM):
    """Load ``n`` = ``vl`` floats into a group of 2.

    >>> p = p.replace(p.find_loop('i0'), rvv_vle32_f32m2)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("__riscv_vse32_v_f32m2(&{dst_data}, {src_data}, {VL.vl});",
       _INCLUDE, cpu_features=_RVV)
def rvv_vse32_f32m2(n: size, dst: [f32][n] @ DRAM, src: [f32][n] @ RVVM2):
    """Store the first ``n`` = ``vl`` lanes of a group of 2.

    >>> p = p.replace(p.find_loop('i1'), rvv_vse32_f32m2)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("{dst_data} = __riscv_vfmacc_vf_f32m2_tu({dst_data}, {a_data}, "
       "{b_data}, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfmacc_vf_f32m2(n: size, dst: [f32][n] @ RVVM2, a: [f32][1] @ DRAM,
                        b: [f32][n] @ RVVM2):
    """``dst += a[0] * b`` in ``n`` lanes of groups of 2, fused.

    >>> p = p.replace(p.find_loop('i'), rvv_vfmacc_vf_f32m2)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = __riscv_vfadd_vv_f32m2_tu({dst_data}, {dst_data}, "
       "__riscv_vfmul_vf_f32m2_tu({dst_data}, {b_data}, {a_data}, "
       "{VL.vl}), {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vmacc_unfused_vf_f32m2(n: size, dst: [f32][n] @ RVVM2,
                               a: [f32][1] @ DRAM, b: [f32][n] @ RVVM2):
    """``dst += a[0] * b`` in ``n`` lanes of groups of 2, a multiply then
    an add (two roundings, as the body).

    >>> p = p.replace(p.find_loop('i'), rvv_vmacc_unfused_vf_f32m2)
    """
    assert n <= 8 or n <= 2 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[0] * b[i]


# ---------------------------------------------------------------------------
# LMUL 4

@instr("{VL.vl} = __riscv_vsetvl_e32m4({n});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_e32m4(n: size):
    """``vl = n`` for groups of 4 (``n <= 16``: exact on every machine).

    >>> p = p.replace(p.find('VL.vl = _'), rvv_vsetvl_e32m4)
    """
    assert n <= 16
    VL.vl = n


@instr("{VL.vl} = __riscv_vsetvl_e32m4({avl} < 4 * {VL.vlmax} ? {avl} "
       ": 4 * {VL.vlmax});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_min_e32m4(avl: size):
    """``vl = min(avl, 4 * VLMAX)``, the machine's length for groups of
    4 (after ``rvv_vsetvlmax_e32m1``; the C clamps ``avl`` first, so
    ``vsetvl`` returns it exactly).

    >>> # if Strip.off < n: rvv_vsetvl_min_e32m4(n - Strip.off); ...
    """
    assert VL.vlmax >= 4
    assert VL.vlmax <= 2048
    if avl < 4 * VL.vlmax:
        VL.vl = avl
    else:
        VL.vl = 4 * VL.vlmax


@instr("{dst_data} = __riscv_vle32_v_f32m4_tu({dst_data}, &{src_data}, "
       "{VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vle32_f32m4(n: size, dst: [f32][n] @ RVVM4, src: [f32][n] @ DRAM):
    """Load ``n`` = ``vl`` floats into a group of 4.

    >>> p = p.replace(p.find_loop('i0'), rvv_vle32_f32m4)
    """
    assert n <= 16 or n <= 4 * VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("__riscv_vse32_v_f32m4(&{dst_data}, {src_data}, {VL.vl});",
       _INCLUDE, cpu_features=_RVV)
def rvv_vse32_f32m4(n: size, dst: [f32][n] @ DRAM, src: [f32][n] @ RVVM4):
    """Store the first ``n`` = ``vl`` lanes of a group of 4.

    >>> p = p.replace(p.find_loop('i1'), rvv_vse32_f32m4)
    """
    assert n <= 16 or n <= 4 * VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("{dst_data} = __riscv_vfmacc_vf_f32m4_tu({dst_data}, {a_data}, "
       "{b_data}, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfmacc_vf_f32m4(n: size, dst: [f32][n] @ RVVM4, a: [f32][1] @ DRAM,
                        b: [f32][n] @ RVVM4):
    """``dst += a[0] * b`` in ``n`` lanes of groups of 4, fused.

    >>> p = p.replace(p.find_loop('i'), rvv_vfmacc_vf_f32m4)
    """
    assert n <= 16 or n <= 4 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = __riscv_vfadd_vv_f32m4_tu({dst_data}, {dst_data}, "
       "__riscv_vfmul_vf_f32m4_tu({dst_data}, {b_data}, {a_data}, "
       "{VL.vl}), {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vmacc_unfused_vf_f32m4(n: size, dst: [f32][n] @ RVVM4,
                               a: [f32][1] @ DRAM, b: [f32][n] @ RVVM4):
    """``dst += a[0] * b`` in ``n`` lanes of groups of 4, a multiply then
    an add (two roundings, as the body).

    >>> p = p.replace(p.find_loop('i'), rvv_vmacc_unfused_vf_f32m4)
    """
    assert n <= 16 or n <= 4 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[0] * b[i]


# ---------------------------------------------------------------------------
# LMUL 8

@instr("{VL.vl} = __riscv_vsetvl_e32m8({n});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_e32m8(n: size):
    """``vl = n`` for groups of 8 (``n <= 32``: exact on every machine).

    >>> p = p.replace(p.find('VL.vl = _'), rvv_vsetvl_e32m8)
    """
    assert n <= 32
    VL.vl = n


@instr("{VL.vl} = __riscv_vsetvl_e32m8({avl} < 8 * {VL.vlmax} ? {avl} "
       ": 8 * {VL.vlmax});", _INCLUDE, cpu_features=_RVV)
def rvv_vsetvl_min_e32m8(avl: size):
    """``vl = min(avl, 8 * VLMAX)``, the machine's length for groups of
    8 (after ``rvv_vsetvlmax_e32m1``; the C clamps ``avl`` first, so
    ``vsetvl`` returns it exactly).

    >>> # if Strip.off < n: rvv_vsetvl_min_e32m8(n - Strip.off); ...
    """
    assert VL.vlmax >= 4
    assert VL.vlmax <= 2048
    if avl < 8 * VL.vlmax:
        VL.vl = avl
    else:
        VL.vl = 8 * VL.vlmax


@instr("{dst_data} = __riscv_vle32_v_f32m8_tu({dst_data}, &{src_data}, "
       "{VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vle32_f32m8(n: size, dst: [f32][n] @ RVVM8, src: [f32][n] @ DRAM):
    """Load ``n`` = ``vl`` floats into a group of 8.

    >>> p = p.replace(p.find_loop('i0'), rvv_vle32_f32m8)
    """
    assert n <= 32 or n <= 8 * VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("__riscv_vse32_v_f32m8(&{dst_data}, {src_data}, {VL.vl});",
       _INCLUDE, cpu_features=_RVV)
def rvv_vse32_f32m8(n: size, dst: [f32][n] @ DRAM, src: [f32][n] @ RVVM8):
    """Store the first ``n`` = ``vl`` lanes of a group of 8.

    >>> p = p.replace(p.find_loop('i1'), rvv_vse32_f32m8)
    """
    assert n <= 32 or n <= 8 * VL.vlmax
    assert VL.vl == n
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, n):
        dst[i] = src[i]


@instr("{dst_data} = __riscv_vfmacc_vf_f32m8_tu({dst_data}, {a_data}, "
       "{b_data}, {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vfmacc_vf_f32m8(n: size, dst: [f32][n] @ RVVM8, a: [f32][1] @ DRAM,
                        b: [f32][n] @ RVVM8):
    """``dst += a[0] * b`` in ``n`` lanes of groups of 8, fused.

    >>> p = p.replace(p.find_loop('i'), rvv_vfmacc_vf_f32m8)
    """
    assert n <= 32 or n <= 8 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[0] * b[i]


@instr("{dst_data} = __riscv_vfadd_vv_f32m8_tu({dst_data}, {dst_data}, "
       "__riscv_vfmul_vf_f32m8_tu({dst_data}, {b_data}, {a_data}, "
       "{VL.vl}), {VL.vl});", _INCLUDE, cpu_features=_RVV)
def rvv_vmacc_unfused_vf_f32m8(n: size, dst: [f32][n] @ RVVM8,
                               a: [f32][1] @ DRAM, b: [f32][n] @ RVVM8):
    """``dst += a[0] * b`` in ``n`` lanes of groups of 8, a multiply then
    an add (two roundings, as the body).

    >>> p = p.replace(p.find_loop('i'), rvv_vmacc_unfused_vf_f32m8)
    """
    assert n <= 32 or n <= 8 * VL.vlmax
    assert VL.vl == n
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, n):
        dst[i] += a[0] * b[i]


INSTRS = (rvv_vsetvl_e32m2, rvv_vsetvl_min_e32m2,
          rvv_vle32_f32m2, rvv_vse32_f32m2,
          rvv_vfmacc_vf_f32m2, rvv_vmacc_unfused_vf_f32m2,
          rvv_vsetvl_e32m4, rvv_vsetvl_min_e32m4,
          rvv_vle32_f32m4, rvv_vse32_f32m4,
          rvv_vfmacc_vf_f32m4, rvv_vmacc_unfused_vf_f32m4,
          rvv_vsetvl_e32m8, rvv_vsetvl_min_e32m8,
          rvv_vle32_f32m8, rvv_vse32_f32m8,
          rvv_vfmacc_vf_f32m8, rvv_vmacc_unfused_vf_f32m8)
