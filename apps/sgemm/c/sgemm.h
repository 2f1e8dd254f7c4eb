/* SGEMM for C programs: row-major float matrices, any sizes >= 1.
 *
 *   sgemm(M, N, K, A, B, C):                  C += A @ B
 *     (returns 0, or nonzero when a packed panel of B could not be
 *     allocated: 1 its size overflows size_t, 2 out of memory; C then
 *     holds the k blocks done before, or is unchanged)
 *   sgemm_alpha_beta(M, N, K, a, b, A, B, C): C = a * A @ B + b * C
 *     (returns 0, or nonzero, C unchanged, when its M x N temporary could
 *     not be allocated); with b == 0, as in BLAS, C is not read: C =
 *     a * (A @ B), NaN or Inf in C on input do not reach it (C is zeroed,
 *     the C += A @ B kernel runs, then C is scaled by a: on a nonzero
 *     status C holds the k blocks done, as for sgemm)
 *
 * A is M x K, B is K x N, C is M x N, dense (leading dimensions K, N, N);
 * C must not overlap A or B. Each call runs the AVX-512 kernel on CPUs
 * with AVX-512F, else the AVX2 one (sgemm_isa() says which). Build with
 * sgemm.c and the generated sgemm_kernels.c (exo-hl compile
 * apps/sgemm/kernels.py --stem sgemm_kernels), with -fopenmp to use all
 * cores.
 */
#ifndef EXO_HL_SGEMM_H
#define EXO_HL_SGEMM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int sgemm(int_fast32_t M, int_fast32_t N, int_fast32_t K,
          const float *A, const float *B, float *C);

int sgemm_alpha_beta(int_fast32_t M, int_fast32_t N, int_fast32_t K,
                     float alpha, float beta,
                     const float *A, const float *B, float *C);

/* "avx512" or "avx2": the kernel this CPU runs; NULL if it has neither */
const char *sgemm_isa(void);

#ifdef __cplusplus
}
#endif

#endif  /* EXO_HL_SGEMM_H */
