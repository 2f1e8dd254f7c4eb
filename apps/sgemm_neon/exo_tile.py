"""The same 8 x 12 tile scheduled with Exo 1.0 and Exo's own NEON library,
for bench.py's comparison. Runs under a Python that has ``exo-lang``
installed (not this project's environment); prints each variant's name,
a newline and its C, variants separated by form feeds.

The schedule mirrors ``schedule.py`` step for step (C's tile and a row of
B staged into NEON registers, the copies and the multiply-adds replaced by
instructions, the register loops unrolled), with Exo's instructions:
``neon_vfmadd_1xf32_4xf32`` (``vmlaq_n_f32``) and, for the fused variant,
``neon_vfmla_4xf32_4xf32`` (``vfmaq_laneq_f32`` by lane, with the column
of A loaded into two registers: A is passed transposed, packed, as Exo's
by-lane kernels need).
"""
from __future__ import annotations

from exo import DRAM, proc
from exo.platforms.neon import (Neon, neon_vfmadd_1xf32_4xf32,
                                neon_vfmla_4xf32_4xf32, neon_vld_4xf32,
                                neon_vst_4xf32)
from exo.stdlib.scheduling import (divide_dim, divide_loop, replace_all,
                                   reorder_loops, set_memory, simplify,
                                   commute_expr,
                                   stage_mem, unroll_loop)


@proc
def tile(K: size, A: f32[8, K] @ DRAM, B: f32[K, 12] @ DRAM,
         C: f32[8, 12] @ DRAM):
    for i in seq(0, 8):
        for j in seq(0, 12):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def tile_at(K: size, At: f32[K, 8] @ DRAM, B: f32[K, 12] @ DRAM,
            C: f32[8, 12] @ DRAM):
    for i in seq(0, 8):
        for j in seq(0, 12):
            for k in seq(0, K):
                C[i, j] += At[k, i] * B[k, j]


def _common(p):
    p = divide_loop(p, "j", 4, ["jo", "ji"], perfect=True)
    p = reorder_loops(p, "ji k")
    p = reorder_loops(p, "jo k")
    p = reorder_loops(p, "i k")
    p = stage_mem(p, "for k in _: _", "C[0:8, 0:12]", "C_reg")
    p = divide_dim(p, "C_reg", 1, 4)
    p = set_memory(p, "C_reg", Neon)
    p = stage_mem(p, "for i in _: _ #0", "B[k, 0:12]", "B_reg")
    p = divide_dim(p, "B_reg", 0, 4)
    p = set_memory(p, "B_reg", Neon)
    return simplify(p)


def broadcast_variant():
    p = _common(tile)
    for loop in ("i1 #0", "i0 #1", "i1 #0"):   # each divide renames
        p = divide_loop(p, loop, 4, [loop.split()[0] + "o",
                                     loop.split()[0] + "i"], perfect=True)
    p = simplify(p)
    p = replace_all(p, [neon_vld_4xf32, neon_vst_4xf32,
                        neon_vfmadd_1xf32_4xf32])
    return p


def lane_variant():
    p = _common(tile_at)
    p = stage_mem(p, "for i in _: _ #0", "At[k, 0:8]", "A_reg")
    p = divide_dim(p, "A_reg", 0, 4)
    p = set_memory(p, "A_reg", Neon)
    p = simplify(p)
    for loop in ("i1 #0", "i0 #1", "i0 #1", "i1 #0"):
        p = divide_loop(p, loop, 4, [loop.split()[0] + "o",
                                     loop.split()[0] + "i"], perfect=True)
    p = divide_loop(p, "i #0", 4, ["io", "ii"], perfect=True)
    # Exo's by-lane instruction multiplies the vector by the lane
    p = commute_expr(p, [p.find("A_reg[_] * B_reg[_]")])
    p = simplify(p)
    p = replace_all(p, [neon_vld_4xf32, neon_vst_4xf32,
                        neon_vfmla_4xf32_4xf32])
    return p


def _unroll_all(p):
    while True:
        loops = [c for c in p.find_loop("_", many=True)
                 if c.name() != "k"]
        if not loops:
            return simplify(p)
        p = unroll_loop(p, loops[0])


if __name__ == "__main__":
    import sys
    from exo import compile_procs_to_strings
    out = []
    for name, make in (("vmlaq_n (neon_vfmadd_1xf32_4xf32)",
                        broadcast_variant),
                       ("vfmaq_laneq (neon_vfmla_4xf32_4xf32)",
                        lane_variant)):
        try:
            p = _unroll_all(make())
            c, h = compile_procs_to_strings([p], "exo.h")
        except Exception as e:       # report, keep the other variant
            print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        out.append(f"{name}\n" + c.replace('#include "exo.h"', h))
    print("\f".join(out))
