"""An FMA whose vector operand stays a memory operand (AVX2 + FMA).

The AVX2 twin of ``hw_libs/avx512/fma_mem.py`` (which says why): a
register tile whose accumulators and B registers fill all 16 ymm
registers (conv's 7x2: 14 + 2) leaves none for the broadcast of A, and
GCC 12 (``-march=haswell``) then keeps one on the stack in the k loop.
``mm256_fmadd_bcst_bmem_ps`` reads one B vector in each of its FMAs
(``vfmadd231ps m256, bcast, dst``, inline assembly so the compiler
cannot load it once into a register); the broadcast is the same
``_mm256_broadcast_ss`` as ``mm256_fmadd_bcst_ps``'s, shared with the
other FMAs of that element. Same meaning as ``mm256_fmadd_bcst_ps`` with
``b`` read from memory. Under an emulation layer or a compiler without
GNU inline assembly the helper is the intrinsic form, and so it is in a
build with AVX-512VL (``-march=native`` on an AVX-512 CPU): the compiler
then has 32 ymm registers, the tile fits, and the memory operand would
only add loads. Measured on Zen 5 (conv's 7x2 AVX2 tile, one thread,
side by side, 05:36 UTC 29 Nov 2026): built for 16 registers
(``-march=haswell``) 118-125 GFLOP/s against 74-75 spilled (1.57-1.69x);
with 32 registers the memory operand ran 0.88-0.93x of the register
form, hence the intrinsic there.
"""
from __future__ import annotations

from exo_hl import DRAM, f32, instr, seq
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)

from .lib import AVX2

_FMA = {"avx2", "fma"}

# Emitted once per .c file; as in hw_libs/avx512/fma_mem.py (dialect
# alternatives, an unaligned may-alias operand type, a macro as the
# portable form)
_HELPER = """#include <immintrin.h>
#ifndef EXO_HL_FMADD256_BMEM
#define EXO_HL_FMADD256_BMEM
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__AVX512VL__) && \\
    !(defined(SIMDE_VERSION) && !defined(SIMDE_X86_FMA_NATIVE))
static inline __attribute__((target("avx2,fma"))) __m256
exo_hl_mm256_fmadd_bmem_ps(__m256 a, const float *b, __m256 dst) {
    __asm__("vfmadd231ps {%2, %1, %0|%0, %1, %2}"
            : "+v"(dst) : "v"(a), "m"(*(const __m256_u *)b));
    return dst;
}
#else
#define exo_hl_mm256_fmadd_bmem_ps(a, b, dst) \\
    _mm256_fmadd_ps((a), _mm256_loadu_ps(b), (dst))
#endif
#endif
"""


@instr("{dst_data} = exo_hl_mm256_fmadd_bmem_ps("
       "_mm256_broadcast_ss(&{a_data}), &{b_data}, {dst_data});",
       _HELPER, cpu_features=_FMA)
def mm256_fmadd_bcst_bmem_ps(dst: [f32][8] @ AVX2, a: [f32][1] @ DRAM,
                             b: [f32][8] @ DRAM):
    """``dst += a[0] * b`` (fused), ``b`` read by the FMA from memory
    (``vfmadd231ps m256``): no register for it.

    >>> p = p.replace(p.find_loop('ol'), mm256_fmadd_bcst_bmem_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] += a[0] * b[i]


INSTRS = (mm256_fmadd_bcst_bmem_ps,)
