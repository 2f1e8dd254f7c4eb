"""Instruction counts per flop of the RVV micro-kernel's inner loop.

    python apps/sgemm_rvv/bench.py

qemu-user gives no timing, so this counts instructions: the generated C is
compiled with ``clang-19 --target=riscv64-linux-gnu -march=rv64gcv -O3``
and the innermost loop with the most vector arithmetic (the k loop of the
tile: ``2 * mr * nv * vl`` flops per iteration) is read from the assembly.
The count is the same at every VLEN (the code is the same; only ``vl``
lanes do work).
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo

from apps.sgemm_neon.inner_loop import assembly, hottest_loop  # noqa: E402
from apps.sgemm_rvv.schedule import schedule  # noqa: E402
from exo_hl.codegen_c.emit import generate  # noqa: E402

CC = ["clang-19", "--target=riscv64-linux-gnu"]
FLAGS = ["-O3", "-march=rv64gcv", "-D", "EXO_HL_TARGET(f)="]
VECTOR_FP = {"vfmacc.vf", "vfmacc.vv", "vfmul.vf", "vfadd.vv", "vfmul.vv"}


def main():
    print(f"inner loop of each tile, {' '.join(CC + FLAGS)}; qemu gives no "
          f"timing, so no times\n")
    print("| kernel | flops per k step | instructions | vector FP | "
          "vector loads | instructions per flop | mnemonics |")
    print("|---|---|---|---|---|---|---|")
    for vl, mr, nv, fused in ((4, 4, 2, False), (4, 4, 2, True),
                              (4, 7, 4, True), (3, 4, 2, True),
                              (2, 4, 2, True)):
        p = schedule(vl=vl, mr=mr, nv=nv, fused=fused)
        h, c = generate([p], "k")
        ops, _ = hottest_loop(assembly(c, CC, FLAGS, h), VECTOR_FP)
        flops = 2 * mr * nv * vl
        total = sum(ops.values())
        fp = sum(ops[m] for m in VECTOR_FP)
        vld = sum(v for m, v in ops.items() if m.startswith("vle"))
        print(f"| {p.name()} | {flops} | {total} | {fp} | {vld} | "
              f"{total / flops:.3f} | "
              f"{', '.join(f'{m} {n}' for m, n in sorted(ops.items()))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
