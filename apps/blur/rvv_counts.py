"""Instruction counts of the column loop of apps/blur's RVV schedules.

    python apps/blur/rvv_counts.py

qemu-user gives no timing, so this counts instructions: the generated C
is compiled with ``clang-19 --target=riscv64-linux-gnu -march=rv64gcv
-O3`` and the instructions of the innermost loop with the most 16-bit
loads and stores are counted (the fused column loop: 8 pixels of a new
``bx`` row and 8 of the output row per step, the same at every VLEN).
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo

from apps.blur.blur import SCHEDULES16_RVV, SCHEDULES_RVV  # noqa: E402
from apps.sgemm_neon.inner_loop import assembly, hottest_loop  # noqa: E402
from exo_hl.codegen_c.emit import generate  # noqa: E402

CC = ["clang-19", "--target=riscv64-linux-gnu"]
FLAGS = ["-O3", "-march=rv64gcv", "-D", "EXO_HL_TARGET(f)="]
MEMORY = {"vle16.v", "vse16.v"}


def counts(p):
    """The mnemonics (a Counter) of ``p``'s column loop."""
    h, c = generate([p], "k")
    return hottest_loop(assembly(c, CC, FLAGS, h), MEMORY)[0]


def main():
    print(f"column loop, {' '.join(CC + FLAGS)}; qemu gives no timing\n")
    print("| schedule | instructions per 8 output pixels | mnemonics |")
    print("|---|---|---|")
    for table in (SCHEDULES_RVV, SCHEDULES16_RVV):
        for build in table.values():
            p = build()
            ops = counts(p)
            print(f"| {p.name()} | {sum(ops.values())} | "
                  f"{', '.join(f'{m} {n}' for m, n in sorted(ops.items()))}"
                  f" |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
