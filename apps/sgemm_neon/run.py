"""NEON SGEMM: schedule the 8 x 12 micro-kernel, print it, and check it
under qemu-aarch64 against interpret() and numpy.

    python apps/sgemm_neon/run.py

qemu gives no meaningful timing: ``bench.py`` counts instructions per flop
of the generated inner loop instead.
"""
from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))   # the repo

from apps.sgemm_neon.check import check, shapes  # noqa: E402
from apps.sgemm_neon.schedule import schedule  # noqa: E402


def main():
    t0 = time.perf_counter()
    exact, fused = schedule(), schedule(fused=True)
    t = time.perf_counter() - t0
    print(exact)
    print(f"\nscheduling both variants took {t * 1e3:.0f} ms "
          f"({len(exact.derivation()) - 1} checked rewrites each)")
    t0 = time.perf_counter()
    n = check(exact, fused)
    print(f"{n} calls under qemu-aarch64 on shapes (M, N, K) "
          f"{shapes()}: {exact.name()} equals interpret() bit for bit "
          f"(random normal data with inf, -0.0, NaN); {fused.name()} "
          f"equals it on small integers; both equal numpy "
          f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
