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

#ifdef EXO_HL_EMULATE_AMX
#include "exo_hl_amx_emulation.h"
#endif

#endif /* EXO_HL_X86_EMULATION_IMMINTRIN_H */
