/* Run-time dispatch between the generated kernels (sgemm_kernels.c):
 * no arithmetic here, only the choice of kernel by CPU features. */
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
    /* the kernels allocate T on the heap: they return exo_hl's status */
    if (has_avx512())
        return sgemm_alpha_beta_avx512(NULL, M, N, K, &alpha, &beta, A, B, C);
    return sgemm_alpha_beta_avx2(NULL, M, N, K, &alpha, &beta, A, B, C);
}
