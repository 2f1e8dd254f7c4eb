// Harness (a benchmark, not a test): loop structures of the u8s8 GEMM, the
// 8 x 32 vpdpbusd tile of schedule.py written by hand, beside MKL's
// cblas_gemm_s8u8s32 in the same process (README, "session 8").
//
//   gcc -O3 -march=native -fopenmp apps/gemm_lowp/probe_loops.c -o /tmp/probe -ldl
//   KMP_BLOCKTIME=0 python apps/common/no_amx.py /tmp/probe N THREADS ROUNDS VARIANT...
//
// VARIANT = kind[,MC[,NC[,PF]]] (MC row block, NC column block, PF prefetch
// distance in k steps, negative: cut at each 256-k block as the schedule):
//   cur   the old schedule: all of B packed, row blocks, panels, row tiles
//   nc    column blocks of NC: each K x NC block packed, then the row blocks
//   ncp   all of B packed first, the compute in column blocks
//   nci   as nc, the row tiles outside the panels (the new schedule)
//   ncf   as nci, each block packed into its own part of the buffer
//   cols  threads: each packs and computes its own N / T columns
//   rowsP threads: each packs all of B (per NC block) for its own rows
// With -DGEN and the C of exo_hl's kernels (renamed g_old/g_new, threaded
// gt_old/gt_new/gt_new1) linked in: gold, gnew, told, tnew, tnew1.
// One thread: best thread CPU time; more: best wall time (0.2 s pause
// before each sample so the other runtime's threads stop spinning).
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <unistd.h>
#include <time.h>
static int TT;
static double now(void) { if (TT > 1) return omp_get_wtime(); struct timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }

typedef void (*mklfn)(int, int, int, int, int, int, int, float, const void *,
                      int, int8_t, const void *, int, int8_t, float, void *,
                      int, const int32_t *);
typedef void (*mklthr)(int);

static int PF = 8, CUT = 0;

// C[8 x 32] += A[8 x K] (rows lda apart) * Bp (K/4 steps of 128 bytes)
static inline void kern(const uint8_t *A, long lda, const int8_t *Bp,
                        int32_t *C, long ldc, long K) {
  __m512i c00 = _mm512_loadu_si512(C + 0 * ldc), c01 = _mm512_loadu_si512(C + 0 * ldc + 16);
  __m512i c10 = _mm512_loadu_si512(C + 1 * ldc), c11 = _mm512_loadu_si512(C + 1 * ldc + 16);
  __m512i c20 = _mm512_loadu_si512(C + 2 * ldc), c21 = _mm512_loadu_si512(C + 2 * ldc + 16);
  __m512i c30 = _mm512_loadu_si512(C + 3 * ldc), c31 = _mm512_loadu_si512(C + 3 * ldc + 16);
  __m512i c40 = _mm512_loadu_si512(C + 4 * ldc), c41 = _mm512_loadu_si512(C + 4 * ldc + 16);
  __m512i c50 = _mm512_loadu_si512(C + 5 * ldc), c51 = _mm512_loadu_si512(C + 5 * ldc + 16);
  __m512i c60 = _mm512_loadu_si512(C + 6 * ldc), c61 = _mm512_loadu_si512(C + 6 * ldc + 16);
  __m512i c70 = _mm512_loadu_si512(C + 7 * ldc), c71 = _mm512_loadu_si512(C + 7 * ldc + 16);
  const long pf = PF * 128;
  for (long k = 0; k < K; k += 4) {
    const int8_t *b = Bp + k * 32;
    if (!CUT || ((k >> 2) & 63) < 64 - PF) {
    _mm_prefetch((const char *)b + pf, _MM_HINT_T0);
    _mm_prefetch((const char *)b + pf + 64, _MM_HINT_T0);
    }
    __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 64);
    __m512i a;
#define ROW(r, x0, x1) a = _mm512_set1_epi32(*(const int32_t *)(A + r * lda + k)); \
    x0 = _mm512_dpbusd_epi32(x0, a, b0); x1 = _mm512_dpbusd_epi32(x1, a, b1);
    ROW(0, c00, c01) ROW(1, c10, c11) ROW(2, c20, c21) ROW(3, c30, c31)
    ROW(4, c40, c41) ROW(5, c50, c51) ROW(6, c60, c61) ROW(7, c70, c71)
  }
  _mm512_storeu_si512(C + 0 * ldc, c00); _mm512_storeu_si512(C + 0 * ldc + 16, c01);
  _mm512_storeu_si512(C + 1 * ldc, c10); _mm512_storeu_si512(C + 1 * ldc + 16, c11);
  _mm512_storeu_si512(C + 2 * ldc, c20); _mm512_storeu_si512(C + 2 * ldc + 16, c21);
  _mm512_storeu_si512(C + 3 * ldc, c30); _mm512_storeu_si512(C + 3 * ldc + 16, c31);
  _mm512_storeu_si512(C + 4 * ldc, c40); _mm512_storeu_si512(C + 4 * ldc + 16, c41);
  _mm512_storeu_si512(C + 5 * ldc, c50); _mm512_storeu_si512(C + 5 * ldc + 16, c51);
  _mm512_storeu_si512(C + 6 * ldc, c60); _mm512_storeu_si512(C + 6 * ldc + 16, c61);
  _mm512_storeu_si512(C + 7 * ldc, c70); _mm512_storeu_si512(C + 7 * ldc + 16, c71);
}

// pack the K x 32 panel of B starting at column j0 into dst (K/4 x 128 B)
static void pack_panel(const int8_t *B, long ldb, long K, long j0, int8_t *dst) {
  for (long k = 0; k < K; k += 4) {
    for (int h = 0; h < 2; h++) {
      const int8_t *s = B + k * ldb + j0 + 16 * h;
      __m128i r0 = _mm_loadu_si128((const __m128i *)(s));
      __m128i r1 = _mm_loadu_si128((const __m128i *)(s + ldb));
      __m128i r2 = _mm_loadu_si128((const __m128i *)(s + 2 * ldb));
      __m128i r3 = _mm_loadu_si128((const __m128i *)(s + 3 * ldb));
      __m128i a = _mm_unpacklo_epi8(r0, r1), b = _mm_unpackhi_epi8(r0, r1);
      __m128i c = _mm_unpacklo_epi8(r2, r3), d = _mm_unpackhi_epi8(r2, r3);
      int8_t *o = dst + k * 32 + 64 * h;
      _mm_storeu_si128((__m128i *)(o), _mm_unpacklo_epi16(a, c));
      _mm_storeu_si128((__m128i *)(o + 16), _mm_unpackhi_epi16(a, c));
      _mm_storeu_si128((__m128i *)(o + 32), _mm_unpacklo_epi16(b, d));
      _mm_storeu_si128((__m128i *)(o + 48), _mm_unpackhi_epi16(b, d));
    }
  }
}

static int8_t *Bp;  // all of B packed, or one NC block

// variant "cur": pack all; rows blocks of MC in parallel; panels; tiles
static void v_cur(long n, const uint8_t *A, const int8_t *B, int32_t *C, long MC) {
  long M = n, N = n, K = n;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (long jo = 0; jo < N / 32; jo++) pack_panel(B, N, K, 32 * jo, Bp + jo * K * 32);
#pragma omp for schedule(static)
    for (long im = 0; im < M / MC; im++)
      for (long jo = 0; jo < N / 32; jo++)
        for (long io = 0; io < MC / 8; io++)
          kern(A + (im * MC + io * 8) * K, K, Bp + jo * K * 32,
               C + (im * MC + io * 8) * N + jo * 32, N, K);
  }
}

// variant "nc": column blocks of NC: pack the K x NC block (parallel), then
// the row blocks (parallel) over its panels
static void v_nc(long n, const uint8_t *A, const int8_t *B, int32_t *C, long MC, long NC) {
  long M = n, N = n, K = n;
#pragma omp parallel
  for (long jc = 0; jc < N; jc += NC) {
#pragma omp for schedule(static)
    for (long jo = 0; jo < NC / 32; jo++) pack_panel(B, N, K, jc + 32 * jo, Bp + jo * K * 32);
#pragma omp for schedule(static)
    for (long im = 0; im < M / MC; im++)
      for (long jo = 0; jo < NC / 32; jo++)
        for (long io = 0; io < MC / 8; io++)
          kern(A + (im * MC + io * 8) * K, K, Bp + jo * K * 32,
               C + (im * MC + io * 8) * N + jc + jo * 32, N, K);
  }
}

// variant "ncp": pack all first, then column blocks of the compute
static void v_ncp(long n, const uint8_t *A, const int8_t *B, int32_t *C, long MC, long NC) {
  long M = n, N = n, K = n;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (long jo = 0; jo < N / 32; jo++) pack_panel(B, N, K, 32 * jo, Bp + jo * K * 32);
    for (long jc = 0; jc < N; jc += NC) {
#pragma omp for schedule(static)
    for (long im = 0; im < M / MC; im++)
      for (long jo = jc / 32; jo < (jc + NC) / 32; jo++)
        for (long io = 0; io < MC / 8; io++)
          kern(A + (im * MC + io * 8) * K, K, Bp + jo * K * 32,
               C + (im * MC + io * 8) * N + jo * 32, N, K);
    }
  }
}

// variant "nci": as nc, the row tiles outside the panels (A's 8 x K in L1)
static int FRESH = 0;
static void v_nci(long n, const uint8_t *A, const int8_t *B, int32_t *C, long MC, long NC) {
  long M = n, N = n, K = n;
  int8_t *Bp0 = Bp;
#pragma omp parallel
  for (long jc = 0; jc < N; jc += NC) {
    int8_t *Bp = Bp0 + (FRESH ? jc * K : 0);
#pragma omp for schedule(static)
    for (long jo = 0; jo < NC / 32; jo++) pack_panel(B, N, K, jc + 32 * jo, Bp + jo * K * 32);
#pragma omp for schedule(static)
    for (long im = 0; im < M / MC; im++)
      for (long io = 0; io < MC / 8; io++)
        for (long jo = 0; jo < NC / 32; jo++)
          kern(A + (im * MC + io * 8) * K, K, Bp + jo * K * 32,
               C + (im * MC + io * 8) * N + jc + jo * 32, N, K);
  }
}

// variant "cols": each thread owns N / T columns, packs them and computes
// all rows for them (no barrier), in NC blocks
static void v_cols(long n, const uint8_t *A, const int8_t *B, int32_t *C, long MC, long NC) {
  long M = n, N = n, K = n;
#pragma omp parallel
  {
    int T = omp_get_num_threads(), t = omp_get_thread_num();
    long w = N / T, j0 = t * w;
    int8_t *bp = Bp + j0 * K;
    for (long jc = j0; jc < j0 + w; jc += NC) {
      long nc = NC < j0 + w - jc ? NC : j0 + w - jc;
      for (long jo = 0; jo < nc / 32; jo++) pack_panel(B, N, K, jc + 32 * jo, bp + jo * K * 32);
      for (long im = 0; im < M / MC; im++)
        for (long jo = 0; jo < nc / 32; jo++)
          for (long io = 0; io < MC / 8; io++)
            kern(A + (im * MC + io * 8) * K, K, bp + jo * K * 32,
                 C + (im * MC + io * 8) * N + jc + jo * 32, N, K);
    }
  }
}

// variant "rowsP": each thread its rows (M / T), packs ALL of B itself in NC
// blocks (duplicated packing, no barrier, no cross-core B)
static void v_rowsP(long n, const uint8_t *A, const int8_t *B, int32_t *C, long MC, long NC) {
  long M = n, N = n, K = n;
#pragma omp parallel
  {
    int T = omp_get_num_threads(), t = omp_get_thread_num();
    long h = M / T, i0 = t * h;
    int8_t *bp = Bp + (long)t * K * NC;
    for (long jc = 0; jc < N; jc += NC) {
      for (long jo = 0; jo < NC / 32; jo++) pack_panel(B, N, K, jc + 32 * jo, bp + jo * K * 32);
      for (long im = i0; im < i0 + h; im += MC)
        for (long jo = 0; jo < NC / 32; jo++)
          for (long io = 0; io < MC / 8; io++)
            kern(A + (im + io * 8) * K, K, bp + jo * K * 32,
                 C + (im + io * 8) * N + jc + jo * 32, N, K);
    }
  }
}

#ifdef GEN
int g_old(void *, int_fast32_t, int_fast32_t, int_fast32_t, const uint8_t *, const int8_t *, int32_t *);
int g_new(void *, int_fast32_t, int_fast32_t, int_fast32_t, const uint8_t *, const int8_t *, int32_t *);
int gt_old(void *, int_fast32_t, int_fast32_t, int_fast32_t, const uint8_t *, const int8_t *, int32_t *);
int gt_new(void *, int_fast32_t, int_fast32_t, int_fast32_t, const uint8_t *, const int8_t *, int32_t *);
int gt_new1(void *, int_fast32_t, int_fast32_t, int_fast32_t, const uint8_t *, const int8_t *, int32_t *);
#endif
int main(int argc, char **argv) {
  long n = atol(argv[1]);
  int T = atoi(argv[2]);
  int rounds = atoi(argv[3]);
  omp_set_num_threads(T); TT = T;
  void *lib = dlopen("/work/venv/lib/libmkl_rt.so.3", RTLD_NOW | RTLD_GLOBAL);
  mklfn mkl = lib ? (mklfn)dlsym(lib, "cblas_gemm_s8u8s32") : 0;
  mklthr mth = lib ? (mklthr)dlsym(lib, "MKL_Set_Num_Threads") : 0;
  if (mth) mth(T);
  uint8_t *A = aligned_alloc(64, n * n);
  int8_t *B = aligned_alloc(64, n * n);
  int32_t *C = aligned_alloc(64, 4 * n * n), *C2 = aligned_alloc(64, 4 * n * n);
  Bp = aligned_alloc(64, 2 * n * n + 4096);
  for (long i = 0; i < n * n; i++) { A[i] = rand() & 255; B[i] = rand() & 255; }
  int nv = argc - 4;
  double best[32], bm = 1e30;
  for (int v = 0; v < nv; v++) best[v] = 1e30;
  for (int r = 0; r < rounds; r++) {
    if (mkl) {
      if (T > 1) usleep(200000);
      memset(C, 0, 4 * n * n);
      double t0 = now();
      mkl(101, 111, 111, 173, n, n, n, 1.0f, A, n, 0, B, n, 0, 1.0f, C, n, (int32_t[]){0});
      double t = now() - t0;
      if (t < bm) bm = t;
    }
    for (int v = 0; v < nv; v++) {
      char kind[32]; long MC = 64, NC = 0; int pf = 8;
      sscanf(argv[4 + v], "%31[^,],%ld,%ld,%d", kind, &MC, &NC, &pf);
      PF = pf < 0 ? -pf : pf; CUT = pf < 0;
      if (NC == 0 || NC > n) NC = n;
      memset(C2, 0, 4 * n * n);
      if (T > 1) usleep(200000);
      double t0 = now();
      if (!strcmp(kind, "cur")) v_cur(n, A, B, C2, MC);
      else if (!strcmp(kind, "nc")) v_nc(n, A, B, C2, MC, NC);
      else if (!strcmp(kind, "ncp")) v_ncp(n, A, B, C2, MC, NC);
#ifdef GEN
      else if (!strcmp(kind, "gold")) { char cx; g_old(&cx, n, n, n, A, B, C2); }
      else if (!strcmp(kind, "gnew")) { char cx; g_new(&cx, n, n, n, A, B, C2); }
      else if (!strcmp(kind, "told")) { char cx; gt_old(&cx, n, n, n, A, B, C2); }
      else if (!strcmp(kind, "tnew")) { char cx; gt_new(&cx, n, n, n, A, B, C2); }
      else if (!strcmp(kind, "tnew1")) { char cx; gt_new1(&cx, n, n, n, A, B, C2); }
#endif
      else if (!strcmp(kind, "ncf")) { FRESH = 1; v_nci(n, A, B, C2, MC, NC); FRESH = 0; }
      else if (!strcmp(kind, "nci")) v_nci(n, A, B, C2, MC, NC);
      else if (!strcmp(kind, "cols")) v_cols(n, A, B, C2, MC, NC);
      else if (!strcmp(kind, "rowsP")) v_rowsP(n, A, B, C2, MC, NC);
      else { fprintf(stderr, "unknown variant %s\n", kind); return 2; }
      double t = now() - t0;
      if (t < best[v]) best[v] = t;
      if (r == 0 && mkl && memcmp(C, C2, 4 * n * n)) printf("MISMATCH %s\n", argv[4 + v]);
    }
  }
  double ops = 2.0 * n * n * n;
  printf("n=%ld T=%d mkl %.0f", n, T, ops / bm / 1e9);
  for (int v = 0; v < nv; v++) printf(" | %s %.0f (%.2f)", argv[4 + v], ops / best[v] / 1e9, bm / best[v]);
  printf("\n");
  return 0;
}
