/* Run-time dispatch between the generated kernels (conv_kernels.c): no
 * arithmetic here, only the choice of kernel by CPU features and sizes. */
#include <stddef.h>

#include "conv.h"
#include "conv_kernels.h"

const char *conv_isa(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return "avx512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "avx2";
    return NULL;
}

/* no cached answer: a static flag written on first use would be a data
   race between threads calling conv; the check itself is a load */
static int has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
}

void conv(int_fast32_t N, int_fast32_t H, int_fast32_t W, int_fast32_t IC,
          int_fast32_t OC, const float *inp, const float *wt,
          const float *bias, float *out)
{
    int halide = N == 5 && H == 80 && W == 100 && IC == 128 && OC == 128;
    if (has_avx512()) {
        if (halide)
            conv_halide_avx512(NULL, inp, wt, bias, out);
        else
            conv_avx512(NULL, N, H, W, IC, OC, inp, wt, bias, out);
    } else {
        if (halide)
            conv_halide_avx2(NULL, inp, wt, bias, out);
        else
            conv_avx2(NULL, N, H, W, IC, OC, inp, wt, bias, out);
    }
}
