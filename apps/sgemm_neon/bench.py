"""Instruction counts per flop of the NEON micro-kernel's inner loop.

    python apps/sgemm_neon/bench.py [--exo-python PATH]

qemu-user gives no timing (it translates the code; its speed says nothing
about a Cortex or Neoverse core), so this counts instructions instead: the
generated C is compiled with ``aarch64-linux-gnu-gcc -O3`` and the
innermost loop with the most vector arithmetic (the k loop of the 8 x 12
tile: 192 flops per iteration) is read from the assembly.

``--exo-python``: a Python with Exo 1.0 (``pip install exo-lang``, kept
out of this project's environment) builds the same tile with Exo's own
NEON library (``exo_tile.py``) for the same count. Exo 1.0's ``replace``
infers the by-lane instruction's lane differently from run to run (it
depends on the Python hash seed, and not on it alone), sometimes wrongly
(rows 1 to 7 multiplied by the wrong element of A: not the tile's
product, and one instruction shorter); so Exo runs several times under
fixed seeds, each by-lane kernel's lanes are checked, and the first
correct one is counted.
"""
from __future__ import annotations

import argparse
import os
import re
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


EXO_SEEDS = range(6)
_LANE_CALL = re.compile(r"C_reg\[(\d+)\]\[\d+\] = vfmaq_laneq_f32\("
                        r"[^,]+, [^,]+, A_reg\[(\d+)\], \((\d+)\)\)")


def lanes_right(c_text):
    """Whether every by-lane multiply-add of Exo's 8 x 12 tile takes row
    ``r``'s element of A: lane ``r % 4`` of ``A_reg[r // 4]``."""
    calls = _LANE_CALL.findall(c_text)
    return len(calls) == FLOPS // 8 and all(
        int(a) == int(r) // 4 and int(lane) == int(r) % 4
        for r, a, lane in calls)


def exo_kernels(exo_python):
    """``{variant: C}`` from Exo 1.0 (``exo_tile.py``) run under each of
    ``EXO_SEEDS``, the by-lane variant from the first seed under which its
    lanes are right; and a note on the seeds where they were not."""
    kernels, wrong = {}, []
    for seed in EXO_SEEDS:
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        r = subprocess.run([exo_python, os.path.join(HERE, "exo_tile.py")],
                           capture_output=True, text=True, env=env)
        if r.returncode:
            return {}, (f"(Exo's tile could not be built: "
                        f"{r.stderr.strip()[-300:]})")
        for block in r.stdout.split("\f"):
            if block.strip():
                name, c = block.split("\n", 1)
                if "laneq" in name and not lanes_right(c):
                    wrong.append(seed)
                    continue
                kernels.setdefault(name, c)
    note = ""
    if wrong:
        note = (f"(Exo 1.0's replace chose wrong lanes of A for the by-lane "
                f"kernel under PYTHONHASHSEED {', '.join(map(str, wrong))}: "
                f"not counted)")
    return kernels, note


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
        kernels, note = exo_kernels(args.exo_python)
        for name, c in kernels.items():
            print(row(f"Exo 1.0 {name}", count(c, stem="exo")))
        if note:
            print(f"\n{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
