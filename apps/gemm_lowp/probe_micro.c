// Probe (a benchmark, not a test): the int8 8 x 32 micro-kernel alone
// against the vpdpbusd peak, and the packing of B in two loop orders
// (README, "issue 36, session 9"). One core, thread CPU time, the variants
// interleaved, best of R rounds.
//
//   gcc -O3 -march=native -Wall -Wextra apps/gemm_lowp/probe_micro.c -o /tmp/pm
//   /tmp/pm K [R]        (K: the tile's depth, a multiple of 8; e.g. 256, 2048)
//
// Kernel variants (the 16 accumulators in registers, A's rows K apart as in
// the GEMM, the packed 32-column panel of B: K / 4 steps of 128 bytes):
//   step1    one k step per loop iteration (the generated kernel's shape;
//            but gcc 12 compiles this loop with a vmovdqa32 copy of each
//            accumulator per step, which the generated kernel's loop does
//            not have: read step1 with clang, or step2)
//   step2    two k steps per iteration (Tile.unroll_k = 2)
//   noA      step2 with one broadcast hoisted (no A loads)
//   noB      step2 with B in registers (no B loads)
// Packing variants (B: K x K bytes, row-major, column blocks of 512):
//   panel    per panel of 32 columns, all k (the old schedule)
//   korder   per group of 4 rows, all panels (Tile.pack_k)
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static volatile int sink;

__attribute__((noinline)) static void peak(long it, __m512i a, __m512i b) {
  __m512i c[16];
  for (int i = 0; i < 16; i++) c[i] = _mm512_set1_epi32(i);
  for (long n = 0; n < it; n++) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) c[i] = _mm512_dpbusd_epi32(c[i], a, b);
  }
  __m512i s = c[0];
  for (int i = 1; i < 16; i++) s = _mm512_add_epi32(s, c[i]);
  sink = _mm512_reduce_add_epi32(s);
}

// MODE 0: normal, 1: no A loads, 2: no B loads
#define KERN(NAME, MODE, UNROLL)                                              \
  __attribute__((noinline)) static void NAME(const uint8_t *A, long lda,      \
                                             const int8_t *Bp, int32_t *C,    \
                                             long K) {                        \
    __m512i c[16];                                                            \
    for (int r = 0; r < 8; r++) {                                             \
      c[2 * r] = _mm512_loadu_si512(C + 32 * r);                              \
      c[2 * r + 1] = _mm512_loadu_si512(C + 32 * r + 16);                     \
    }                                                                         \
    __m512i ah = _mm512_set1_epi32(*(const int32_t *)(const void *)A);        \
    __m512i bh0 = _mm512_load_si512(Bp), bh1 = _mm512_load_si512(Bp + 64);    \
    _Pragma(UNROLL) for (long k = 0; k < K; k += 4) {                         \
      const int8_t *b = Bp + k * 32;                                          \
      __m512i b0 = MODE == 2 ? bh0 : _mm512_load_si512(b);                    \
      __m512i b1 = MODE == 2 ? bh1 : _mm512_load_si512(b + 64);               \
      _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) {                   \
        __m512i a = MODE == 1 ? ah : _mm512_set1_epi32(                       \
            *(const int32_t *)(const void *)(A + r * lda + k));               \
        c[2 * r] = _mm512_dpbusd_epi32(c[2 * r], a, b0);                      \
        c[2 * r + 1] = _mm512_dpbusd_epi32(c[2 * r + 1], a, b1);              \
      }                                                                       \
    }                                                                         \
    for (int r = 0; r < 8; r++) {                                             \
      _mm512_storeu_si512(C + 32 * r, c[2 * r]);                              \
      _mm512_storeu_si512(C + 32 * r + 16, c[2 * r + 1]);                     \
    }                                                                         \
  }
KERN(k_step1, 0, "GCC unroll 1")
KERN(k_step2, 0, "GCC unroll 2")
KERN(k_noA, 1, "GCC unroll 2")
KERN(k_noB, 2, "GCC unroll 2")

// 4 rows x 16 columns of B -> 16 quads (the library's pack_vnni_epi8)
static inline void blk(const int8_t *s, long ldb, int8_t *o) {
  __m128i r0 = _mm_loadu_si128((const __m128i *)(const void *)s);
  __m128i r1 = _mm_loadu_si128((const __m128i *)(const void *)(s + ldb));
  __m128i r2 = _mm_loadu_si128((const __m128i *)(const void *)(s + 2 * ldb));
  __m128i r3 = _mm_loadu_si128((const __m128i *)(const void *)(s + 3 * ldb));
  __m128i a = _mm_unpacklo_epi8(r0, r1), b = _mm_unpackhi_epi8(r0, r1);
  __m128i c = _mm_unpacklo_epi8(r2, r3), d = _mm_unpackhi_epi8(r2, r3);
  __m128i *out = (__m128i *)(void *)o;
  _mm_storeu_si128(out, _mm_unpacklo_epi16(a, c));
  _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(a, c));
  _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(b, d));
  _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(b, d));
}

static void pack_panel(const int8_t *B, long N, long K, int8_t *P, long nc) {
  for (long jc = 0; jc < N; jc += nc)
    for (long j = jc; j < jc + nc; j += 32)
      for (long k = 0; k < K; k += 4) {
        blk(B + k * N + j, N, P + j * K + k * 32);
        blk(B + k * N + j + 16, N, P + j * K + k * 32 + 64);
      }
}

static void pack_korder(const int8_t *B, long N, long K, int8_t *P, long nc) {
  for (long jc = 0; jc < N; jc += nc)
    for (long k = 0; k < K; k += 4)
      for (long j = jc; j < jc + nc; j += 32) {
        blk(B + k * N + j, N, P + j * K + k * 32);
        blk(B + k * N + j + 16, N, P + j * K + k * 32 + 64);
      }
}

typedef void (*kern_fn)(const uint8_t *, long, const int8_t *, int32_t *,
                        long);

int main(int argc, char **argv) {
  long K = argc > 1 ? atol(argv[1]) : 256;
  int R = argc > 2 ? atoi(argv[2]) : 15;
  if (K < 8 || K % 8) {
    fprintf(stderr, "K must be a positive multiple of 8\n");
    return 2;
  }
  long reps = (2000 * 256) / K + 1, it = 20000, N = K < 512 ? 512 : K;
  uint8_t *A = aligned_alloc(64, 8 * K);
  int8_t *Bp = aligned_alloc(64, 32 * K);
  int32_t *C = aligned_alloc(64, 8 * 32 * 4);
  int8_t *B = aligned_alloc(64, N * N), *P = aligned_alloc(64, N * N);
  int8_t *Q = aligned_alloc(64, N * N);
  for (long i = 0; i < 8 * K; i++) A[i] = (uint8_t)(i * 7);
  for (long i = 0; i < 32 * K; i++) Bp[i] = (int8_t)(i * 3);
  for (long i = 0; i < N * N; i++) B[i] = (int8_t)(i * 5 + i / 7);
  memset(C, 0, 8 * 32 * 4);
  kern_fn f[4] = {k_step1, k_step2, k_noA, k_noB};
  const char *nm[4] = {"step1", "step2", "noA", "noB"};
  double best[7];
  for (int i = 0; i < 7; i++) best[i] = 1e30;
  for (int r = 0; r < R; r++) {
    double t = now();
    peak(it, _mm512_set1_epi32(r), _mm512_set1_epi32(3));
    t = now() - t;
    if (t < best[4]) best[4] = t;
    for (int v = 0; v < 4; v++) {
      t = now();
      for (long i = 0; i < reps; i++) f[v](A, K, Bp, C, K);
      t = now() - t;
      if (t < best[v]) best[v] = t;
    }
    t = now();
    pack_panel(B, N, N, P, 512);
    t = now() - t;
    if (t < best[5]) best[5] = t;
    t = now();
    pack_korder(B, N, N, Q, 512);
    t = now() - t;
    if (t < best[6]) best[6] = t;
  }
  double pk = it * 16 * 128.0 / best[4];
  printf("vpdpbusd peak %.1f GOP/s; 8 x 32 tile, K = %ld:\n", pk / 1e9, K);
  for (int v = 0; v < 4; v++) {
    double g = reps * 2.0 * 8 * 32 * K / best[v];
    printf("  %-6s %7.1f GOP/s  %5.1f%% of peak\n", nm[v], g / 1e9,
           100 * g / pk);
  }
  printf("packing B %ld x %ld (blocks of 512 columns): panel order %.3f ms, "
         "k order %.3f ms (same bytes: %s); a %ld^3 GEMM at the peak: "
         "%.3f ms\n", N, N, best[5] * 1e3, best[6] * 1e3,
         memcmp(P, Q, N * N) ? "NO" : "yes", N, 2.0 * N * N * N / pk * 1e3);
  free(A); free(Bp); free(C); free(B); free(P); free(Q);
  return sink & 0;
}
