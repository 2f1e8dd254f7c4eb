/* exo_hl's x86 emulation layer, used by compile(emulate=True).
 *
 * Put in front of the system's <immintrin.h> (as an -isystem directory), it
 * declares what the host supports natively, then lets SIMDe provide every
 * intrinsic the host lacks under its usual name. Where SIMDe's portable
 * version differs from the instruction's definition, the definitions below
 * replace it:
 *   - masked loads and stores touch only the active lanes (SIMDe reads all
 *     16 lanes, and its masked store writes zeros to the inactive ones);
 *   - _mm512_reduce_add_ps exists (SIMDe has no native alias for it);
 *   - _mm512_mulhi_epu16 (AVX-512BW) exists (SIMDe has none);
 *   - AVX-512 BF16: vdpbf16ps and vcvtne2ps2bf16 with the instructions'
 *     exact semantics (per lane two fused multiply-adds, the odd pair
 *     first, denormal inputs read as zero and denormal results flushed;
 *     the f32 -> bf16 rounding of docs/semantics.md, but a denormal f32
 *     read as zero), as the functions
 *     exo_hl_emu_* that the AVX-512 library's helpers call instead of the
 *     intrinsics (whose __m512bh type differs between layers);
 *   - AVX-512 VNNI: vpdpbusd (wrapping) and vpdpbusds (saturating);
 *   - the AMX tile intrinsics (SIMDe has none) when the build emulates AMX
 *     (-DEXO_HL_EMULATE_AMX): exo_hl_amx_emulation.h.
 */
#ifndef EXO_HL_X86_EMULATION_IMMINTRIN_H
#define EXO_HL_X86_EMULATION_IMMINTRIN_H

#include_next <immintrin.h>

#ifndef SIMDE_ENABLE_NATIVE_ALIASES
#define SIMDE_ENABLE_NATIVE_ALIASES
#endif
#include <simde/x86/avx512.h>

#if !defined(SIMDE_X86_AVX512F_NATIVE)

static inline simde__m512
exo_hl_emu_mm512_mask_loadu_ps(simde__m512 src, simde__mmask16 k,
                               void const *mem) {
    float lanes[16];
    const float *from = (const float *)mem;
    simde_mm512_storeu_ps(lanes, src);
    for (int i = 0; i < 16; i++)
        if ((k >> i) & 1u)
            lanes[i] = from[i];
    return simde_mm512_loadu_ps(lanes);
}

static inline simde__m512
exo_hl_emu_mm512_maskz_loadu_ps(simde__mmask16 k, void const *mem) {
    return exo_hl_emu_mm512_mask_loadu_ps(simde_mm512_setzero_ps(), k, mem);
}

static inline void
exo_hl_emu_mm512_mask_storeu_ps(void *mem, simde__mmask16 k, simde__m512 a) {
    float lanes[16];
    float *to = (float *)mem;
    simde_mm512_storeu_ps(lanes, a);
    for (int i = 0; i < 16; i++)
        if ((k >> i) & 1u)
            to[i] = lanes[i];
}

/* pairwise, halving the width each step, as the native sequence does */
static inline float exo_hl_emu_mm512_reduce_add_ps(simde__m512 a) {
    float lanes[16];
    simde_mm512_storeu_ps(lanes, a);
    for (int w = 8; w >= 1; w /= 2)
        for (int i = 0; i < w; i++)
            lanes[i] += lanes[i + w];
    return lanes[0];
}

#undef _mm512_mask_loadu_ps
#define _mm512_mask_loadu_ps(src, k, mem) \
    exo_hl_emu_mm512_mask_loadu_ps(src, k, mem)
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps(k, mem) exo_hl_emu_mm512_maskz_loadu_ps(k, mem)
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps(mem, k, a) \
    exo_hl_emu_mm512_mask_storeu_ps(mem, k, a)
#undef _mm512_reduce_add_ps
#define _mm512_reduce_add_ps(a) exo_hl_emu_mm512_reduce_add_ps(a)

#endif /* !SIMDE_X86_AVX512F_NATIVE */

#if !defined(SIMDE_X86_AVX512BW_NATIVE)

/* the high 16 bits of each unsigned 16 x 16-bit product */
static inline simde__m512i
exo_hl_emu_mm512_mulhi_epu16(simde__m512i a, simde__m512i b) {
    uint16_t x[32], y[32];
    simde_mm512_storeu_si512(x, a);
    simde_mm512_storeu_si512(y, b);
    for (int i = 0; i < 32; i++)
        x[i] = (uint16_t)(((uint32_t)x[i] * (uint32_t)y[i]) >> 16);
    return simde_mm512_loadu_si512(x);
}

#undef _mm512_mulhi_epu16
#define _mm512_mulhi_epu16(a, b) exo_hl_emu_mm512_mulhi_epu16(a, b)

#endif /* !SIMDE_X86_AVX512BW_NATIVE */

#if !defined(SIMDE_X86_AVX512BF16_NATIVE)
#include <math.h>
#include <stdint.h>

#define EXO_HL_EMU_AVX512BF16 1

static inline uint32_t exo_hl_emu_bits(float x) {
    union { float f; uint32_t u; } v;
    v.f = x;
    return v.u;
}

static inline float exo_hl_emu_float(uint32_t u) {
    union { float f; uint32_t u; } v;
    v.u = u;
    return v.f;
}

/* a denormal (input: DAZ; output: FTZ) as the zero of its sign */
static inline float exo_hl_emu_flush(float x) {
    uint32_t u = exo_hl_emu_bits(x);
    return (u & 0x7f800000u) == 0 ? exo_hl_emu_float(u & 0x80000000u) : x;
}

static inline float exo_hl_emu_bf16_in(uint16_t h) {
    return exo_hl_emu_flush(exo_hl_emu_float((uint32_t)h << 16));
}

static inline simde__m512
exo_hl_emu_mm512_dpbf16_ps(simde__m512 acc, simde__m512i a, simde__m512i b) {
    float c[16];
    uint16_t x[32], y[32];
    simde_mm512_storeu_ps(c, acc);
    simde_mm512_storeu_si512(x, a);
    simde_mm512_storeu_si512(y, b);
    for (int i = 0; i < 16; i++) {
        float r = exo_hl_emu_flush(c[i]);
        r = exo_hl_emu_flush(fmaf(exo_hl_emu_bf16_in(x[2 * i + 1]),
                                  exo_hl_emu_bf16_in(y[2 * i + 1]), r));
        r = exo_hl_emu_flush(fmaf(exo_hl_emu_bf16_in(x[2 * i]),
                                  exo_hl_emu_bf16_in(y[2 * i]), r));
        c[i] = r;
    }
    return simde_mm512_loadu_ps(c);
}

static inline uint16_t exo_hl_emu_cvtne_bf16(float f) {
    uint32_t u = exo_hl_emu_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    if ((u & 0x7f800000u) == 0u)
        return (uint16_t)((u >> 16) & 0x8000u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline simde__m512i
exo_hl_emu_mm512_cvtne2ps_bf16(simde__m512 hi, simde__m512 lo) {
    float h[16], l[16];
    uint16_t r[32];
    simde_mm512_storeu_ps(h, hi);
    simde_mm512_storeu_ps(l, lo);
    for (int i = 0; i < 16; i++) {
        r[i] = exo_hl_emu_cvtne_bf16(l[i]);
        r[16 + i] = exo_hl_emu_cvtne_bf16(h[i]);
    }
    return simde_mm512_loadu_si512(r);
}

#endif /* !SIMDE_X86_AVX512BF16_NATIVE */

#if !defined(SIMDE_X86_AVX512VNNI_NATIVE)
#include <stdint.h>

/* the four u8 x s8 products of lane i, summed exactly (|sum| < 2**18) */
static inline int32_t exo_hl_emu_quad(const uint8_t *x, const int8_t *y,
                                      int i) {
    int32_t sum = 0;
    for (int t = 0; t < 4; t++)
        sum += (int32_t)x[4 * i + t] * (int32_t)y[4 * i + t];
    return sum;
}

static inline simde__m512i
exo_hl_emu_mm512_dpbusd(simde__m512i src, simde__m512i a, simde__m512i b,
                        int saturate) {
    int32_t s[16];
    uint8_t x[64];
    int8_t y[64];
    simde_mm512_storeu_si512(s, src);
    simde_mm512_storeu_si512(x, a);
    simde_mm512_storeu_si512(y, b);
    for (int i = 0; i < 16; i++) {
        int64_t v = (int64_t)s[i] + exo_hl_emu_quad(x, y, i);
        if (saturate) {
            v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
        } else {        /* wrap modulo 2**32, without implementation-defined casts */
            v = (int64_t)(((uint64_t)v) & 0xffffffffu);
            if (v > INT32_MAX)
                v -= (int64_t)1 << 32;
        }
        s[i] = (int32_t)v;
    }
    return simde_mm512_loadu_si512(s);
}

#undef _mm512_dpbusd_epi32
#define _mm512_dpbusd_epi32(src, a, b) exo_hl_emu_mm512_dpbusd(src, a, b, 0)
#undef _mm512_dpbusds_epi32
#define _mm512_dpbusds_epi32(src, a, b) exo_hl_emu_mm512_dpbusd(src, a, b, 1)

#endif /* !SIMDE_X86_AVX512VNNI_NATIVE */

#ifdef EXO_HL_EMULATE_AMX
#include "exo_hl_amx_emulation.h"
#endif

#endif /* EXO_HL_X86_EMULATION_IMMINTRIN_H */
