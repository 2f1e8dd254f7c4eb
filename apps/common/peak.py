"""Measured single-core FP32 FMA peak of an instruction set.

    python apps/common/peak.py [--isa avx2|avx512] [--runs 7]

Generates a small C program, compiles it with ``$CC`` (default ``cc``) and
runs it: CHAINS independent accumulators (registers) each take one fused
multiply-add per iteration, so the FMA units never wait for a result (a
chain's latency is hidden by the others: 2 FMA units x 4-5 cycles needs 8
to 10 chains, we use 12). The timed function carries its own target
attribute (no -m flags), the accumulators start from run-time values and
their sum is printed, so the compiler can neither fold nor drop the loop.
Each run is timed with ``clock_gettime(CLOCK_MONOTONIC)``; the best of
many short runs (2 ms: shorter than a scheduler time slice, so on a busy
machine some run uninterrupted) is the peak; load only makes runs slower.

FLOPs per iteration: CHAINS x lanes x 2 (a multiply and an add). Expected:
about 2 FMA units x 8 lanes x 2 x GHz for AVX2 (32 FLOP/cycle), twice that
for AVX-512 on CPUs with two 512-bit FMA units.

Independent of exo_hl: the program checks the CPU itself
(``__builtin_cpu_supports``) and exits with status 2 when the instruction
set is missing, which ``fma_peak`` turns into ``PeakUnavailable``.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass

CHAINS = 12


@dataclass(frozen=True)
class ProbeIsa:
    name: str
    target: str        # GCC target attribute string
    supports: tuple    # __builtin_cpu_supports names
    vec: str           # C vector type
    lanes: int         # f32 lanes
    prefix: str        # intrinsic prefix


PROBE_ISAS = {
    "avx2": ProbeIsa("avx2", "avx2,fma", ("avx2", "fma"), "__m256", 8,
                     "_mm256"),
    "avx512": ProbeIsa("avx512", "avx512f", ("avx512f",), "__m512", 16,
                       "_mm512"),
}


class PeakUnavailable(RuntimeError):
    """The probe cannot run here (missing ISA, no C compiler)."""


def probe_source(isa: str, chains: int = CHAINS) -> str:
    """The C program measuring ``isa``'s FMA throughput."""
    d = PROBE_ISAS[isa]
    p, v = d.prefix, d.vec
    init = "\n".join(f"    {v} c{i} = {p}_set1_ps(seed * {i + 1}.0f);"
                     for i in range(chains))
    body = "\n".join(f"        c{i} = {p}_fmadd_ps(c{i}, a, b);"
                     for i in range(chains))
    total = " + ".join(f"out[{i}]" for i in range(chains))
    stores = "\n".join(
        f"    {p}_storeu_ps(lane, c{i}); out[{i}] = lane[0];"
        for i in range(chains))
    supported = " && ".join(f'__builtin_cpu_supports("{f}")'
                            for f in d.supports)
    return f"""\
/* FP32 FMA throughput probe: {chains} independent chains of {v} ({isa}) */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHAINS {chains}
#define LANES {d.lanes}

__attribute__((target("{d.target}"), noinline))
static float fma_chains(long iters, float seed, float x, float y)
{{
    {v} a = {p}_set1_ps(x), b = {p}_set1_ps(y);
{init}
    for (long n = 0; n < iters; n++) {{
{body}
    }}
    float lane[LANES], out[CHAINS];
{stores}
    return {total};
}}

static double now(void)
{{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}}

int main(int argc, char **argv)
{{
    if (argc != 4) {{
        fprintf(stderr, "usage: %s ITERS RUNS SEED\\n", argv[0]);
        return 1;
    }}
    __builtin_cpu_init();
    if (!({supported})) {{
        fprintf(stderr, "this CPU lacks {'+'.join(d.supports)}\\n");
        return 2;
    }}
    long iters = atol(argv[1]);
    int runs = atoi(argv[2]);
    float seed = (float)atof(argv[3]);   /* run-time values: no folding */
    double best = 1e30, check = 0.0;
    for (int r = 0; r < runs; r++) {{
        double t0 = now();
        float s = fma_chains(iters, seed, 0.999999f * seed, 1e-6f * seed);
        double t = now() - t0;
        check += s;
        if (t < best)
            best = t;
    }}
    double flops = 2.0 * LANES * CHAINS * (double)iters;
    printf("%.6f %.9f %g\\n", flops / best * 1e-9, best, check);
    return 0;
}}
"""


def build_probe(source: str, workdir: str, name: str, what: str,
                flags=()) -> str:
    """Compile a probe's C ``source`` with ``$CC -O2`` (and ``flags``) in
    ``workdir``; the executable's path. Raises ``PeakUnavailable``
    (``what`` names the probe) when it does not compile. Shared by the
    FMA, dot-product, AMX and parallel-region (``fork_cost``) probes."""
    src, exe = os.path.join(workdir, f"{name}.c"), os.path.join(workdir, name)
    with open(src, "w") as f:
        f.write(source)
    cc = shlex.split(os.environ.get("CC", "cc"))
    try:
        r = subprocess.run([*cc, "-O2", *flags, "-o", exe, src],
                           capture_output=True, text=True)
    except OSError as e:                       # no compiler at all
        raise PeakUnavailable(f"cannot compile the {what} probe: {e}")
    if r.returncode != 0:
        raise PeakUnavailable(f"cannot compile the {what} probe: "
                              f"{r.stderr.strip()[:200] or r.returncode}")
    return exe


def probe_rate(exe: str, arg: str, what: str, runs: int, seconds: float,
               copies: int = 1, first_iters: int = 1 << 16,
               max_iters: int = 1 << 34) -> float:
    """The best rate a probe measures, run as ``exe ITERS RUNS arg`` (it
    prints the best rate of RUNS runs of ITERS iterations, then that run's
    seconds): ITERS is first calibrated (from ``first_iters``, x4 up to
    ``max_iters``) so one run takes about ``seconds``, then ``runs`` runs;
    with ``copies`` > 1 that many probes at once, the sum of their rates.
    Raises ``PeakUnavailable`` when a probe fails (``what`` names it)."""
    def run(iters, n, copies=1):
        procs = [subprocess.Popen([exe, str(iters), str(n), arg],
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for _ in range(copies)]
        total, t = 0.0, 0.0
        for pr in procs:
            out, err = pr.communicate()
            if pr.returncode != 0:
                raise PeakUnavailable(err.strip() or f"{what} probe "
                                      f"failed ({pr.returncode})")
            g, t = map(float, out.split()[:2])
            total += g
        return total, t

    iters = first_iters
    while True:
        _, t = run(iters, 3)
        if t >= seconds / 4 or iters >= max_iters:
            break
        iters *= 4
    iters = max(1, int(iters * seconds / t))
    return run(iters, runs, copies)[0]


def fma_peak(isa: str = "avx2", runs: int = 200,
             seconds: float = 0.002, copies: int = 1) -> float:
    """FP32 FMA peak of ``isa`` in GFLOP/s (best of ``runs`` runs of about
    ``seconds`` each): of one core, or with ``copies`` > 1 the sum of that
    many probes run at once, one per core (on some machines all cores busy
    run at a lower clock than one). Raises ``PeakUnavailable``."""
    if isa not in PROBE_ISAS:
        raise ValueError(f"unknown ISA {isa!r} (one of "
                         f"{', '.join(PROBE_ISAS)})")
    if copies < 1:
        raise ValueError(f"copies must be at least 1, not {copies}")
    with tempfile.TemporaryDirectory(prefix="fma_peak_") as d:
        exe = build_probe(probe_source(isa), d, f"fma_peak_{isa}", "FMA")
        return probe_rate(exe, "1.0", "FMA", runs, seconds, copies)


def thread_peaks(isa: str, threads) -> dict:
    """{t: FMA peak on t cores} for each thread count, measured with t
    probes at once, each printed as it is measured; {} (and a printed
    reason) when the probe cannot run. For the benchmarks' "% of peak"."""
    peaks = {}
    try:
        for t in sorted(set(threads)):
            peaks[t] = fma_peak(isa, copies=t)
            print(f"{isa} FMA peak, {t} core{'s' if t > 1 else ''} "
                  f"(measured{', probes at once' if t > 1 else ''}): "
                  f"{peaks[t]:.1f} GFLOP/s")
    except PeakUnavailable as e:
        print(f"FMA peak: not measured ({e})")
        return {}
    return peaks


def best_fma_peak(runs: int = 200):
    """``(isa, GFLOP/s)`` for the widest instruction set this CPU runs
    (AVX-512, else AVX2), or ``(None, reason)`` when neither can be
    measured."""
    reason = "no ISA"
    for isa in ("avx512", "avx2"):
        try:
            return isa, fma_peak(isa, runs)
        except PeakUnavailable as e:
            reason = str(e)
    return None, reason


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isa", choices=sorted(PROBE_ISAS), default="avx2")
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args(argv)
    d = PROBE_ISAS[args.isa]
    try:
        g = fma_peak(args.isa, args.runs)
    except PeakUnavailable as e:
        print(f"peak.py: {e}", file=sys.stderr)
        return 2
    print(f"{args.isa} FP32 FMA peak, 1 core, {CHAINS} chains of {d.vec}: "
          f"{g:.1f} GFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
