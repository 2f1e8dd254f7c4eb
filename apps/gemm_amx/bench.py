"""Benchmark: the AMX int8 GEMM beside MKL's ``cblas_gemm_s8u8s32``.

    python -m apps.gemm_amx.bench [--sizes 512 1024 2048] [--reps 7]
                                  [--threads 1 2] [--json out.json]

Square ``C += A @ B`` (u8 x s8 -> s32, row-major, C accumulated as the
kernel does: MKL with beta = 1). Implementations are sampled in turn
(apps/common/timing.py), so load hits them alike; the ratio is the figure
to read on a busy machine, and the load average is printed with it. The
AMX peak (apps/gemm_amx/peak.py, tile-instruction throughput) is measured
in the same run for "% of peak". Every result is first checked against MKL
bit for bit. The exo_hl kernel is single-threaded (its tile configuration
is per thread; see README): with ``--threads 2`` only MKL's column uses
two threads, for reference.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from apps.common.timing import best_times
from apps.gemm_amx.mkl_lowp import MklLowp
from apps.gemm_amx.peak import PeakUnavailable, amx_peak


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[512, 1024, 2048])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)

    from apps.gemm_amx.schedule import schedule
    kernel = schedule().compile()
    mkl, why = MklLowp.load()
    print(why)
    if mkl is not None:
        mkl.check()
    try:
        peak = amx_peak("int8")
        print(f"AMX int8 peak (tdpbusd throughput, 1 core): {peak:.0f} GOP/s")
    except PeakUnavailable as e:
        peak = None
        print(f"AMX peak not measured: {e}")
    rng = np.random.default_rng(0)
    rows = []
    for n in args.sizes:
        A = rng.integers(0, 256, (n, n), dtype=np.uint8)
        B = rng.integers(-128, 128, (n, n), dtype=np.int8)
        C = np.zeros((n, n), np.int32)
        ops = 2.0 * n ** 3
        run = kernel.bind(n, n, n, A, B, C)
        if mkl is not None:
            C2 = np.zeros((n, n), np.int32)
            run()
            mkl.set_threads(1)
            mkl.u8s8s32(A, B, C2)
            if not np.array_equal(C, C2):
                print(f"{n}: the kernel disagrees with MKL", file=sys.stderr)
                return 1
        for t in args.threads:
            fns = [run]
            if mkl is not None:
                mkl.set_threads(t)
                fns.append(lambda: mkl.u8s8s32(A, B, C))
            secs = best_times(fns, args.reps, threads=t)
            load = os.getloadavg()[0]
            row = {"n": n, "threads_mkl": t, "exo_gops": ops / secs[0] / 1e9,
                   "load": load}
            line = f"{n:5d}  exo_hl (1 thread) {row['exo_gops']:7.0f} GOP/s"
            if peak:
                row["exo_pct_peak"] = 100 * row["exo_gops"] / peak
                line += f" ({row['exo_pct_peak']:.0f}% of peak)"
            if mkl is not None:
                row["mkl_gops"] = ops / secs[1] / 1e9
                row["ratio"] = secs[1] / secs[0]
                line += (f"  MKL ({t} thread{'s' if t > 1 else ''}) "
                         f"{row['mkl_gops']:7.0f} GOP/s  ratio "
                         f"{row['ratio']:.2f}x")
            print(line + f"  load {load:.1f}", flush=True)
            rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peak_gops": peak, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
