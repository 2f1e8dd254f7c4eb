/* The conv layer for C programs: out = relu(bias + conv3x3(inp, wt)),
 * stride 1, no padding, f32, channels innermost:
 *
 *   inp[N][H + 2][W + 2][IC], wt[3][3][IC][OC], bias[OC], out[N][H][W][OC]
 *
 * (H x W is the output size), dense, any sizes >= 1; out must not overlap
 * the inputs. Each call runs the AVX-512 kernel on CPUs with AVX-512F,
 * else the AVX2 one (conv_isa() says which), and the size-specialized
 * kernel for Halide's layer (N=5, H=80, W=100, IC=OC=128). Build with
 * conv.c and the generated conv_kernels.c (exo-hl compile
 * apps/conv/kernels.py --stem conv_kernels), with -fopenmp to use all
 * cores.
 */
#ifndef EXO_HL_CONV_H
#define EXO_HL_CONV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void conv(int_fast32_t N, int_fast32_t H, int_fast32_t W, int_fast32_t IC,
          int_fast32_t OC, const float *inp, const float *wt,
          const float *bias, float *out);

/* "avx512" or "avx2": the kernel this CPU runs; NULL if it has neither */
const char *conv_isa(void);

#ifdef __cplusplus
}
#endif

#endif  /* EXO_HL_CONV_H */
