"""Instruction counts of the strip loop of RVV SAXPY.

    python apps/saxpy_rvv/bench.py

qemu-user gives no timing, so this counts instructions: the generated C
is compiled with ``clang-19 --target=riscv64-linux-gnu -march=rv64gcv
-O3`` and the instructions of the strip loop's blocks are counted (a
strip runs all of them but at most two). A strip does ``vl`` elements,
``vl`` = VLMAX (LMUL 1) or 8 * VLMAX (LMUL 8) on full strips: the
instructions per element are the count divided by that, which depends
on the machine's VLEN (the same code runs at every VLEN).
"""
from __future__ import annotations

import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo

from apps.saxpy_rvv.schedule import schedule  # noqa: E402
from apps.sgemm_neon.inner_loop import assembly  # noqa: E402
from exo_hl.codegen_c.emit import generate  # noqa: E402

CC = ["clang-19", "--target=riscv64-linux-gnu"]
FLAGS = ["-O3", "-march=rv64gcv", "-D", "EXO_HL_TARGET(f)="]
VECTOR_FP = {"vfmacc.vf", "vfmul.vf", "vfadd.vv"}


def loop_blocks(asm, name):
    """Mnemonics of the blocks of function ``name``'s loop: from the
    earliest target of a backward branch to the last backward branch
    (clang lays the strip loop out as several blocks, the header after
    the body, so the innermost-range search of sgemm's bench does not
    apply)."""
    lines = asm[asm.index(f"{name}:"):].splitlines()
    lines = lines[:next(n for n, ln in enumerate(lines)
                        if ln.startswith(".Lfunc_end"))]
    labels = {ln.split(":")[0]: n for n, ln in enumerate(lines)
              if ln.startswith(".L")}
    back = []                     # (target line, branch line)
    for n, ln in enumerate(lines):
        words = ln.replace(",", " ").split()
        if ln.startswith("\t") and words and words[-1] in labels \
                and labels[words[-1]] < n:
            back.append((labels[words[-1]], n))
    lo, hi = min(a for a, _ in back), max(b for _, b in back)
    ins = [ln.split()[0] for ln in lines[lo:hi + 1]
           if ln.startswith("\t") and not ln.strip().startswith(".")]
    return Counter(ins)


def main():
    print(f"strip loop, {' '.join(CC + FLAGS)}; qemu gives no timing\n")
    print("| kernel | instructions in the loop | vector FP | per element, "
          "VLEN 128 | VLEN 512 | mnemonics |")
    print("|---|---|---|---|---|---|")
    for lmul, fused in ((1, False), (1, True), (8, False), (8, True)):
        p = schedule(fused=fused, lmul=lmul)
        h, c = generate([p], "k")
        ops = loop_blocks(assembly(c, CC, FLAGS, h), p.name())
        total = sum(ops.values())
        fp = sum(ops[m] for m in VECTOR_FP)
        per = [total / (lmul * v) for v in (4, 16)]
        print(f"| {p.name()} | {total} | {fp} | {per[0]:.3f} | "
              f"{per[1]:.3f} | "
              f"{', '.join(f'{m} {n}' for m, n in sorted(ops.items()))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
