"""RVV SAXPY at the machine's vector length: print the schedule, and run
one executable under qemu-riscv64 at VLEN 128, 256 and 512 against
interpret() at the same VLMAX.

    python apps/saxpy_rvv/run.py

qemu gives no meaningful timing: nothing is timed.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo

from apps.saxpy_rvv.kernel import saxpy  # noqa: E402
from apps.saxpy_rvv.schedule import schedule  # noqa: E402
from exo_hl.codegen_c.cross import CrossProgram  # noqa: E402
from exo_hl.core_ir.interpret import ConfigState  # noqa: E402
from exo_hl.hw_libs import rvv  # noqa: E402


def main():
    p = schedule()
    print(p)
    rng = np.random.default_rng(0)
    sizes = (1, 5, 17, 100, 1000)
    for target, vlmax in (("riscv64", 4), ("riscv64-vlen256", 8),
                          ("riscv64-vlen512", 16)):
        prog = CrossProgram([p], target, stem="saxpy_rvv")
        calls, wants = [], []
        for n in sizes:
            a = np.array([1.5], np.float32)
            x = rng.standard_normal(n).astype(np.float32)
            y = rng.standard_normal(n).astype(np.float32)
            want = y.copy()
            st = ConfigState()
            st[rvv.VL.vlmax] = vlmax
            p.interpret(n=n, a=a, x=x, y=want, config_state=st)
            ref = y.copy()
            saxpy.interpret(n=n, a=a, x=x, y=ref)
            assert np.array_equal(want, ref)
            wants.append(want)
            calls.append((p, dict(n=n, a=a, x=x, y=y)))
        prog.run_many(calls)
        for (_, args), want in zip(calls, wants):
            assert np.array_equal(args["y"], want), (target, args["n"])
        print(f"{target}: VLMAX {prog.get_config(rvv.VL, 'vlmax')}, n in "
              f"{sizes}: equal to interpret() and saxpy bit for bit "
              f"({os.path.basename(prog.executable)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
