"""Measured single-core AMX peak: tile-instruction throughput.

    python -m apps.gemm_amx.peak [--runs 200] [--copies 1]

A small C program (compiled with ``$CC``, default ``cc``) requests the AMX
tile state from Linux, configures all eight tiles as 16 x 64 bytes and runs
``iters`` iterations of four independent ``tdpbusd`` (or ``tdpbf16ps``)
into tmm0..3 from tmm4..7: the shape of the GEMM kernel's inner step
without its loads, so nothing but the tile unit limits it. The best of many
short runs (2 ms, as apps/common/peak.py) is the peak.

Operations per instruction: 16 x 16 x 64 x 2 for int8 (GOP/s), 16 x 16 x 32
x 2 for bf16 (GFLOP/s). Exit status 2 (``PeakUnavailable``) when the CPU or
kernel has no AMX.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path  # noqa: E402

_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:            # run as a script: the repo's apps
    sys.path.insert(0, _REPO)

from apps.common.peak import PeakUnavailable, build_probe, probe_rate  # noqa: E402

_SOURCE = r"""
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

__attribute__((target("amx-tile,amx-int8,amx-bf16")))
static void run(long iters, int bf16) {
    if (bf16) {
        for (long i = 0; i < iters; i++) {
            _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
        }
    } else {
        for (long i = 0; i < iters; i++) {
            _tile_dpbusd(0, 4, 6); _tile_dpbusd(1, 4, 7);
            _tile_dpbusd(2, 5, 6); _tile_dpbusd(3, 5, 7);
        }
    }
}

__attribute__((target("amx-tile")))
static void setup(void) {
    unsigned char cfg[64];
    static unsigned char zeros[1024];
    memset(cfg, 0, 64);
    cfg[0] = 1;
    for (int t = 0; t < 8; t++) { cfg[16 + 2 * t] = 64; cfg[48 + t] = 16; }
    __asm__ __volatile__("" ::: "memory");  /* gcc's intrinsic reads 8 bytes */
    _tile_loadconfig(cfg);
    _tile_loadd(4, zeros, 64); _tile_loadd(5, zeros, 64);
    _tile_loadd(6, zeros, 64); _tile_loadd(7, zeros, 64);
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
}

int main(int argc, char **argv) {
    if (!__builtin_cpu_supports("amx-tile") ||
        !__builtin_cpu_supports("amx-int8")) {
        fprintf(stderr, "this CPU has no AMX\n");
        return 2;
    }
    if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) {
        fprintf(stderr, "the kernel refused the AMX tile state\n");
        return 2;
    }
    long iters = atol(argv[1]);
    int n = atoi(argv[2]), bf16 = atoi(argv[3]);
    setup();
    double best = 1e30;
    for (int r = 0; r < n; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        run(iters, bf16);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double t = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
        if (t < best) best = t;
    }
    double ops = 4.0 * 16 * 16 * (bf16 ? 32 : 64) * 2 * (double)iters;
    printf("%.6f %.9f\n", ops / best * 1e-9, best);
    return 0;
}
"""


def amx_peak(kind: str = "int8", runs: int = 200, seconds: float = 0.002,
             copies: int = 1) -> float:
    """AMX peak of one core (or the sum over ``copies`` probes at once) in
    GOP/s (``kind='int8'``: tdpbusd) or GFLOP/s (``'bf16'``: tdpbf16ps).
    Raises ``PeakUnavailable``."""
    if kind not in ("int8", "bf16"):
        raise ValueError(f"kind is 'int8' or 'bf16', not {kind!r}")
    with tempfile.TemporaryDirectory(prefix="amx_peak_") as d:
        exe = build_probe(_SOURCE, d, "amx_peak", "AMX")
        return probe_rate(exe, "1" if kind == "bf16" else "0", "AMX", runs,
                          seconds, copies, first_iters=1 << 10,
                          max_iters=1 << 30)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--copies", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        for kind, unit in (("int8", "GOP/s"), ("bf16", "GFLOP/s")):
            g = amx_peak(kind, args.runs, copies=args.copies)
            print(f"AMX {kind} peak, {args.copies} core(s): {g:.0f} {unit}")
    except PeakUnavailable as e:
        print(f"peak: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
