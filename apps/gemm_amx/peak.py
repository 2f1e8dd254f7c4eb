"""Measured single-core AMX peak: tile-instruction throughput.

    python -m apps.gemm_amx.peak [--runs 200] [--copies 1]

A small C program (compiled with ``$CC``, default ``cc``) requests the AMX
tile state from Linux, configures all eight tiles as 16 x 64 bytes and runs
``iters`` iterations of four independent ``tdpbusd`` (or ``tdpbf16ps``)
into tmm0..3 from tmm4..7: the shape of the GEMM kernel's inner step. The
best of many short runs (2 ms, as apps/common/peak.py) is the peak. Four
variants (``VARIANTS``, all printed): zeros in the tiles and no loads (the
nominal figure, ``amx_peak``'s default); random data (the tile unit is
slower on it); random data with the step's four A and B tile loads from an
L1-resident 4 KB, as a real kernel must load them; and from a 512 KB
stream (L2).

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

#: the start of a probe's main(): the CPU has AMX and the kernel grants
#: the tile state (ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), else exit 2
AMX_GUARD = r"""
    if (!__builtin_cpu_supports("amx-tile") ||
        !__builtin_cpu_supports("amx-int8")) {
        fprintf(stderr, "this CPU has no AMX\n");
        return 2;
    }
    if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) {
        fprintf(stderr, "the kernel refused the AMX tile state\n");
        return 2;
    }
"""

_SOURCE = r"""
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/* The loop body: four tile products into tmm0..3 from tmm4..7, and with
   `loads` first the four A and B tiles (tmm4..7) loaded, as a kernel's K
   step does: from `buf`, `ring` bytes cycled through (4 KB: the same tiles
   every step, L1-resident; larger: a new 4 KB each step, as the kernel
   streams its packed blocks). */
#define DP4(op) op(0, 4, 6); op(1, 4, 7); op(2, 5, 6); op(3, 5, 7)
#define LD4(p) _tile_loadd(4, (p), 64); _tile_loadd(6, (p) + 2048, 64); \
    _tile_loadd(5, (p) + 1024, 64); _tile_loadd(7, (p) + 3072, 64)

__attribute__((target("amx-tile,amx-int8,amx-bf16")))
static void run(long iters, int bf16, int loads, const unsigned char *buf,
                long ring) {
    long off = 0;
    if (loads == 2) {    /* the tile loads alone: their bandwidth */
        for (long i = 0; i < iters; i++) {
            LD4(buf + off);
            off += 4096; if (off == ring) off = 0;
        }
    } else if (!loads && bf16) {
        for (long i = 0; i < iters; i++) { DP4(_tile_dpbf16ps); }
    } else if (!loads) {
        for (long i = 0; i < iters; i++) { DP4(_tile_dpbusd); }
    } else if (bf16) {
        for (long i = 0; i < iters; i++) {
            LD4(buf + off); DP4(_tile_dpbf16ps);
            off += 4096; if (off == ring) off = 0;
        }
    } else {
        for (long i = 0; i < iters; i++) {
            LD4(buf + off); DP4(_tile_dpbusd);
            off += 4096; if (off == ring) off = 0;
        }
    }
}

/* data: 0 zeros, 1 random (int8: random bytes; bf16: random values in
   (-1, 1), none denormal, infinite or NaN) */
static void fill(unsigned char *p, long n, int bf16, int random) {
    uint32_t x = 12345;
    for (long i = 0; i < n; i += 2) {
        x = x * 1664525u + 1013904223u;
        uint16_t v = (uint16_t)(x >> 16);
        if (bf16) {      /* sign, exponent 100-126, 7 random mantissa bits */
            v = (uint16_t)((v & 0x807F) | ((uint16_t)(100 + (x >> 8) % 27) << 7));
        }
        if (!random) v = 0;
        memcpy(p + i, &v, 2);
    }
}

__attribute__((target("amx-tile")))
static void setup(const unsigned char *data) {
    unsigned char cfg[64];
    memset(cfg, 0, 64);
    cfg[0] = 1;
    for (int t = 0; t < 8; t++) { cfg[16 + 2 * t] = 64; cfg[48 + t] = 16; }
    __asm__ __volatile__("" ::: "memory");  /* gcc's intrinsic reads 8 bytes */
    _tile_loadconfig(cfg);
    _tile_loadd(4, data, 64); _tile_loadd(5, data + 1024, 64);
    _tile_loadd(6, data + 2048, 64); _tile_loadd(7, data + 3072, 64);
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
}

int main(int argc, char **argv) {
@AMX_GUARD@    long iters = atol(argv[1]);
    /* argv[3]: "<bf16> <random> <ring bytes, 0: no loads> [<loads only>]"
       (loads only: the rate printed is GB/s of tile loads) */
    int n = atoi(argv[2]), bf16 = 0, random = 0, only = 0;
    long ring = 0;
    if (sscanf(argv[3], "%d %d %ld %d", &bf16, &random, &ring, &only) < 1 ||
        ring % 4096 != 0 || ring < 0 || (only && ring == 0)) {
        fprintf(stderr, "bad mode '%s'\n", argv[3]);
        return 1;
    }
    long bytes = ring > 4096 ? ring : 4096;
    unsigned char *buf = aligned_alloc(64, (size_t)bytes);
    if (!buf) return 1;
    fill(buf, bytes, bf16, random);
    setup(buf);
    double best = 1e30;
    for (int r = 0; r < n; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        run(iters, bf16, only ? 2 : ring > 0, buf, ring);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double t = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
        if (t < best) best = t;
    }
    double ops = only ? 4096.0 * (double)iters
                      : 4.0 * 16 * 16 * (bf16 ? 32 : 64) * 2 * (double)iters;
    printf("%.6f %.9f\n", ops / best * 1e-9, best);
    free(buf);
    return 0;
}
""".replace("@AMX_GUARD@", AMX_GUARD.lstrip("\n"))


#: the probe's variants: (name, random data, bytes cycled through by the
#: tile loads, 0: no loads)
VARIANTS = (("zeros, no loads", False, 0),
            ("random, no loads", True, 0),
            ("random, L1 loads", True, 4096),
            ("random, L2 loads", True, 512 * 1024))


#: the tile-load bandwidth probe's buffers (name, bytes cycled through):
#: four tile loads per step, no products, as a kernel's K step loads them
LOAD_RINGS = (("L1", 4096), ("L1, 32 KB", 32 * 1024), ("L2, 1 MB", 1 << 20),
              ("L3, 32 MB", 32 << 20))


class AmxProbe:
    """The probe compiled once, measured many times (``bench.py`` measures
    the peak around every cell: the VM's tile unit changes speed from
    minute to minute). Use as a context manager; raises
    ``PeakUnavailable`` when it cannot be built or run."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="amx_peak_")
        try:
            self._exe = build_probe(_SOURCE, self._dir.name, "amx_peak",
                                    "AMX")
        except BaseException:
            self._dir.cleanup()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._dir.cleanup()

    def rate(self, kind: str = "int8", runs: int = 200,
             seconds: float = 0.002, copies: int = 1, random: bool = False,
             ring: int = 0, loads_only: bool = False) -> float:
        """As ``amx_peak``; ``loads_only``: the step's four tile loads
        without the products, the rate in GB/s of tile loads (``ring``
        > 0)."""
        if kind not in ("int8", "bf16"):
            raise ValueError(f"kind is 'int8' or 'bf16', not {kind!r}")
        if ring % 4096 or ring < 0 or (loads_only and not ring):
            raise ValueError(f"ring is a positive multiple of 4096 (0 "
                             f"without loads_only), not {ring}")
        return probe_rate(self._exe, f"{int(kind == 'bf16')} {int(random)} "
                          f"{ring} {int(loads_only)}", "AMX", runs, seconds,
                          copies, first_iters=1 << 10, max_iters=1 << 30)


def amx_peak(kind: str = "int8", runs: int = 200, seconds: float = 0.002,
             copies: int = 1, random: bool = False, ring: int = 0) -> float:
    """AMX peak of one core (or the sum over ``copies`` probes at once) in
    GOP/s (``kind='int8'``: tdpbusd) or GFLOP/s (``'bf16'``: tdpbf16ps).
    ``random``: random data in the tiles (the unit is slower than on
    zeros); ``ring`` > 0: each step first loads its four A and B tiles
    (4 KB) from a buffer of ``ring`` bytes cycled through (4096: the same
    L1-resident tiles every step, as a kernel's loads at best; larger: a
    stream from L2). The defaults are the nominal figure (zeros, no
    loads). Raises ``PeakUnavailable``."""
    if kind not in ("int8", "bf16"):
        raise ValueError(f"kind is 'int8' or 'bf16', not {kind!r}")
    if ring % 4096 or ring < 0:
        raise ValueError(f"ring is a multiple of 4096, not {ring}")
    with AmxProbe() as probe:
        return probe.rate(kind, runs, seconds, copies, random, ring)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--copies", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        for kind, unit in (("int8", "GOP/s"), ("bf16", "GFLOP/s")):
            for name, random, ring in VARIANTS:
                g = amx_peak(kind, args.runs, copies=args.copies,
                             random=random, ring=ring)
                print(f"AMX {kind} peak ({name}), {args.copies} core(s): "
                      f"{g:.0f} {unit}")
        with AmxProbe() as probe:
            for name, ring in LOAD_RINGS:
                g = probe.rate(runs=args.runs, copies=args.copies,
                               random=True, ring=ring, loads_only=True)
                print(f"tile loads alone ({name}), {args.copies} core(s): "
                      f"{g:.0f} GB/s")
    except PeakUnavailable as e:
        print(f"peak: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
