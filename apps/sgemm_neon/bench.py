"""Instruction counts per flop of the NEON micro-kernel's inner loop.

    python apps/sgemm_neon/bench.py [--exo-python PATH]

qemu-user gives no timing (it translates the code; its speed says nothing
about a Cortex or Neoverse core), so this counts instructions instead: the
generated C is compiled with ``aarch64-linux-gnu-gcc -O3`` and the
innermost loop with the most vector arithmetic (the k loop of the 8 x 12
tile: 192 flops per iteration) is read from the assembly.

``--exo-python``: a Python with Exo 1.0 (``pip install exo-lang``, kept
out of this project's environment) builds the same tile with Exo's own
NEON library (``exo_tile.py``) for the same count.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo

from apps.sgemm_neon.inner_loop import assembly, hottest_loop  # noqa: E402
from apps.sgemm_neon.schedule import (MR, NR, schedule,  # noqa: E402
                                      schedule_lane)

CC = ["aarch64-linux-gnu-gcc"]
FLAGS = ["-O3", "-march=armv8-a", "-D", "EXO_HL_TARGET(f)="]
VECTOR_FP = {"fmla", "fmul", "fadd", "fmls"}
FLOPS = 2 * MR * NR          # per k step of the tile


def count(c_text, header=None, stem="k"):
    ops, _ = hottest_loop(assembly(c_text, CC, FLAGS, header, stem),
                          VECTOR_FP)
    return ops


def row(label, ops):
    total = sum(ops.values())
    fp = sum(ops[m] for m in VECTOR_FP)
    mem = sum(v for m, v in ops.items() if m.startswith(("ld", "st")))
    return (f"| {label} | {total} | {fp} | {mem} | "
            f"{total / FLOPS:.3f} | {', '.join(f'{m} {n}' for m, n in sorted(ops.items()))} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exo-python", help="a python that can import exo")
    args = ap.parse_args(argv)
    print(f"inner loop of the {MR} x {NR} tile ({FLOPS} flops per k step), "
          f"{' '.join(CC + FLAGS)}; qemu gives no timing, so no times\n")
    print("| kernel | instructions | vector FP | loads/stores | "
          "instructions per flop | mnemonics |")
    print("|---|---|---|---|---|---|")
    from exo_hl.codegen_c.emit import generate
    for p in (schedule(), schedule(fused=True), schedule_lane()):
        h, c = generate([p], "k")
        print(row(f"exo_hl {p.name()}", count(c, h)))
    if args.exo_python:
        r = subprocess.run([args.exo_python, os.path.join(HERE,
                                                          "exo_tile.py")],
                           capture_output=True, text=True)
        if r.returncode:
            print(f"(Exo's tile could not be built: {r.stderr.strip()[-300:]})")
        else:
            for block in r.stdout.split("\f"):
                if block.strip():
                    name, c = block.split("\n", 1)
                    print(row(f"Exo 1.0 {name}", count(c, stem="exo")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
