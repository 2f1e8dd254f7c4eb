"""RVV SGEMM: schedule the vl-parametric micro-kernel, print it, and check
it under qemu-riscv64 at VLEN 128 and 256 against interpret() and numpy.

    python apps/sgemm_rvv/run.py [--vl 4]

qemu gives no meaningful timing: ``bench.py`` counts instructions per flop
of the generated inner loop instead.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo

from apps.sgemm_neon.check import check_kernels, shapes  # noqa: E402
from apps.sgemm_rvv.schedule import schedule  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vl", type=int, default=4, help="1..4")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    exact, fused = schedule(vl=args.vl), schedule(vl=args.vl, fused=True)
    print(exact)
    print(f"\nscheduling both variants took "
          f"{(time.perf_counter() - t0) * 1e3:.0f} ms "
          f"({len(exact.derivation()) - 1} checked rewrites each)")
    for target in ("riscv64", "riscv64-vlen256"):
        n = check_kernels([(exact, False), (fused, True)], target)
        print(f"{target}: {n} calls on shapes {shapes()}: {exact.name()} "
              f"equals interpret() bit for bit, {fused.name()} on small "
              f"integers; both equal numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
