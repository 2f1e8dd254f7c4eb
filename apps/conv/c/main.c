/* A C program using conv.h: Halide's layer and an odd-sized one, checked
 * against a naive loop nest (small-integer data: exact). */
#include <stdio.h>
#include <stdlib.h>

#include "conv.h"

static int check(int N, int H, int W, int IC, int OC)
{
    size_t ni = (size_t)N * (H + 2) * (W + 2) * IC;
    size_t nw = (size_t)9 * IC * OC, no = (size_t)N * H * W * OC;
    float *inp = malloc(ni * sizeof *inp), *wt = malloc(nw * sizeof *wt);
    float *bias = malloc((size_t)OC * sizeof *bias);
    float *out = malloc(no * sizeof *out);
    int bad = 0;
    if (!inp || !wt || !bias || !out) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < ni; i++)
        inp[i] = (float)((int)((i * 37 + i / 5) % 7) - 3);
    for (size_t i = 0; i < nw; i++)
        wt[i] = (float)((int)(i * 5 % 7) - 3);
    for (int o = 0; o < OC; o++) bias[o] = (float)(o % 5 - 2);
    conv(N, H, W, IC, OC, inp, wt, bias, out);
    for (int n = 0; n < N; n++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                for (int o = 0; o < OC; o++) {
                    float acc = bias[o];
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++)
                            for (int c = 0; c < IC; c++)
                                acc += inp[(((size_t)n * (H + 2) + y + ky)
                                            * (W + 2) + x + kx) * IC + c]
                                       * wt[(((size_t)ky * 3 + kx) * IC + c)
                                            * OC + o];
                    float want = acc > 0 ? acc : 0;
                    if (out[(((size_t)n * H + y) * W + x) * OC + o] != want)
                        bad++;
                }
    printf("conv %dx%dx%dx%dx%d (%s): %s\n", N, H, W, IC, OC, conv_isa(),
           bad ? "WRONG" : "equal to the naive loop nest");
    free(inp); free(wt); free(bias); free(out);
    return bad != 0;
}

int main(void)
{
    if (!conv_isa()) {
        fprintf(stderr, "this CPU has neither AVX2+FMA nor AVX-512F\n");
        return 2;
    }
    return check(5, 80, 100, 128, 128) | check(2, 3, 13, 7, 21);
}
