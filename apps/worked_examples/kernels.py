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
from exo_hl.hw_libs import avx2, avx512
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
