/* Drop-in use of exo_hl-generated C: call sgemm and check it naively. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemm_kernels.h"

int main(void) {
    const int_fast32_t M = 37, N = 29, K = 45;
    float *A = malloc(sizeof(float) * M * K);
    float *B = malloc(sizeof(float) * K * N);
    float *C = malloc(sizeof(float) * M * N);
    float *ref = malloc(sizeof(float) * M * N);
    if (!A || !B || !C || !ref) return 2;
    for (int_fast32_t i = 0; i < M * K; i++) A[i] = (float)((i * 7) % 13) - 6;
    for (int_fast32_t i = 0; i < K * N; i++) B[i] = (float)((i * 5) % 11) - 5;
    for (int_fast32_t i = 0; i < M * N; i++) C[i] = ref[i] = (float)(i % 3);

    gemm_kernels_Context ctx = {0};
    sgemm(&ctx, M, N, K, A, B, C);

    for (int_fast32_t i = 0; i < M; i++)
        for (int_fast32_t j = 0; j < N; j++)
            for (int_fast32_t k = 0; k < K; k++)
                ref[i * N + j] += A[i * K + k] * B[k * N + j];
    int bad = 0;
    for (int_fast32_t i = 0; i < M * N; i++)
        if (fabsf(C[i] - ref[i]) > 1e-3f * (1.0f + fabsf(ref[i]))) bad++;
    free(A); free(B); free(C); free(ref);
    if (bad) {
        printf("MISMATCH in %d elements\n", bad);
        return 1;
    }
    printf("OK\n");
    return 0;
}
