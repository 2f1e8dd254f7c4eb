"""Benchmark: the AMX GEMMs beside MKL's ``cblas_gemm_s8u8s32`` and
``cblas_gemm_bf16bf16f32``.

    python -m apps.gemm_amx.bench [--kinds int8 bf16] [--sizes 512 1024 2048]
                                  [--reps 7] [--threads 1 2] [--json out.json]
                                  [--clock wall|cpu] [--m-extra R]
                                  [--n-extra R]

Square ``C += A @ B`` (u8 x s8 -> s32, or bf16 x bf16 -> f32; row-major; C
accumulated as the kernels do: MKL with beta = 1). Implementations are
sampled in turn
(apps/common/timing.py), so load hits them alike; the ratio is the figure
to read on a busy machine, and the load average is printed with it. The
AMX peak (apps/gemm_amx/peak.py, tile-instruction throughput) is measured
in the same run for "% of peak": the nominal figure (zeros in the tiles,
no loads) once at the start, and the one a kernel can reach at best
(random data, the step's four tile loads from L1; the unit is about 20%
slower on random data) before the first cell and after every cell, as the
VM's tile unit runs at full or half speed from minute to minute. Each
cell's exo_hl and MKL rates are given as a % of the higher of the two
probes around it (``share_of_peak``), flagged "(unit changed speed)" when
those two differ by more than 1.25x. Every result is first checked against MKL
bit for bit (bf16: MKL's AMX path sums in the kernel's order). With
``--threads t`` > 1 the exo_hl kernel is the one whose column blocks are
a par loop (``schedule(p, threads=True)``; AmxConfig is per-thread state,
loaded on each thread by the par loop's iterations), on t OpenMP threads.
``--m-extra R``: M = n + R rows (N = K = n), timed with
``gemm_u8s8_mtail`` (the AMX kernel for any M: the last M % 32 rows on
AVX-512 VNNI in the same call) and ``gemm_bf16_mtail`` (the last rows on
AVX-512F in the algorithm's order). ``--n-extra R``: N = n + R columns (R a
multiple of 32; with ``--m-extra``, both), timed with
``gemm_u8s8_ntail`` and ``gemm_bf16_ntail`` (the last N % 256 columns in
32-column blocks).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
from pathlib import Path  # noqa: E402

_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:            # run as a script: the repo's apps
    sys.path.insert(0, _REPO)

from apps.common.blas_env import set_openmp_threads  # noqa: E402
from apps.common.timing import best_times, wake_threads  # noqa: E402
from apps.gemm_amx.mkl_lowp import MklLowp  # noqa: E402
from apps.gemm_amx.peak import AmxProbe, PeakUnavailable  # noqa: E402

#: the two probes around a cell differ by more than this: the tile unit
#: changed speed during the cell
STEADY = 1.25


def share_of_peak(rate: float, probes, threads: int):
    """``rate`` (of ``threads`` cores) as a % of the same-run peak, and
    whether the tile unit kept its speed. ``probes``: the one-core peaks
    measured around the cell; the reference is the highest times
    ``threads`` (a cell timed while the unit was slow is understated,
    never overstated). Steady when the highest is within ``STEADY`` of
    the lowest."""
    probes = [p for p in probes if p and p > 0]
    if not probes or threads < 1:
        raise ValueError("share_of_peak needs a positive probe and thread "
                         "count")
    hi, lo = max(probes), min(probes)
    return 100.0 * rate / (threads * hi), hi <= STEADY * lo


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[512, 1024, 2048])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--kinds", nargs="+", default=["int8", "bf16"],
                    choices=["int8", "bf16"])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--m-extra", type=int, default=0, metavar="R",
                    help="M = n + R (the any-M kernels)")
    ap.add_argument("--n-extra", type=int, default=0, metavar="R",
                    help="N = n + R, R %% 32 == 0 (the N-tail kernels)")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall time, or process CPU time / threads "
                    "(steadier on a busy machine)")
    args = ap.parse_args(argv)

    mkl, why = MklLowp.load()
    print(why)
    if mkl is not None:
        mkl.check()
    peaks = {}
    probe = None
    try:
        probe = AmxProbe()
        for kind in args.kinds:
            # nominal (zeros, no loads) once; attainable by a kernel
            # (random data, the step's tile loads from L1) around each cell
            peaks[kind] = probe.rate(kind)
            peaks[kind + "_data"] = [_data_peak(probe, kind)]
            print(f"AMX {kind} peak (tile-instruction throughput, 1 core): "
                  f"{peaks[kind]:.0f} nominal, "
                  f"{peaks[kind + '_data'][0]:.0f} with random data and L1 "
                  f"tile loads, G{'OP' if kind == 'int8' else 'FLOP'}/s")
    except PeakUnavailable as e:
        print(f"AMX peak not measured: {e}")
        if probe is not None:
            probe.close()
        probe, peaks = None, {}
    try:
        return _cells(args, mkl, peaks, probe)
    finally:
        if probe is not None:
            probe.close()


def _data_peak(probe, kind):
    """The random-data, L1-loads peak of one core (fewer runs than the
    nominal one: it is measured around every cell)."""
    return probe.rate(kind, runs=100, random=True, ring=4096)


def _cells(args, mkl, peaks, probe):
    from apps.gemm_amx.schedule import (gemm_bf16, gemm_bf16_mtail,
                                        gemm_bf16_ntail, gemm_u8s8,
                                        gemm_u8s8_mtail, gemm_u8s8_ntail,
                                        schedule)
    rng = np.random.default_rng(0)
    rows = []
    for kind in args.kinds:
        alg = ((gemm_bf16_ntail if args.n_extra else
                gemm_bf16_mtail if args.m_extra else gemm_bf16)
               if kind == "bf16" else
               gemm_u8s8_ntail if args.n_extra else
               gemm_u8s8_mtail if args.m_extra else gemm_u8s8)
        kernels = {t: schedule(alg, threads=t > 1).compile()
                   for t in sorted(set(args.threads))}
        peak, data_probes = peaks.get(kind), peaks.get(kind + "_data")
        unit = "GOP/s" if kind == "int8" else "GFLOP/s"
        for n in args.sizes:
            m, nn = n + args.m_extra, n + args.n_extra
            if kind == "int8":
                A = rng.integers(0, 256, (m, n), dtype=np.uint8)
                B = rng.integers(-128, 128, (n, nn), dtype=np.int8)
                C = np.zeros((m, nn), np.int32)
                base = mkl and mkl.u8s8s32
            else:
                A = _bf16(rng.standard_normal((n, n)))
                B = _bf16(rng.standard_normal((n, n)))
                C = np.zeros((n, n), np.float32)
                base = mkl and mkl.bf16bf16f32
                m = nn = n
            ops = 2.0 * m * nn * n
            for t in args.threads:
                set_openmp_threads(t)
                run = kernels[t].bind(m, nn, n, A, B, C)
                if mkl is not None:
                    C1, C2 = C.copy(), C.copy()
                    kernels[t](m, nn, n, A, B, C1)
                    mkl.set_threads(t)
                    base(A, B, C2)
                    if not np.array_equal(C1, C2):
                        print(f"{kind} {n}: the {t}-thread kernel disagrees "
                              f"with MKL", file=sys.stderr)
                        return 1
                fns = [run]
                if mkl is not None:
                    mkl.set_threads(t)
                    fns.append(lambda: base(A, B, C))
                if t > 1:       # the other CPUs idled through the
                    wake_threads(fns)   # last one-thread samples
                secs = best_times(fns, args.reps, clock=args.clock,
                                  threads=t)
                load = os.getloadavg()[0]
                row = {"kind": kind, "n": n, "m": m, "threads": t,
                       "cols": nn,
                       "exo": ops / secs[0] / 1e9, "load": load}
                line = (f"{kind:4s} {n:5d}" + (f" M={m}" if m != n else "")
                        + (f" N={nn}" if nn != n else "")
                        + f"  t={t}  exo_hl "
                        f"{row['exo']:7.0f} {unit}")
                if mkl is not None:
                    row["mkl"] = ops / secs[1] / 1e9
                    row["ratio"] = secs[1] / secs[0]
                    line += (f"  MKL {row['mkl']:7.0f}  ratio "
                             f"{row['ratio']:.2f}x")
                if peak:
                    # the probes measure one core: t threads, t cores
                    data_probes.append(_data_peak(probe, kind))
                    around = data_probes[-2:]
                    row["exo_pct_peak"] = 100 * row["exo"] / (t * peak)
                    row["peak_data_around"] = around
                    pct, steady = share_of_peak(row["exo"], around, t)
                    row["exo_pct_peak_data"] = pct
                    row["peak_steady"] = steady
                    line += (f"\n    % of the random-data peak "
                             f"({'/'.join(f'{p:.0f}' for p in around)} "
                             f"before/after, x{t}): exo_hl {pct:.0f}%")
                    if mkl is not None:
                        row["mkl_pct_peak_data"] = share_of_peak(
                            row["mkl"], around, t)[0]
                        line += f", MKL {row['mkl_pct_peak_data']:.0f}%"
                    if not steady:
                        line += " (unit changed speed)"
                print(line + f"  load {load:.1f}", flush=True)
                rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peaks": peaks, "rows": rows}, f, indent=1)
    return 0


def _bf16(x):
    """bf16 bits (round to nearest even) of float values."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


if __name__ == "__main__":
    sys.exit(main())
