"""Benchmark (not a test): the ceiling of loop structures for the AMX GEMM.

    CC=gcc python -m apps.gemm_amx.probe_blocking [--kind int8|bf16]
        [--sizes 512 1024 2048] [--rounds 8] [--kc 8 16] [--mc 4 16]
        [--huge] [--variants ORDER[/C-MODE] ...]

A hand-written C harness of the GEMM's tile loops, square n x n x n: the
2 x 2 tile block of the schedule (four C tiles held over the K steps of a
block, two A and two B tiles loaded per step; A in the tile layout
``Ap[io, ih, kt]``, B packed ``Bp[jt, kt]``, both prepared before timing,
so the copy of A and the packing of B are not in the figures), in several
loop orders and with several ways of reaching C. Variants run in turn,
round after round, in one process; the best thread CPU time of each is
printed as GOP/s (int8) or GFLOP/s (bf16) and as a % of the AMX peak
measured before and after each size in the same run (the higher of the
two) (random data, tile loads from L1: the
figure bench.py's "% of the random-data peak" divides by).

Loop orders (``NC`` = 256-column blocks outermost in all):

- ``kernel``: the schedule's: row blocks, then 32-column blocks, all of K
  per C block (A's 32 x K row block reused across the 32-column blocks,
  the packed NC x K block of B from L2);
- ``jo-io``: 32-column blocks outside the row blocks, all of K (the B
  panel, K x 32, reused across the row blocks: L1-resident when it fits);
- ``kc=S``: K blocks of S steps, then 32-column blocks, then row blocks:
  the B panel (S x 2 KB) stays in L1 across the row blocks while A streams
  from L2; C loaded and stored once per K block; ``kc=S+pfA`` also
  prefetches (T0) the next row block's A tiles of each step;
- ``io-kc=S``: row blocks, K blocks of S steps, 32-column blocks: A's
  32 x S block stays in L1 across the 32-column blocks, B from L2, C
  reloaded per K block;
- ``blis``: K blocks, then row blocks of MC (``--mc``: 32-row blocks per
  MC), then 32-column blocks, then the row blocks of the MC block (the
  B panel reused from L1 across MC / 32 row blocks, A's MC x S block
  from L2), over all of N at once;
- ``kernel+pfC0``/``kernel+pfC1``: the kernel's order with a prefetch
  (T0 / T1) of the next C block's 64 lines spread over the K steps;
  ``kernel+pfClate=S`` the same (T0) in the block's last S steps only;
  ``kc+pfC1``/``kc+pfC0``: the ``kc`` order with the next row block's C
  prefetched;
- ``strip``: the kernel's order with each 32 x NC strip of C copied into
  a contiguous tile-layout buffer (and back) around the 32-column blocks;
- ``pipelined``: the kernel's order, the last step of each block
  interleaved with the C tiles (each product followed by the store of its
  C tile and the load of the next block's), so the next block's C loads
  start while the last products still run;
- ``r7``: the kernel's order with one B tile register (B0, two products,
  then B1 into the same tile: seven tiles, B by ``tileloaddt1``);
  ``r7-rot``: the same with the C tiles rotated through five registers,
  so the eighth is a spare that takes the next block's first C tile in
  the middle of the block, and in the last step each C tile is stored
  right after its last product and its register reloaded with the next
  block's next C tile (software pipelining of C across blocks);
  ``r7-rot+pfC0`` also prefetches (T0) the next block's 64 C lines over
  the steps, ``r7-rot+pfC1far`` (T1) those of the block after it.

Ways of reaching C (a suffix to any order, e.g. ``kernel/C-L1``): ``C-L1``
every C tile loaded from and stored to one 4 KB block (a bound: no C
traffic, wrong results); ``no-C`` no C loads or stores at all;
``C-padded`` C's rows N + 16 elements apart instead of N (no power-of-two
stride); ``C-stores-L1`` / ``C-loads-L1`` only one direction to the 4 KB
block; ``C-loads-t1`` C tiles loaded by ``tileloaddt1`` (no-reuse hint);
``C-tiled`` C in tile layout (every block a contiguous 4 KB, a bound);
``C-zero-add`` tile products from zeroed C tiles, stored to an L1 block
and added into C with AVX-512 (exact for int8 only). A last suffix
``+Bt1`` / ``+At1`` loads the B / A tiles by ``tileloaddt1`` (the
no-reuse hint: keep the other operand's block in L1); ``+ops-L1`` loads
every A and B tile from one L1-resident 4 KB (a bound: no operand
traffic); ``+Bt1+pfB`` is ``+Bt1`` with the next block's B tiles
prefetched (T0) into L1, 32 lines per step (orders ``kernel`` and
``io-kc``). The hints apply to the orders built on ``block()`` only, not
``strip``, ``pipelined`` or ``r7``. A final ``@NC`` sets the column
block (default 256, e.g. ``kernel+Bt1@512``). ``--huge`` puts A, B
and C on transparent huge pages. Results are not checked: the harness
times loops, and the bounds compute wrong values by design.

Needs AMX (exit status 2 without). apps/gemm_amx/README.md ("The loop
structure's ceiling") gives the findings.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

from apps.common.peak import PeakUnavailable, build_probe  # noqa: E402
from apps.gemm_amx.peak import AMX_GUARD, AmxProbe  # noqa: E402

_SOURCE = r"""
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/mman.h>

#define T 1024   /* bytes of one tile */
static long M, N, KT, NC = 256;
static unsigned char *Ap, *Bp;
static int32_t *C;
#define APT(io, ih, kt) (Ap + ((((long)(io) * 2 + (ih)) * KT + (kt)) * T))
#define BPT(jt, kt) (Bp + (((long)(jt) * KT + (kt)) * T))
static long LDC;   /* C's row stride in elements (N, or N + 16: CMODE 3) */
static long MCB = 4;   /* row blocks of 32 per MC block (variant 9) */
static long PFS = 4;   /* steps of the late prefetch of C (variant 8) */
static int BF16, CMODE;   /* how the C tiles are loaded (block()) */
static int HINT;   /* 1: B tiles loaded by tileloaddt1, 2: A tiles, 3: A and
                      B from one 4 KB (a bound), 4: as 1 and the next
                      block's B tiles prefetched into L1 from NB (block()) */
static const unsigned char *NB;   /* the next block's B at its k0 (HINT 4) */
static int32_t Cfix[1024] __attribute__((aligned(64)));
/* C strip of variant 7, tile layout [jo][ih][jh][16][16] */
static int32_t Cs[32 * 256] __attribute__((aligned(64)));
#define EXO_FENCE() __asm__ __volatile__("" ::: "memory")
/* one tile product, bf16 or int8 by the build */
#define DP(c, a, b) do { if (BF16) _tile_dpbf16ps(c, a, b); \
                         else _tile_dpbusd(c, a, b); } while (0)

/* variant 7: the 32 x NC strip of C copied into Cs (tile layout) and back */
__attribute__((target("amx-tile,amx-int8,amx-bf16")))
static void strip(long io, long jc, long jt0) {
    for (long r = 0; r < 32; r++)
        for (long jt = 0; jt < NC / 16; jt++)
            memcpy(Cs + (((jt >> 1) * 2 + (r >> 4)) * 2 + (jt & 1)) * 256 + (r & 15) * 16,
                   C + (32 * io + r) * LDC + jc * NC + 16 * jt, 64);
    EXO_FENCE();   /* gcc's tile loads and stores name no memory */
    for (long jo = 0; jo < NC / 32; jo++) {
        int32_t *c = Cs + jo * 1024;
        _tile_loadd(0, c, 64); _tile_loadd(1, c + 256, 64);
        _tile_loadd(2, c + 512, 64); _tile_loadd(3, c + 768, 64);
        long jt = jt0 + 2 * jo;
        for (long kt = 0; kt < KT; kt++) {
            _tile_loadd(4, APT(io, 0, kt), 64);
            _tile_loadd(6, BPT(jt, kt), 64);
            _tile_loadd(5, APT(io, 1, kt), 64);
            _tile_loadd(7, BPT(jt + 1, kt), 64);
            DP(0, 4, 6); DP(1, 4, 7); DP(2, 5, 6); DP(3, 5, 7);
        }
        _tile_stored(0, c, 64); _tile_stored(1, c + 256, 64);
        _tile_stored(2, c + 512, 64); _tile_stored(3, c + 768, 64);
    }
    EXO_FENCE();
    for (long r = 0; r < 32; r++)
        for (long jt = 0; jt < NC / 16; jt++)
            memcpy(C + (32 * io + r) * LDC + jc * NC + 16 * jt,
                   Cs + (((jt >> 1) * 2 + (r >> 4)) * 2 + (jt & 1)) * 256 + (r & 15) * 16, 64);
}

#define CTX(fix, i, j) ((fix) ? Cfix + ((i) % 32) * 32 + (j) % 32 \
                        : CMODE == 7 ? C + (((long)(i) / 32 * (N / 32) \
                          + (j) / 32) * 4 + (i) % 32 / 16 * 2 \
                          + (j) % 32 / 16) * 256 \
                        : C + (long)(i) * LDC + (j))

__attribute__((target("amx-tile,amx-int8,amx-bf16,avx512f")))
static inline void block(long io, long jt, long k0, long k1, int pf,
                         const int32_t *nc) {
    /* C modes: 1 C tiles from (and to) one L1-resident 4 KB block, 2 no
       C tiles, 3 C rows N + 16 apart, 4 stores to the 4 KB block, 5 loads
       from it, 6 loads by tileloaddt1 (a no-reuse hint) */
    int lfix = CMODE == 1 || CMODE == 5, sfix = CMODE == 1 || CMODE == 4;
    long ld = lfix ? 128 : CMODE == 7 ? 64 : LDC * 4;
    long sd = sfix ? 128 : CMODE == 7 ? 64 : LDC * 4;
    if (CMODE == 6) {
        _tile_stream_loadd(0, CTX(0, 32 * io, 16 * jt), ld);
        _tile_stream_loadd(1, CTX(0, 32 * io, 16 * jt + 16), ld);
        _tile_stream_loadd(2, CTX(0, 32 * io + 16, 16 * jt), ld);
        _tile_stream_loadd(3, CTX(0, 32 * io + 16, 16 * jt + 16), ld);
    } else if (CMODE == 8) {
        _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    } else if (CMODE != 2) {
        _tile_loadd(0, CTX(lfix, 32 * io, 16 * jt), ld);
        _tile_loadd(1, CTX(lfix, 32 * io, 16 * jt + 16), ld);
        _tile_loadd(2, CTX(lfix, 32 * io + 16, 16 * jt), ld);
        _tile_loadd(3, CTX(lfix, 32 * io + 16, 16 * jt + 16), ld);
    }
    const unsigned char *pa = APT(io + 1, 0, k0);
    for (long kt = k0; kt < k1; kt++) {
        if (HINT == 3) {   /* A and B tiles from one L1-resident 4 KB */
            _tile_loadd(4, Ap, 64); _tile_loadd(6, Bp, 64);
            _tile_loadd(5, Ap + T, 64); _tile_loadd(7, Bp + T, 64);
        } else if (HINT == 1 || HINT == 4) {
            _tile_loadd(4, APT(io, 0, kt), 64);
            _tile_stream_loadd(6, BPT(jt, kt), 64);
            _tile_loadd(5, APT(io, 1, kt), 64);
            _tile_stream_loadd(7, BPT(jt + 1, kt), 64);
        } else if (HINT == 2) {
            _tile_stream_loadd(4, APT(io, 0, kt), 64);
            _tile_loadd(6, BPT(jt, kt), 64);
            _tile_stream_loadd(5, APT(io, 1, kt), 64);
            _tile_loadd(7, BPT(jt + 1, kt), 64);
        } else {
            _tile_loadd(4, APT(io, 0, kt), 64);
            _tile_loadd(6, BPT(jt, kt), 64);
            _tile_loadd(5, APT(io, 1, kt), 64);
            _tile_loadd(7, BPT(jt + 1, kt), 64);
        }
        if (pf >= 2 && nc) {   /* the next C block's lines, spread over
                                  all steps (pf 2, 3) or the last PFS (4) */
            long first = pf == 4 ? (k1 - k0 > PFS ? k1 - PFS : k0) : k0;
            long s0 = kt < first ? 0 : (kt - first) * 64 / (k1 - first);
            long s1 = kt < first ? 0 : (kt - first + 1) * 64 / (k1 - first);
            for (long l = s0; l < s1; l++) {
                const char *q = (const char *)(nc + (l >> 1) * LDC) + (l & 1) * 64;
                if (pf == 3) _mm_prefetch(q, _MM_HINT_T1);
                else _mm_prefetch(q, _MM_HINT_T0);
            }
        }
        if (HINT == 4 && NB) {   /* the next block's two B tiles of
                                    this step, 32 lines, into L1 */
            const char *b0 = (const char *)NB + (kt - k0) * T;
            const char *b1 = b0 + KT * T;
            for (int l = 0; l < T; l += 64) {
                _mm_prefetch(b0 + l, _MM_HINT_T0);
                _mm_prefetch(b1 + l, _MM_HINT_T0);
            }
        }
        if (pf == 1) {   /* the next row block's A tiles of this step */
            const unsigned char *a0 = pa + (kt - k0) * T;
            const unsigned char *a1 = a0 + KT * T;
            for (int l = 0; l < T; l += 64) {
                _mm_prefetch((const char *)a0 + l, _MM_HINT_T0);
                _mm_prefetch((const char *)a1 + l, _MM_HINT_T0);
            }
        }
        DP(0, 4, 6); DP(1, 4, 7); DP(2, 5, 6); DP(3, 5, 7);
    }
    if (CMODE == 2) return;
    if (CMODE == 8) {   /* products from zero, then C += them (int8) */
        _tile_stored(0, Cfix, 128); _tile_stored(1, Cfix + 16, 128);
        _tile_stored(2, Cfix + 512, 128); _tile_stored(3, Cfix + 528, 128);
        EXO_FENCE();
        int32_t *c = C + 32 * io * LDC + 16 * jt;
        for (int r = 0; r < 32; r++)
            for (int h = 0; h < 2; h++) {
                __m512i x = _mm512_loadu_si512(c + r * LDC + 16 * h);
                __m512i y = _mm512_load_si512(Cfix + 32 * r + 16 * h);
                _mm512_storeu_si512(c + r * LDC + 16 * h,
                                    _mm512_add_epi32(x, y));
            }
        return;
    }
    _tile_stored(0, CTX(sfix, 32 * io, 16 * jt), sd);
    _tile_stored(1, CTX(sfix, 32 * io, 16 * jt + 16), sd);
    _tile_stored(2, CTX(sfix, 32 * io + 16, 16 * jt), sd);
    _tile_stored(3, CTX(sfix, 32 * io + 16, 16 * jt + 16), sd);
}

/* variant 12: the schedule's order, the last step of each block
   interleaved with the C tiles: each product of the last step is
   followed by the store of its C tile and the load of the next block's
   (the first block's C loaded before the loop) */
__attribute__((target("amx-tile,amx-int8,amx-bf16")))
static void pipelined(long jc) {
    long ld = LDC * 4, MB = M / 32, nb = MB * (NC / 32), jt0 = jc * NC / 16;
#define CB(b, ih, jh) (C + (32 * ((b) / (NC / 32)) + 16 * (ih)) * LDC \
                       + jc * NC + 32 * ((b) % (NC / 32)) + 16 * (jh))
    _tile_loadd(0, CB(0, 0, 0), ld); _tile_loadd(1, CB(0, 0, 1), ld);
    _tile_loadd(2, CB(0, 1, 0), ld); _tile_loadd(3, CB(0, 1, 1), ld);
    for (long b = 0; b < nb; b++) {
        long io = b / (NC / 32), jt = jt0 + 2 * (b % (NC / 32));
        for (long kt = 0; kt < KT; kt++) {
            _tile_loadd(4, APT(io, 0, kt), 64);
            _tile_loadd(6, BPT(jt, kt), 64);
            _tile_loadd(5, APT(io, 1, kt), 64);
            _tile_loadd(7, BPT(jt + 1, kt), 64);
            if (kt + 1 < KT || b + 1 == nb) {
                DP(0, 4, 6); DP(1, 4, 7); DP(2, 5, 6); DP(3, 5, 7);
            } else {
                DP(0, 4, 6); _tile_stored(0, CB(b, 0, 0), ld);
                _tile_loadd(0, CB(b + 1, 0, 0), ld);
                DP(1, 4, 7); _tile_stored(1, CB(b, 0, 1), ld);
                _tile_loadd(1, CB(b + 1, 0, 1), ld);
                DP(2, 5, 6); _tile_stored(2, CB(b, 1, 0), ld);
                _tile_loadd(2, CB(b + 1, 1, 0), ld);
                DP(3, 5, 7); _tile_stored(3, CB(b, 1, 1), ld);
                _tile_loadd(3, CB(b + 1, 1, 1), ld);
            }
        }
    }
    _tile_stored(0, CB(nb - 1, 0, 0), ld); _tile_stored(1, CB(nb - 1, 0, 1), ld);
    _tile_stored(2, CB(nb - 1, 1, 0), ld); _tile_stored(3, CB(nb - 1, 1, 1), ld);
#undef CB
}

/* variants 13 and 14: the schedule's order with ONE B tile register (C
   in four, A in two, B0 then B1 into tmm6: seven tiles). 13 keeps the
   C tiles fixed (tmm0..3, drained as the kernel's); 14 rotates the C
   tiles through five registers so the eighth is a spare: the next
   block's first C tile is loaded into it in the middle of the block, and
   in the last step each C tile is stored right after its last product
   and the register reloaded with the next block's next C tile. */
#define R7C(b, ih, jh) (C + (32 * ((b) / (NC / 32)) + 16 * (ih)) * LDC \
                        + jc * NC + 32 * ((b) % (NC / 32)) + 16 * (jh))
#define R7STEP(r0, r1, r2, r3, io, jt, kt) do { \
        _tile_loadd(4, APT(io, 0, kt), 64); _tile_loadd(5, APT(io, 1, kt), 64); \
        _tile_stream_loadd(6, BPT(jt, kt), 64); \
        DP(r0, 4, 6); DP(r1, 5, 6); \
        _tile_stream_loadd(6, BPT((jt) + 1, kt), 64); \
        DP(r2, 4, 6); DP(r3, 5, 6); } while (0)
/* one block with C00 C10 C01 C11 in r0 r1 r2 r3 (loaded), s the spare */
#define R7BLK(r0, r1, r2, r3, s) do { \
        long io = b / (NC / 32), jt = jt0 + 2 * (b % (NC / 32)); \
        int more = b + 1 < nb; \
        for (long kt = 0; kt + 1 < KT; kt++) { \
            R7STEP(r0, r1, r2, r3, io, jt, kt); \
            if (PFR && b + PFR < nb) r7pf(jc, b + PFR, kt, PFR); \
            if (kt == KT / 2 && more) _tile_loadd(s, R7C(b + 1, 0, 0), ld); \
        } \
        long kt = KT - 1; \
        _tile_loadd(4, APT(io, 0, kt), 64); _tile_loadd(5, APT(io, 1, kt), 64); \
        _tile_stream_loadd(6, BPT(jt, kt), 64); \
        DP(r0, 4, 6); _tile_stored(r0, R7C(b, 0, 0), ld); \
        if (more) _tile_loadd(r0, R7C(b + 1, 1, 0), ld); \
        DP(r1, 5, 6); _tile_stored(r1, R7C(b, 1, 0), ld); \
        if (more) _tile_loadd(r1, R7C(b + 1, 0, 1), ld); \
        _tile_stream_loadd(6, BPT(jt + 1, kt), 64); \
        DP(r2, 4, 6); _tile_stored(r2, R7C(b, 0, 1), ld); \
        if (more) _tile_loadd(r2, R7C(b + 1, 1, 1), ld); \
        DP(r3, 5, 6); _tile_stored(r3, R7C(b, 1, 1), ld); \
        b++; } while (0)

static int PFR;   /* r7-rot: prefetch block b + PFR's C lines (1: T0, 2: T1) */
/* block b's 64 C lines, spread over the first KT - 1 steps */
static inline void r7pf(long jc, long b, long kt, int pfr) {
    long s0 = kt * 64 / (KT - 1), s1 = (kt + 1) * 64 / (KT - 1);
    for (long l = s0; l < s1; l++) {
        const char *q = (const char *)R7C(b, l >> 5, 0) + (l & 31) / 2 * LDC * 4
                        + (l & 1) * 64;
        if (pfr == 1) _mm_prefetch(q, _MM_HINT_T0);
        else _mm_prefetch(q, _MM_HINT_T1);
    }
}

__attribute__((target("amx-tile,amx-int8,amx-bf16")))
static void r7(long jc, int rotate) {
    long ld = LDC * 4, nb = M / 32 * (NC / 32), jt0 = jc * NC / 16;
    if (!rotate) {
        for (long b = 0; b < nb; b++) {
            long io = b / (NC / 32), jt = jt0 + 2 * (b % (NC / 32));
            _tile_loadd(0, R7C(b, 0, 0), ld); _tile_loadd(1, R7C(b, 1, 0), ld);
            _tile_loadd(2, R7C(b, 0, 1), ld); _tile_loadd(3, R7C(b, 1, 1), ld);
            for (long kt = 0; kt < KT; kt++)
                R7STEP(0, 1, 2, 3, io, jt, kt);
            _tile_stored(0, R7C(b, 0, 0), ld); _tile_stored(1, R7C(b, 1, 0), ld);
            _tile_stored(2, R7C(b, 0, 1), ld); _tile_stored(3, R7C(b, 1, 1), ld);
        }
        return;
    }
    long b = 0;
    _tile_loadd(0, R7C(0, 0, 0), ld); _tile_loadd(1, R7C(0, 1, 0), ld);
    _tile_loadd(2, R7C(0, 0, 1), ld); _tile_loadd(3, R7C(0, 1, 1), ld);
    for (;;) {   /* (r0 r1 r2 r3 s) -> (s r0 r1 r2 r3): period five */
        R7BLK(0, 1, 2, 3, 7); if (b == nb) break;
        R7BLK(7, 0, 1, 2, 3); if (b == nb) break;
        R7BLK(3, 7, 0, 1, 2); if (b == nb) break;
        R7BLK(2, 3, 7, 0, 1); if (b == nb) break;
        R7BLK(1, 2, 3, 7, 0); if (b == nb) break;
    }
}

/* variants (the names in VARIANTS below): 0 kernel, 1 jo-io, 2 kc,
   3 kc+pfA, 4 io-kc, 5 kernel+pfC0, 6 kernel+pfC1, 7 C strip staged */
static void gemm(int variant, long kc) {
    long MB = M / 32;
    for (long jc = 0; jc < N / NC; jc++) {
        long jt0 = jc * NC / 16;
        if (variant == 12) {
            pipelined(jc);
        } else if (variant >= 13 && variant <= 16) {
            PFR = variant >= 15 ? variant - 14 : 0;
            r7(jc, variant >= 14);
        } else if (variant == 0) {
            for (long io = 0; io < MB; io++)
                for (long jo = 0; jo < NC / 32; jo++) {
                    NB = jo + 1 < NC / 32 ? BPT(jt0 + 2 * jo + 2, 0) : 0;
                    block(io, jt0 + 2 * jo, 0, KT, 0, 0);
                }
        } else if (variant == 1) {
            for (long jo = 0; jo < NC / 32; jo++)
                for (long io = 0; io < MB; io++)
                    block(io, jt0 + 2 * jo, 0, KT, 0, 0);
        } else if (variant == 7) {
            for (long io = 0; io < MB; io++)
                strip(io, jc, jt0);
        } else if (variant == 5 || variant == 6 || variant == 8) {
            for (long io = 0; io < MB; io++)
                for (long jo = 0; jo < NC / 32; jo++) {
                    long ni = io, nj = jo + 1;
                    if (nj == NC / 32) { nj = 0; ni++; }
                    block(io, jt0 + 2 * jo, 0, KT,
                          variant == 8 ? 4 : variant - 3,
                          ni < MB ? C + 32 * ni * LDC + jc * NC + 32 * nj : 0);
                }
        } else if (variant == 9) {   /* BLIS order, once for all jc */
            if (jc) break;
            for (long k0 = 0; k0 < KT; k0 += kc)
                for (long i0 = 0; i0 < MB; i0 += MCB)
                    for (long jt = 0; jt < N / 16; jt += 2)
                        for (long io = i0; io < i0 + MCB && io < MB; io++)
                            block(io, jt, k0, k0 + kc < KT ? k0 + kc : KT,
                                  0, 0);
        } else if (variant == 10 || variant == 11) {
            /* kc order, the next row block's C prefetched (T1 / T0) */
            for (long k0 = 0; k0 < KT; k0 += kc)
                for (long jo = 0; jo < NC / 32; jo++)
                    for (long io = 0; io < MB; io++)
                        block(io, jt0 + 2 * jo, k0,
                              k0 + kc < KT ? k0 + kc : KT,
                              variant == 10 ? 3 : 2,
                              io + 1 < MB ? C + 32 * (io + 1) * LDC
                                            + jc * NC + 32 * jo : 0);
        } else if (variant == 4) {
            for (long io = 0; io < MB; io++)
                for (long k0 = 0; k0 < KT; k0 += kc)
                    for (long jo = 0; jo < NC / 32; jo++) {
                        long nj = jo + 1, nk = k0;
                        if (nj == NC / 32) { nj = 0; nk += kc; }
                        if (nk >= KT) { nk = 0; }
                        NB = BPT(jt0 + 2 * nj, nk);
                        block(io, jt0 + 2 * jo, k0,
                              k0 + kc < KT ? k0 + kc : KT, 0, 0);
                    }
        } else {
            for (long k0 = 0; k0 < KT; k0 += kc)
                for (long jo = 0; jo < NC / 32; jo++)
                    for (long io = 0; io < MB; io++)
                        block(io, jt0 + 2 * jo, k0,
                              k0 + kc < KT ? k0 + kc : KT,
                              variant == 3 && io + 1 < MB, 0);
        }
    }
}

__attribute__((target("amx-tile")))
static void setup(void) {
    unsigned char cfg[64];
    memset(cfg, 0, 64);
    cfg[0] = 1;
    for (int t = 0; t < 8; t++) { cfg[16 + 2 * t] = 64; cfg[48 + t] = 16; }
    __asm__ __volatile__("" ::: "memory");
    _tile_loadconfig(cfg);
}

static int HUGE;   /* 1: the buffers on transparent huge pages */
static void *big(long bytes) {
    long a = 2L << 20, n = (bytes + a - 1) / a * a;
    void *p = aligned_alloc(a, n);
    if (p && HUGE) madvise(p, n, MADV_HUGEPAGE);
    return p;
}

static double cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void fill(unsigned char *p, long n) {
    uint32_t x = 12345;
    for (long i = 0; i < n; i += 2) {
        x = x * 1664525u + 1013904223u;
        uint16_t v = (uint16_t)(x >> 16);
        if (BF16)
            v = (uint16_t)((v & 0x807F) | ((uint16_t)(100 + (x >> 8) % 27) << 7));
        memcpy(p + i, &v, 2);
    }
}

int main(int argc, char **argv) {
    /* n bf16 rounds variant:kc:cmode ... */
@AMX_GUARD@    if (argc < 5 || argc - 4 > 64) return 1;
    long n = atol(argv[1]);
    BF16 = atoi(argv[2]) & 1;
    HUGE = atoi(argv[2]) >> 1;
    int rounds = atoi(argv[3]);
    int nv = argc - 4;
    M = N = n;
    KT = n / (BF16 ? 32 : 64);
    Ap = big(M * KT * 64);
    Bp = big(N * KT * 64);
    C = big(M * (N + 16) * 4);
    fill(Ap, M * KT * 64); fill(Bp, N * KT * 64);
    memset(C, 0, M * (N + 16) * 4);
    setup();
    double best[64];
    for (int v = 0; v < nv; v++) best[v] = 1e30;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < nv; v++) {
            int variant; long kc;
            CMODE = 0; HINT = 0; NC = 0; NB = 0;
            sscanf(argv[4 + v], "%d:%ld:%d:%d:%ld", &variant, &kc, &CMODE,
                   &HINT, &NC);
            if (NC <= 0 || N % NC) NC = 256;
            if (variant == 8) PFS = kc;
            if (variant == 9) { MCB = kc >> 8; kc &= 255; }
            LDC = CMODE == 3 ? N + 16 : N;
            double t0 = cpu();
            gemm(variant, kc);
            double t = cpu() - t0;
            if (t < best[v]) best[v] = t;
        }
    double ops = 2.0 * M * N * (double)n;
    for (int v = 0; v < nv; v++)
        printf("%s %.1f\n", argv[4 + v], ops / best[v] * 1e-9);
    return 0;
}
""".replace("@AMX_GUARD@", AMX_GUARD.lstrip("\n"))


#: loop orders: name -> (variant number in the C, takes a K block)
ORDERS = {"kernel": (0, False), "jo-io": (1, False), "kc": (2, True),
          "kc+pfA": (3, True), "io-kc": (4, True), "kernel+pfC0": (5, False),
          "kernel+pfC1": (6, False), "strip": (7, False),
          "kernel+pfClate": (8, True), "blis": (9, True),
          "kc+pfC1": (10, True), "kc+pfC0": (11, True),
          "pipelined": (12, False), "r7": (13, False), "r7-rot": (14, False),
          "r7-rot+pfC0": (15, False), "r7-rot+pfC1far": (16, False)}
#: ways of reaching C: suffix -> C mode in the C
C_MODES = {"": 0, "C-L1": 1, "no-C": 2, "C-padded": 3, "C-stores-L1": 4,
           "C-loads-L1": 5, "C-loads-t1": 6, "C-tiled": 7,
           "C-zero-add": 8}
#: load hints for the A and B tiles (a suffix after the C mode, e.g.
#: ``kernel/no-C+Bt1``): suffix -> hint in the C (block() only)
HINTS = {"Bt1": 1, "At1": 2, "ops-L1": 3, "Bt1+pfB": 4}
DEFAULT = ("kernel", "kernel/C-L1", "kernel/no-C", "jo-io", "kc", "io-kc",
           "io-kc/C-L1", "kernel+pfC0")


def _specs(names, kcs, mcs=(4,)):
    """[(label, 'variant:kc:cmode')] for the variant names (a K-blocked
    order once per K block size in ``kcs``)."""
    out = []
    for full in names:
        full, _, nc = full.partition("@")   # ``@NC``: column blocks of NC
        if nc and (not nc.isdigit() or int(nc) % 32):
            raise SystemExit(f"unknown column block {nc!r}: a multiple of 32")
        name, hint = full, ""
        for h in HINTS:
            if full.endswith("+" + h):
                name, hint = full[:-len(h) - 1], "+" + h
        tail = ((f":{HINTS[hint[1:]] if hint else 0}" if hint or nc else "")
                + (f":{nc}" if nc else ""))
        at = f"@{nc}" if nc else ""
        order, _, cmode = name.partition("/")
        if order not in ORDERS or cmode not in C_MODES:
            raise SystemExit(f"unknown variant {name!r}: an order of "
                             f"{', '.join(ORDERS)}, optionally /"
                             f"{', /'.join(m for m in C_MODES if m)}")
        v, blocked = ORDERS[order]
        if hint and (order in ("strip", "pipelined")
                     or order.startswith("r7")):
            raise SystemExit(f"unknown variant {full!r}: {order} takes no "
                             f"load hint")
        if hint == "+Bt1+pfB" and order not in ("kernel", "io-kc"):
            raise SystemExit(f"unknown variant {full!r}: +Bt1+pfB is for "
                             f"the orders kernel and io-kc")
        if nc and order == "strip" and nc != "256":
            raise SystemExit(f"unknown variant {full!r}: strip's buffer "
                             f"holds 256 columns")
        if order == "blis":
            for kc in kcs:
                for mc in mcs:
                    out.append((f"blis kc={kc} mc={32 * mc}"
                                + (f"/{cmode}" if cmode else "") + hint + at,
                                f"9:{(mc << 8) | kc}:{C_MODES[cmode]}"
                                + tail))
            continue
        for kc in (kcs if blocked else [0]):
            label = (order if not blocked else
                     order.replace("kc", f"kc={kc}", 1) if "kc" in order
                     else f"{order}={kc}")
            out.append((label + (f"/{cmode}" if cmode else "") + hint + at,
                        f"{v}:{kc}:{C_MODES[cmode]}" + tail))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    ap.add_argument("--kind", choices=["int8", "bf16"], default="int8")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--kc", type=int, nargs="+", default=[8, 16],
                    help="K block sizes of the K-blocked orders, in steps "
                    "(one tile of A and of B per step: 64 bytes of K)")
    ap.add_argument("--variants", nargs="+", default=list(DEFAULT),
                    help="ORDER[/C-MODE] (see the module docstring)")
    ap.add_argument("--mc", type=int, nargs="+", default=[4, 16],
                    help="row blocks of 32 per MC block (order 'blis')")
    ap.add_argument("--huge", action="store_true",
                    help="A, B and C on transparent huge pages (madvise)")
    args = ap.parse_args(argv)
    specs = _specs(args.variants, args.kc, args.mc)
    if len(specs) > 60:
        raise SystemExit("at most 60 variants at once")
    bf16 = args.kind == "bf16"
    try:
        with tempfile.TemporaryDirectory(prefix="amx_block_") as d, \
                AmxProbe() as probe:
            exe = build_probe(_SOURCE, d, "amx_block", "AMX blocking")
            for n in args.sizes:
                # the peak before and after each size: the VM's tile unit
                # changes speed; the % is of the higher one
                before = probe.rate(args.kind, runs=100, random=True,
                                    ring=4096)
                if n % 256:
                    raise SystemExit(f"sizes are multiples of 256, not {n}")
                r = subprocess.run([exe, str(n),
                                    str(int(bf16) + 2 * args.huge),
                                    str(args.rounds),
                                    *(s for _, s in specs)],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise PeakUnavailable(f"the harness failed "
                                          f"({r.returncode}): "
                                          f"{r.stderr.strip()}")
                after = probe.rate(args.kind, runs=100, random=True,
                                   ring=4096)
                peak = max(before, after)
                print(f"AMX {args.kind} peak, random data, L1 tile loads: "
                      f"{before:.0f} before, {after:.0f} after"
                      + (" (unit changed speed)"
                         if peak > 1.25 * min(before, after) else "")
                      + f"; load {os.getloadavg()[0]:.1f}")
                for (label, _), line in zip(specs, r.stdout.splitlines()):
                    g = float(line.split()[1])
                    print(f"{args.kind} {n:5d} {label:22s} {g:7.0f}  "
                          f"{100 * g / peak:3.0f}% of peak", flush=True)
    except PeakUnavailable as e:
        print(f"probe_blocking: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
