"""The 4 x (2 registers of 4) tile of ``sgemm_rvv_4x2v4_fma`` scheduled
with Exo 1.0 and Exo's own RVV library, for bench.py's comparison. Runs
under a Python that has ``exo-lang`` installed (not this project's
environment); prints the variant's name, a newline and its C.

Exo 1.0's RVV library cannot build the tile as it ships, for two reasons,
each worked around here with the least change:

- its ``RVV`` memory declares a buffer of several registers as a C array
  of ``vfloat32m1_t``, which C forbids (a sizeless type): the tile's
  registers are split into one buffer each with Exo's ``unroll_buffer``;
- the templates of ``rvv_vfmacc_1xf32_4xf32`` / ``rvv_vfmacc_4xf32_1xf32``
  lack the ``(`` after ``__riscv_vfmacc_vf_f32m1``: the instruction is
  redefined below with its body and template unchanged but for that ``(``.

The schedule mirrors ``schedule.py`` (C's tile and a row of B staged into
registers, the copies and the multiply-adds replaced by instructions, the
register loops unrolled).
"""
from __future__ import annotations

from exo import DRAM, instr, proc
from exo.platforms.rvv import RVV, rvv_vld_4xf32, rvv_vst_4xf32
from exo.stdlib.scheduling import (divide_dim, divide_loop, reorder_loops,
                                   replace_all, set_memory, simplify,
                                   stage_mem, unroll_buffer, unroll_loop)


@instr("{dst_data} = __riscv_vfmacc_vf_f32m1({dst_data}, {lhs_data}, "
       "{rhs_data},{vl});")
def rvv_vfmacc_1xf32_4xf32(dst: [f32][4] @ RVV, lhs: [f32][1] @ DRAM,
                           rhs: [f32][4] @ RVV, vl: size):
    assert stride(dst, 0) == 1
    assert stride(lhs, 0) == 1
    assert stride(rhs, 0) == 1
    assert vl >= 0
    assert vl <= 4
    for i in seq(0, vl):
        dst[i] += lhs[0] * rhs[i]


@proc
def tile(K: size, A: f32[4, K] @ DRAM, B: f32[K, 8] @ DRAM,
         C: f32[4, 8] @ DRAM):
    for i in seq(0, 4):
        for j in seq(0, 8):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def fma_variant():
    p = divide_loop(tile, "j", 4, ["jo", "ji"], perfect=True)
    p = reorder_loops(p, "ji k")
    p = reorder_loops(p, "jo k")
    p = reorder_loops(p, "i k")
    p = stage_mem(p, "for k in _: _", "C[0:4, 0:8]", "C_reg")
    p = divide_dim(p, "C_reg", 1, 4)
    p = set_memory(p, "C_reg", RVV)
    p = stage_mem(p, "for i in _: _ #0", "B[k, 0:8]", "B_reg")
    p = divide_dim(p, "B_reg", 0, 4)
    p = set_memory(p, "B_reg", RVV)
    p = simplify(p)
    for loop in ("i1 #0", "i0 #1", "i1 #0"):   # each divide renames
        p = divide_loop(p, loop, 4, [loop.split()[0] + "o",
                                     loop.split()[0] + "i"], perfect=True)
    p = simplify(p)
    return replace_all(p, [rvv_vld_4xf32, rvv_vst_4xf32,
                           rvv_vfmacc_1xf32_4xf32])


def _unroll_all(p):
    while True:
        loops = [c for c in p.find_loop("_", many=True) if c.name() != "k"]
        if not loops:
            return simplify(p)
        p = unroll_loop(p, loops[0])


def _one_buffer_per_register(p):
    while True:
        multi = [a for a in p.find("_ : _", many=True)
                 if a.name().startswith(("C_reg", "B_reg"))
                 and len(a.shape()) > 1]
        if not multi:
            return p
        p = unroll_buffer(p, multi[0], 0)


if __name__ == "__main__":
    from exo import compile_procs_to_strings
    p = _one_buffer_per_register(_unroll_all(fma_variant()))
    c, h = compile_procs_to_strings([p], "exo.h")
    print("4x2v4 vfmacc.vf (rvv_vfmacc_1xf32_4xf32, '(' restored)\n"
          + c.replace('#include "exo.h"', h))
