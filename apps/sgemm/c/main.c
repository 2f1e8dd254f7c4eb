/* A C program using the SGEMM entry points: checks both operations
 * against a naive loop on small-integer data (exact in float) and prints
 * one line per shape; exit status 1 on a mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sgemm.h"

static float small_int(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((int)((*s >> 16) % 7u) - 3);
}

static int check(int M, int N, int K, unsigned seed)
{
    float *A = malloc(sizeof(float) * (size_t)M * (size_t)K);
    float *B = malloc(sizeof(float) * (size_t)K * (size_t)N);
    float *C = malloc(sizeof(float) * (size_t)M * (size_t)N);
    float *D = malloc(sizeof(float) * (size_t)M * (size_t)N);
    float *W = malloc(sizeof(float) * (size_t)M * (size_t)N);
    float *C0 = malloc(sizeof(float) * (size_t)M * (size_t)N);
    int bad = 0;
    for (int i = 0; i < M * K; i++) A[i] = small_int(&seed);
    for (int i = 0; i < K * N; i++) B[i] = small_int(&seed);
    for (int i = 0; i < M * N; i++) C[i] = D[i] = C0[i] = small_int(&seed);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++)
                s += A[i * K + k] * B[k * N + j];
            W[i * N + j] = s;
        }
    if (sgemm(M, N, K, A, B, C))                   /* C += A @ B */
        bad = 1;
    if (sgemm_alpha_beta(M, N, K, 2.0f, -1.0f, A, B, D)) /* D = 2AB - D */
        bad = 1;
    for (int i = 0; i < M * N; i++)
        if (C[i] != C0[i] + W[i] || D[i] != 2.0f * W[i] - C0[i])
            bad = 1;
    for (int i = 0; i < M * N; i++)             /* beta = 0: C not read */
        D[i] = i % 2 ? NAN : -INFINITY;
    if (sgemm_alpha_beta(M, N, K, 3.0f, 0.0f, A, B, D))  /* D = 3AB */
        bad = 1;
    for (int i = 0; i < M * N; i++)
        if (D[i] != 3.0f * W[i])
            bad = 1;
    printf("%dx%dx%d %s\n", M, N, K, bad ? "MISMATCH" : "ok");
    free(A); free(B); free(C); free(D); free(W); free(C0);
    return bad;
}

int main(void)
{
    static const int shapes[][3] = {
        {1, 1, 1}, {7, 7, 7}, {6, 16, 64}, {13, 37, 300}, {127, 64, 300},
        {31, 129, 257}, {64, 64, 64}};
    int bad = 0;
    const char *isa = sgemm_isa();
    printf("isa %s\n", isa ? isa : "none");
    if (!isa)
        return 2;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        bad |= check(shapes[s][0], shapes[s][1], shapes[s][2], 7u + (unsigned)s);
    return bad;
}
