"""Micro-benchmark of the generated micro-kernel alone (not a test).

Schedules ``sgemm_avx2`` (or ``sgemm_avx512`` with ``--isa avx512``),
takes the C the code generator emits for one MR x NR tile of the main
kernel (the body of the column-panel loop of a row block: C tile loaded,
KC broadcast-FMA steps, C tile stored) and wraps it in a C harness that
runs it in three memory situations:

* ``hot``: the same packed A (MR x KC) and B (KC x NR) panels every call,
  both in L1: the kernel's ceiling;
* ``B from L2/L3``: one A panel, the B panels of a KC x N packed block
  in turn (the order the schedule runs them: A in L1, B streamed);
* ``A from L2``: one B panel, the A panels of an MC x KC packed block in
  turn (the GotoBLAS/BLIS order: B in L1, A streamed);
* and both orders again with the C tile walking a whole MC x N matrix of
  C (row stride N) the way a full kernel does: down the rows of an MC
  block (GotoBLAS/BLIS), or along the rows (this schedule).

Prints GFLOP/s and the share of the FMA peak (``apps/common/peak.py``),
process CPU time, best of ``2 --reps`` samples taken in ``--reps``
interleaved passes over all the settings.

    python apps/sgemm/ukernel_bench.py [--isa avx2|avx512] [--n 512 2048]
        [--mc 72 144] [--shape 6x64] [--kc 256]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))


def tile_body(c_text: str, nr: int) -> str:
    """The C of one tile of the main kernel: the body of the first
    ``for (.. jo = 0; jo < N / NR; jo++)`` loop inside a row-block loop."""
    start = c_text.index("A_pack[")
    m = re.compile(rf"for \(int_fast32_t jo = 0; jo < N / {nr}; jo\+\+\) \{{"
                   ).search(c_text, c_text.index("C_reg", start) - 400)
    if m is None:
        raise ValueError("no tile loop in the generated C")
    i, depth = m.end(), 1
    j = i
    while depth:
        depth += {"{": 1, "}": -1}.get(c_text[j], 0)
        j += 1
    return c_text[i:j - 1]


HARNESS = r"""
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <time.h>

__attribute__((noinline, target("%(target)s")))
static void tile(const float *restrict A_pack, const float *restrict B_pack,
                 float *restrict C, int_fast32_t N, int_fast32_t ko) {
    const int_fast32_t io = 0, jo = 0;
    (void)ko;
%(body)s
}

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* mode 0: hot; 1: B panels streamed (na = 1, nb panels); 2: A panels
   streamed (na panels, nb = 1) */
static double run(int mode, long na, long nb, int reps) {
    const long a_sz = %(mr)d * %(kc)d, b_sz = %(kc)d * %(nr)d;
    float *A = aligned_alloc(64, (size_t)(na * a_sz) * sizeof(float));
    float *B = aligned_alloc(64, (size_t)(nb * b_sz) * sizeof(float));
    float *C = aligned_alloc(64, (size_t)(%(mr)d * %(nr)d) * sizeof(float));
    for (long i = 0; i < na * a_sz; i++) A[i] = (float)(i %% 7) * 1e-3f;
    for (long i = 0; i < nb * b_sz; i++) B[i] = (float)(i %% 5) * 1e-3f;
    for (long i = 0; i < %(mr)d * %(nr)d; i++) C[i] = 0.0f;
    long calls = (long)(2e9 / (2.0 * %(mr)d * %(nr)d * %(kc)d));
    long per = na > nb ? na : nb;
    calls = (calls / per + 1) * per;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = cpu();
        for (long c = 0; c < calls; c += per)
            for (long p = 0; p < per; p++)
                tile(A + (mode == 2 ? p : 0) * a_sz,
                     B + (mode == 1 ? p : 0) * b_sz, C, %(nr)d, 0);
        double t = cpu() - t0;
        if (t < best) best = t;
    }
    volatile float sink = C[0]; (void)sink;
    free(A); free(B); free(C);
    return 2.0 * %(mr)d * %(nr)d * %(kc)d * (double)calls / best * 1e-9;
}

/* the C tile walks a (6 mb) x n matrix of C with row stride n, as a whole
   kernel does: mode 3, the GotoBLAS/BLIS order (one B panel, the mb A
   panels of an MC block; the tile moves down the rows, then to the next
   column panel); mode 4, the schedule's order (one A panel, the n / NR
   B panels; the tile moves along the rows, then to the next row block) */
static double run_c(int mode, long n, long mb, int reps) {
    const long a_sz = %(mr)d * %(kc)d, b_sz = %(kc)d * %(nr)d;
    const long nb = n / %(nr)d;
    float *A = aligned_alloc(64, (size_t)(mb * a_sz) * sizeof(float));
    float *B = aligned_alloc(64, (size_t)(nb * b_sz) * sizeof(float));
    float *C = aligned_alloc(64, (size_t)(%(mr)d * mb * n) * sizeof(float));
    for (long i = 0; i < mb * a_sz; i++) A[i] = (float)(i %% 7) * 1e-3f;
    for (long i = 0; i < nb * b_sz; i++) B[i] = (float)(i %% 5) * 1e-3f;
    for (long i = 0; i < %(mr)d * mb * n; i++) C[i] = 0.0f;
    const long per = mb * nb;
    long calls = (long)(2e9 / (2.0 * %(mr)d * %(nr)d * %(kc)d));
    calls = (calls / per + 1) * per;
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = cpu();
        for (long c = 0; c < calls; c += per)
            for (long o = 0; o < (mode == 3 ? nb : mb); o++)
                for (long i = 0; i < (mode == 3 ? mb : nb); i++) {
                    long row = mode == 3 ? i : o, col = mode == 3 ? o : i;
                    tile(A + (mode == 3 ? row : 0) * a_sz,
                         B + (mode == 3 ? 0 : col) * b_sz,
                         C + row * %(mr)d * n + col * %(nr)d, n, 0);
                }
        double t = cpu() - t0;
        if (t < best) best = t;
    }
    volatile float sink = C[0]; (void)sink;
    free(A); free(B); free(C);
    return 2.0 * %(mr)d * %(nr)d * %(kc)d * (double)calls / best * 1e-9;
}

int main(int argc, char **argv) {
    int reps = atoi(argv[1]);
    for (int a = 2; a + 2 < argc; a += 3) {
        int mode = atoi(argv[a]);
        long n = atol(argv[a + 1]), mb = atol(argv[a + 2]);
        printf("%%d %%ld %%ld %%.2f\n", mode, n, mb, mode >= 3
               ? run_c(mode, n, mb, reps)
               : run(mode, mode == 2 ? n : 1, mode == 1 ? n : 1, reps));
    }
    return 0;
}
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[256, 512, 2048],
                    help="N of the packed B block (B streamed)")
    ap.add_argument("--mc", type=int, nargs="+", default=[72, 144, 288],
                    help="MC of the packed A block (A streamed)")
    ap.add_argument("--isa", choices=("avx2", "avx512"), default="avx2")
    ap.add_argument("--shape", default=None, metavar="MRxNR",
                    help="the tile (default: the description's)")
    ap.add_argument("--kc", type=int, default=None,
                    help="the k block (default: the description's)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--cflags", default="-O3 -march=native")
    ap.add_argument("--asm", metavar="FILE", help="also write the assembly")
    args = ap.parse_args(argv)

    from apps.common.peak import fma_peak
    from apps.sgemm.schedule import ISAS, schedule
    from apps.sgemm.tuning import variant
    from exo_hl import compile_procs

    isa = ISAS[args.isa]
    if args.shape or args.kc:           # the tile alone: no NC blocks
        isa = variant(args.isa, {"shape": args.shape or
                                 f"{isa.mr}x{isa.nr}",
                                 "kc": args.kc or isa.kc})
    with tempfile.TemporaryDirectory() as d:
        compile_procs([schedule(isa)], d, "sg")
        body = tile_body(Path(d, "sg.c").read_text(), isa.nr)
        src = Path(d, "bench.c")
        src.write_text(HARNESS % dict(
            body=body, mr=isa.mr, nr=isa.nr, kc=isa.kc,
            target=",".join(sorted(isa.cpu_features()))))
        exe = Path(d, "bench")
        subprocess.run(["gcc", *args.cflags.split(), "-std=c11", "-o",
                        str(exe), str(src)], check=True)
        if args.asm:
            subprocess.run(["gcc", *args.cflags.split(), "-std=c11", "-S",
                            "-o", args.asm, str(src)], check=True)
        runs = ["0", "1", "1"] \
            + [x for n in args.n for x in ("1", str(n // isa.nr), "1")] \
            + [x for mc in args.mc for x in ("2", str(mc // isa.mr), "1")]
        for n in args.n:              # C walked as by a whole kernel
            for mc in args.mc:
                runs += ["3", str(n), str(mc // isa.mr)]
            runs += ["4", str(n), str(args.mc[0] // isa.mr)]
        # the settings interleaved: every pass runs each once (best of 2
        # there), so load from other processes hits all of them alike
        best = {}
        for _ in range(args.reps):
            out = subprocess.run([str(exe), "2", *runs], check=True,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                key, g = tuple(line.split()[:3]), float(line.split()[3])
                best[key] = max(best.get(key, 0.0), g)
    peak = fma_peak(isa.name)
    print(f"{isa.label} tile, KC={isa.kc}; FMA peak {peak:.1f} GFLOP/s "
          f"(process CPU time, best of {2 * args.reps}, interleaved)")
    for (mode, n, mb), g in best.items():
        n, mb = int(n), int(mb)
        what = {"0": "hot panels (L1), C tile hot",
                "1": f"B streamed: {n} panels, {n * isa.nr * isa.kc * 4 >> 10}"
                     f" KiB (N={n * isa.nr})",
                "2": f"A streamed: {n} panels, {n * isa.mr * isa.kc * 4 >> 10}"
                     f" KiB (MC={n * isa.mr})",
                "3": f"BLIS order, C {mb * isa.mr}x{n}: A MC={mb * isa.mr}"
                     f" streamed, C tile down the rows",
                "4": f"schedule's order, C {mb * isa.mr}x{n}: B N={n} "
                     f"streamed, C tile along the rows"}[mode]
        print(f"  {what:62s} {g:7.1f} GFLOP/s  {100 * g / peak:5.1f}% of peak")


if __name__ == "__main__":
    main()
