/* exo_hl's emulation of the AMX tile instructions (compile(emulate=True) on
 * a CPU without AMX), included by the shim immintrin.h when the build
 * defines EXO_HL_EMULATE_AMX.
 *
 * State per thread, as the tile registers are: the configuration (palette,
 * rows and bytes per row of each tile) and eight tiles of 16 x 64 bytes.
 * Semantics follow the Intel SDM's pseudocode:
 *   - ldtilecfg with palette 0 releases the tiles; with palette 1 it
 *     checks the configuration (rows <= 16, bytes per row <= 64, both zero
 *     or neither, reserved bytes zero) and zeroes every tile;
 *   - tileloadd / tilestored move rows x colsb bytes, the load zeroes the
 *     rest of the tile; tilezero zeroes it;
 *   - tdpbusd/tdpbssd/tdpbsud/tdpbuud: dst.rows == a.rows, dst.colsb ==
 *     b.colsb, a.colsb / 4 == b.rows, three different tiles; the four byte
 *     products of a quad are summed to a dword and added, wrapping;
 *   - tdpbf16ps: products exact in f32; those of the first elements of
 *     the pairs summed in one f32 chain, those of the second in another
 *     (each from 0, in K order), then acc += first + second: the order the
 *     hardware computes in (measured on Sapphire Rapids; the SDM's
 *     pseudocode, one chain, disagrees), denormal inputs and results
 *     flushed to zero (DAZ/FTZ), round to nearest even.
 * Where the hardware raises #UD or #GP the emulation prints why and aborts.
 * One more check than the hardware: a tile read (tdp*, tilestored) after
 * an ldtilecfg zeroed it and before anything wrote it aborts, because a
 * schedule that keeps a tile buffer live across a configuration change is
 * wrong (the IR believes the tile kept its value).
 */
#ifndef EXO_HL_AMX_EMULATION_H
#define EXO_HL_AMX_EMULATION_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int palette;
    uint16_t colsb[8];
    uint8_t rows[8];
    int valid[8];
    unsigned char data[8][16 * 64];
} exo_hl_emu_amx_state;

static _Thread_local exo_hl_emu_amx_state exo_hl_emu_amx;

static inline void exo_hl_emu_amx_fail(const char *what) {
    fprintf(stderr, "exo_hl AMX emulation: %s\n", what);
    abort();
}

static inline void exo_hl_emu_tile_loadconfig(const void *config) {
    const unsigned char *c = (const unsigned char *)config;
    exo_hl_emu_amx_state *s = &exo_hl_emu_amx;
    if (c[0] == 0) {                      /* palette 0: release */
        memset(s, 0, sizeof *s);
        return;
    }
    if (c[0] != 1)
        exo_hl_emu_amx_fail("ldtilecfg: palette other than 0, 1 (#GP)");
    for (int i = 1; i < 16; i++)
        if (c[i])
            exo_hl_emu_amx_fail("ldtilecfg: reserved byte not zero (#GP)");
    for (int i = 32; i < 48; i++)
        if (c[i])
            exo_hl_emu_amx_fail("ldtilecfg: colsb of a tile > 7 (#GP)");
    for (int i = 56; i < 64; i++)
        if (c[i])
            exo_hl_emu_amx_fail("ldtilecfg: rows of a tile > 7 (#GP)");
    for (int t = 0; t < 8; t++) {
        uint16_t cb;
        memcpy(&cb, c + 16 + 2 * t, 2);
        uint8_t r = c[48 + t];
        if (r > 16 || cb > 64)
            exo_hl_emu_amx_fail("ldtilecfg: a tile above 16 rows x 64 "
                                "bytes (#GP)");
        if ((r == 0) != (cb == 0))
            exo_hl_emu_amx_fail("ldtilecfg: a tile with rows or bytes "
                                "zero but not both (#GP)");
        s->rows[t] = r;
        s->colsb[t] = cb;
    }
    s->palette = 1;
    memset(s->data, 0, sizeof s->data);
    for (int t = 0; t < 8; t++) s->valid[t] = 0;
}

static inline void exo_hl_emu_tile_storeconfig(void *config) {
    unsigned char *c = (unsigned char *)config;
    const exo_hl_emu_amx_state *s = &exo_hl_emu_amx;
    memset(c, 0, 64);
    if (!s->palette) return;
    c[0] = 1;
    for (int t = 0; t < 8; t++) {
        memcpy(c + 16 + 2 * t, &s->colsb[t], 2);
        c[48 + t] = s->rows[t];
    }
}

static inline void exo_hl_emu_tile_check(int t, const char *insn) {
    if (t < 0 || t > 7) exo_hl_emu_amx_fail("tile number out of 0..7");
    if (!exo_hl_emu_amx.palette || exo_hl_emu_amx.rows[t] == 0) {
        fprintf(stderr, "exo_hl AMX emulation: %s on tmm%d, which is not "
                "configured (#UD)\n", insn, t);
        abort();
    }
}

static inline void exo_hl_emu_tile_read(int t, const char *insn) {
    exo_hl_emu_tile_check(t, insn);
    if (!exo_hl_emu_amx.valid[t]) {
        fprintf(stderr, "exo_hl AMX emulation: %s reads tmm%d, which no "
                "instruction wrote since ldtilecfg zeroed it (a tile buffer "
                "live across a configuration change)\n", insn, t);
        abort();
    }
}

static inline void exo_hl_emu_tile_loadd(int t, const void *base,
                                         long stride) {
    exo_hl_emu_amx_state *s = &exo_hl_emu_amx;
    exo_hl_emu_tile_check(t, "tileloadd");
    memset(s->data[t], 0, sizeof s->data[t]);
    for (int r = 0; r < s->rows[t]; r++)
        memcpy(s->data[t] + 64 * r, (const char *)base + (long)r * stride,
               s->colsb[t]);
    s->valid[t] = 1;
}

static inline void exo_hl_emu_tile_stored(int t, void *base, long stride) {
    const exo_hl_emu_amx_state *s = &exo_hl_emu_amx;
    exo_hl_emu_tile_read(t, "tilestored");
    for (int r = 0; r < s->rows[t]; r++)
        memcpy((char *)base + (long)r * stride, s->data[t] + 64 * r,
               s->colsb[t]);
}

static inline void exo_hl_emu_tile_zero(int t) {
    exo_hl_emu_tile_check(t, "tilezero");
    memset(exo_hl_emu_amx.data[t], 0, sizeof exo_hl_emu_amx.data[t]);
    exo_hl_emu_amx.valid[t] = 1;
}

/* shapes of a tdp* instruction, checked as the hardware does (#UD) */
static inline void exo_hl_emu_tile_dp_check(int c, int a, int b,
                                            const char *insn) {
    const exo_hl_emu_amx_state *s = &exo_hl_emu_amx;
    exo_hl_emu_tile_read(c, insn);
    exo_hl_emu_tile_read(a, insn);
    exo_hl_emu_tile_read(b, insn);
    if (c == a || c == b || a == b) {
        fprintf(stderr, "exo_hl AMX emulation: %s with a tile twice (#UD)\n",
                insn);
        abort();
    }
    if (s->rows[c] != s->rows[a] || s->colsb[c] != s->colsb[b] ||
        s->colsb[a] / 4 != s->rows[b] || s->colsb[a] % 4 ||
        s->colsb[c] % 4) {
        fprintf(stderr, "exo_hl AMX emulation: %s with tile shapes that do "
                "not fit (#UD)\n", insn);
        abort();
    }
}

/* int8 quads: a_signed / b_signed pick the four variants */
static inline void exo_hl_emu_tile_dpb(int c, int a, int b, int a_signed,
                                       int b_signed, const char *insn) {
    exo_hl_emu_amx_state *s = &exo_hl_emu_amx;
    exo_hl_emu_tile_dp_check(c, a, b, insn);
    int rows = s->rows[c], n = s->colsb[c] / 4, kq = s->colsb[a] / 4;
    for (int m = 0; m < rows; m++)
        for (int j = 0; j < n; j++) {
            uint32_t acc;
            memcpy(&acc, s->data[c] + 64 * m + 4 * j, 4);
            for (int k = 0; k < kq; k++) {
                int32_t quad = 0;
                for (int i = 0; i < 4; i++) {
                    unsigned char x = s->data[a][64 * m + 4 * k + i];
                    unsigned char y = s->data[b][64 * k + 4 * j + i];
                    int32_t xv = a_signed ? (int32_t)(int8_t)x : (int32_t)x;
                    int32_t yv = b_signed ? (int32_t)(int8_t)y : (int32_t)y;
                    quad += xv * yv;   /* |quad| <= 4 * 255 * 255: exact */
                }
                acc += (uint32_t)quad;
            }
            memcpy(s->data[c] + 64 * m + 4 * j, &acc, 4);
        }
}

/* bf16 -> f32 with denormals as zero */
static inline float exo_hl_emu_bf16_daz(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float exo_hl_emu_ftz(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
    memcpy(&f, &u, 4);
    return f;
}

static inline void exo_hl_emu_tile_dpbf16ps(int c, int a, int b) {
    exo_hl_emu_amx_state *s = &exo_hl_emu_amx;
    exo_hl_emu_tile_dp_check(c, a, b, "tdpbf16ps");
    int rows = s->rows[c], n = s->colsb[c] / 4, kp = s->colsb[a] / 4;
    for (int m = 0; m < rows; m++)
        for (int j = 0; j < n; j++) {
            float acc, sum[2] = {0.0f, 0.0f};
            memcpy(&acc, s->data[c] + 64 * m + 4 * j, 4);
            for (int k = 0; k < kp; k++)
                for (int i = 0; i < 2; i++) {
                    uint16_t x, y;
                    memcpy(&x, s->data[a] + 64 * m + 4 * k + 2 * i, 2);
                    memcpy(&y, s->data[b] + 64 * k + 4 * j + 2 * i, 2);
                    /* the product of two bf16 is exact in f32 */
                    float p = exo_hl_emu_bf16_daz(x) * exo_hl_emu_bf16_daz(y);
                    sum[i] = exo_hl_emu_ftz(sum[i] + p);
                }
            acc = exo_hl_emu_ftz(acc + exo_hl_emu_ftz(sum[0] + sum[1]));
            memcpy(s->data[c] + 64 * m + 4 * j, &acc, 4);
        }
}

#undef _tile_loadd
#define _tile_loadd(t, base, stride) exo_hl_emu_tile_loadd(t, base, stride)
#undef _tile_stream_loadd
#define _tile_stream_loadd(t, base, stride) \
    exo_hl_emu_tile_loadd(t, base, stride)
#undef _tile_stored
#define _tile_stored(t, base, stride) exo_hl_emu_tile_stored(t, base, stride)
#undef _tile_zero
#define _tile_zero(t) exo_hl_emu_tile_zero(t)
#define _tile_loadconfig(c) exo_hl_emu_tile_loadconfig(c)
#define _tile_storeconfig(c) exo_hl_emu_tile_storeconfig(c)
#define _tile_release() memset(&exo_hl_emu_amx, 0, sizeof exo_hl_emu_amx)
#undef _tile_dpbusd
#define _tile_dpbusd(c, a, b) exo_hl_emu_tile_dpb(c, a, b, 0, 1, "tdpbusd")
#undef _tile_dpbssd
#define _tile_dpbssd(c, a, b) exo_hl_emu_tile_dpb(c, a, b, 1, 1, "tdpbssd")
#undef _tile_dpbsud
#define _tile_dpbsud(c, a, b) exo_hl_emu_tile_dpb(c, a, b, 1, 0, "tdpbsud")
#undef _tile_dpbuud
#define _tile_dpbuud(c, a, b) exo_hl_emu_tile_dpb(c, a, b, 0, 0, "tdpbuud")
#undef _tile_dpbf16ps
#define _tile_dpbf16ps(c, a, b) exo_hl_emu_tile_dpbf16ps(c, a, b)

#endif /* EXO_HL_AMX_EMULATION_H */
