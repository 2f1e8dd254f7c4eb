"""Measured single-core peak of the AVX-512 dot products (``vpdpbusd``,
``vdpbf16ps``), the counterpart of ``peak.py``'s FMA probe.

    python apps/common/peak_lowp.py [--kind u8s8|bf16] [--runs 200]

The same method as ``peak.py``: CHAINS independent zmm accumulators each
take one dot product per iteration (latency hidden by the others), the
function carries its own target attribute, the inputs are run-time values
and the result is printed; the best of many ~2 ms runs is the peak.

Operations per instruction (the units GEMM benchmarks count, 2 per
multiply-add): ``vpdpbusd`` 16 lanes x 4 products x 2 = 128 OP;
``vdpbf16ps`` 16 lanes x 2 products x 2 = 64 FLOP.
"""
from __future__ import annotations

import argparse
import sys
import tempfile

from apps.common.peak import (CHAINS, PeakUnavailable, build_probe,
                              probe_rate)

#: kind -> (target, cpu_supports, ops per instruction, accumulator type,
#:          init, step)
KINDS = {
    "u8s8": ("avx512f,avx512vnni", "avx512vnni", 128, "__m512i",
             "_mm512_set1_epi32((int)seed * {i})",
             "c{i} = _mm512_dpbusd_epi32(c{i}, a, b);"),
    "bf16": ("avx512f,avx512bf16", "avx512bf16", 64, "__m512",
             "_mm512_set1_ps(seed * {i}.0f)",
             "c{i} = _mm512_dpbf16_ps(c{i}, (__m512bh)a, (__m512bh)b);"),
}


def probe_source(kind: str, chains: int = CHAINS) -> str:
    target, sup, ops, vec, init, step = KINDS[kind]
    inits = "\n".join(f"    {vec} c{i} = " + init.format(i=i + 1) + ";"
                      for i in range(chains))
    body = "\n".join("        " + step.format(i=i) for i in range(chains))
    fold = " ".join(f"acc = _mm512_xor_si512(acc, (__m512i)c{i});"
                    for i in range(chains))
    return f"""\
/* {kind} dot-product throughput probe: {chains} chains of {vec} */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((target("{target}"), noinline))
static int chains(long iters, float seed)
{{
    __m512i a = _mm512_set1_epi32((int)(seed * 3.0f) | 0x3f003f00);
    __m512i b = _mm512_set1_epi32((int)(seed * 5.0f) | 0x3f013f01);
{inits}
    for (long n = 0; n < iters; n++) {{
{body}
    }}
    __m512i acc = _mm512_setzero_si512();
    {fold}
    int out[16];
    _mm512_storeu_si512(out, acc);
    return out[0];
}}

static double now(void)
{{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}}

int main(int argc, char **argv)
{{
    if (argc != 4) return 1;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("{sup}")) {{
        fprintf(stderr, "this CPU lacks {sup}\\n");
        return 2;
    }}
    long iters = atol(argv[1]);
    int runs = atoi(argv[2]);
    float seed = (float)atof(argv[3]);
    double best = 1e30;
    long check = 0;
    for (int r = 0; r < runs; r++) {{
        double t0 = now();
        check += chains(iters, seed);
        double t = now() - t0;
        if (t < best) best = t;
    }}
    double ops = {ops}.0 * {chains} * (double)iters;
    printf("%.6f %.9f %ld\\n", ops / best * 1e-9, best, check);
    return 0;
}}
"""


def dot_peak(kind: str = "u8s8", runs: int = 200, seconds: float = 0.002,
             copies: int = 1) -> float:
    """GOP/s (u8s8) or GFLOP/s (bf16) of one core (``copies`` probes at
    once: their sum). Raises ``PeakUnavailable``."""
    with tempfile.TemporaryDirectory(prefix="dot_peak_") as d:
        exe = build_probe(probe_source(kind), d, "p", kind)
        return probe_rate(exe, "1.0", kind, runs, seconds, copies,
                          first_iters=1 << 14, max_iters=1 << 32)


def thread_peaks(kind: str, threads) -> dict:
    """{t: peak with t probes at once}, printed; {} when unavailable."""
    out = {}
    unit = "GOP/s" if kind == "u8s8" else "GFLOP/s"
    try:
        for t in sorted(set(threads)):
            out[t] = dot_peak(kind, copies=t)
            print(f"{kind} dot-product peak, {t} core(s): {out[t]:.1f} "
                  f"{unit}")
    except PeakUnavailable as e:
        print(f"{kind} peak: not measured ({e})")
        return {}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=sorted(KINDS), default="u8s8")
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args(argv)
    try:
        g = dot_peak(args.kind, args.runs)
    except PeakUnavailable as e:
        print(f"peak_lowp.py: {e}", file=sys.stderr)
        return 2
    unit = "GOP/s" if args.kind == "u8s8" else "GFLOP/s"
    print(f"{args.kind} peak, 1 core, {CHAINS} chains: {g:.1f} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
