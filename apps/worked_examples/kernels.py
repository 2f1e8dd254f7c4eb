"""The two kernels of docs/worked_examples.md: a matrix-vector product (a
reduction) and a 3x3 box blur (a stencil), each as the naive loop nest and
its schedule onto a shipped vector library.

Each schedule is one call of the standard library: every step it takes is
a checked rewrite, so the scheduled kernels compute what the naive ones do
(the reduction's additions reordered, as a BLAS does). ``schedule_gemv_row``
is the page's first gemv schedule (one row at a time), kept to measure
what the block of rows adds.
"""
from __future__ import annotations

from exo_hl import DRAM, f32, proc, seq, size
from exo_hl.codegen_c.host_cpu import host_features
from exo_hl.hw_libs import avx2, avx512, neon, rvv
from exo_hl.stdlib import (vectorize, vectorize_reduction,
                           vectorize_reduction_rows)


@proc
def gemv(m: size, n: size, A: f32[m, n] @ DRAM, x: f32[n] @ DRAM,
         y: f32[m] @ DRAM):
    assert n % 16 == 0
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


@proc
def blur3x3(h: size, w: size, x: f32[h + 2, w + 2] @ DRAM,
            y: f32[h, w] @ DRAM):
    for i in seq(0, h):
        for j in seq(0, w):
            y[i, j] = (x[i, j] + x[i, j + 1] + x[i, j + 2]
                       + x[i + 1, j] + x[i + 1, j + 1] + x[i + 1, j + 2]
                       + x[i + 2, j] + x[i + 2, j + 1] + x[i + 2, j + 2]
                       ) * 0.1111111


def library():
    """(register memory, lanes, instructions): AVX-512 on a CPU that has
    it, else AVX2."""
    if host_features({"avx512f"}):
        return avx512.AVX512, 16, avx512.INSTRS
    return avx2.AVX2, 8, avx2.INSTRS


#: rows of A per pass over x in ``schedule_gemv``
ROWS = 4


def schedule_gemv_row(p=gemv, lib=None):
    """One register of partial sums per row, one horizontal sum at the end
    (``n % 16 == 0`` is asserted, so 8 lanes divide it too)."""
    mem, lanes, instrs = lib or library()
    return vectorize_reduction(p, 'j', lanes, mem, instrs).rename(
        "gemv_row")


def schedule_gemv(p=gemv, lib=None):
    """``ROWS`` rows per pass over ``x``: a register of partial sums per
    row (``ROWS`` independent FMA chains), each ``x[j:j+lanes]`` loaded once
    for the block; the last ``m % ROWS`` rows one at a time."""
    mem, lanes, instrs = lib or library()
    return vectorize_reduction_rows(p, 'i', ROWS, 'j', lanes, mem,
                                    instrs).rename("gemv_vec")


def schedule_blur(p=blur3x3, lib=None):
    """Each of the nine reads in a register of its own, one instruction per
    addition, the literal broadcast; the last ``w % lanes`` columns of each
    row stay a scalar loop."""
    mem, lanes, instrs = lib or library()
    return vectorize(p, 'j', lanes, mem, instrs, tail='cut').rename(
        "blur3x3_vec")


def schedule_blur_neon(p=blur3x3):
    """The blur on ARM NEON: the same ``vectorize`` call, by 4 f32 lanes
    (``neon_vld_4xf32``, ``neon_vadd_4xf32``, ``neon_vmul_4xf32``, the
    literal broadcast by ``neon_broadcast_4xf32_scalar``)."""
    return vectorize(p, 'j', neon.LANES, neon.Neon, neon.INSTRS,
                     tail='cut').rename("blur3x3_neon")


def schedule_blur_rvv(p=blur3x3, vl=4):
    """The blur on RISC-V V: the vector length is config state
    (docs/arm_riscv.md), so ``VL.vl = vl`` is written once at the top
    (``configwrite_at``, selected as ``rvv_vsetvl_e32m1``); then the same
    ``vectorize`` call by ``vl`` lanes, every instruction's ``VL.vl == vl``
    proven by the checker. ``vl`` <= 4: a length every RVV machine has."""
    assert 1 <= vl <= rvv.LANES
    p = p.configwrite_at(p.body()[0], rvv.VL, 'vl', str(vl), before=True)
    p = p.replace(p.find('VL.vl = _'), rvv.rvv_vsetvl_e32m1)
    return vectorize(p, 'j', vl, rvv.RVV, rvv.INSTRS,
                     tail='cut').rename(f"blur3x3_rvv{vl}")
