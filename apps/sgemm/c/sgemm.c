/* Run-time dispatch between the generated kernels (sgemm_kernels.c):
 * the choice of kernel by CPU features, and, for beta == 0 (BLAS: C is
 * not read), C zeroed, the C += A @ B kernel, then C scaled by alpha. */
#include <stddef.h>

#include "sgemm.h"
#include "sgemm_kernels.h"

const char *sgemm_isa(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return "avx512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "avx2";
    return NULL;
}

/* no cached answer: a static flag written on first use would be a data
   race between threads calling sgemm; the check itself is a load */
static int has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
}

int sgemm(int_fast32_t M, int_fast32_t N, int_fast32_t K,
          const float *A, const float *B, float *C)
{
    /* the kernels allocate B's packed panels on the heap: they return
       exo_hl's status */
    if (has_avx512())
        return sgemm_avx512(NULL, M, N, K, A, B, C);
    return sgemm_avx2(NULL, M, N, K, A, B, C);
}

int sgemm_alpha_beta(int_fast32_t M, int_fast32_t N, int_fast32_t K,
                     float alpha, float beta,
                     const float *A, const float *B, float *C)
{
    if (beta == 0.0f) {
        /* BLAS: beta = 0 does not read C (0 * NaN is NaN): C = alpha T,
           T the product the C += A @ B kernel adds to a zeroed C (the
           kernel the alpha/beta one calls on its zeroed T: the same T) */
        size_t n = (size_t)M * (size_t)N;
        for (size_t i = 0; i < n; i++)
            C[i] = 0.0f;
        int status = sgemm(M, N, K, A, B, C);
        if (status || alpha == 1.0f)
            return status;
        for (size_t i = 0; i < n; i++)
            C[i] = alpha * C[i];
        return 0;
    }
    /* the kernels allocate T on the heap: they return exo_hl's status */
    if (has_avx512())
        return sgemm_alpha_beta_avx512(NULL, M, N, K, &alpha, &beta, A, B, C);
    return sgemm_alpha_beta_avx2(NULL, M, N, K, &alpha, &beta, A, B, C);
}
