"""Instruction counts per flop of the RVV micro-kernel's inner loop.

    python apps/sgemm_rvv/bench.py [--exo-python PATH]

qemu-user gives no timing, so this counts instructions: the generated C is
compiled with ``clang-19 --target=riscv64-linux-gnu -march=rv64gcv -O3``
and the innermost loop with the most vector arithmetic (the k loop of the
tile: ``2 * mr * nv * vl`` flops per iteration) is read from the assembly.
The count is the same at every VLEN (the code is the same; only ``vl``
lanes do work).

``--exo-python``: a Python with Exo 1.0 (``pip install exo-lang``, kept
out of this project's environment) builds the ``4x2v4_fma`` tile with
Exo's own RVV library (``exo_tile.py``, which says the two changes Exo's
library needs to build it) for the same count.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo

from apps.sgemm_neon.inner_loop import assembly, hottest_loop  # noqa: E402
from apps.sgemm_rvv.schedule import schedule  # noqa: E402
from exo_hl.codegen_c.emit import generate  # noqa: E402

CC = ["clang-19", "--target=riscv64-linux-gnu"]
FLAGS = ["-O3", "-march=rv64gcv", "-D", "EXO_HL_TARGET(f)="]
VECTOR_FP = {"vfmacc.vf", "vfmacc.vv", "vfmul.vf", "vfadd.vv", "vfmul.vv"}


def row(name, ops, flops):
    total = sum(ops.values())
    fp = sum(ops[m] for m in VECTOR_FP)
    vld = sum(v for m, v in ops.items() if m.startswith("vle"))
    return (f"| {name} | {flops} | {total} | {fp} | {vld} | "
            f"{total / flops:.3f} | "
            f"{', '.join(f'{m} {n}' for m, n in sorted(ops.items()))} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exo-python", help="a python that can import exo")
    args = ap.parse_args(argv)
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
        print(row(p.name(), ops, 2 * mr * nv * vl))
    if args.exo_python:
        r = subprocess.run([args.exo_python,
                            os.path.join(HERE, "exo_tile.py")],
                           capture_output=True, text=True)
        if r.returncode:
            print(f"(Exo's tile could not be built: "
                  f"{r.stderr.strip()[-300:]})")
        else:
            name, c = r.stdout.split("\n", 1)
            ops, _ = hottest_loop(assembly(c, CC, FLAGS, None, "exo"),
                                  VECTOR_FP)
            print(row(f"Exo 1.0 {name}", ops, 64))
    return 0


if __name__ == "__main__":
    sys.exit(main())
