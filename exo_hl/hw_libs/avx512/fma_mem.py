"""An FMA whose vector operand stays a memory operand.

Why: a register tile that fills all 32 zmm registers with accumulators
and B registers (conv's 7x4: 28 accumulators + 4 registers of weights)
leaves none for the broadcast of A, and GCC 12 then keeps an accumulator
on the stack (a load and a store in every k step, whatever
``-fira-region``). Reading one of the B vectors from memory in each of
its FMAs (``vfmadd231ps mem, bcast, dst``) frees its register: 28 + 3 +
the broadcast. In C the compiler would load such an operand once into a
register and share it between the FMAs (the spill again), so
``mm512_fmadd_bcst_bmem_ps`` writes the FMA as inline assembly with a
memory operand for ``b``; the broadcast of ``a`` is the same
``_mm512_set1_ps`` as ``mm512_fmadd_bcst_ps``'s, so the compiler shares
it with the other FMAs of that element. Measured on conv's 7x7x512
kernels (Zen 5, GCC 12, side by side): 2.0-2.8% faster than the spilled
tile on one thread, 2.1-3.2% on two; the broadcast as the memory operand
instead (every FMA ``m32{1to16}``) was 15-16% slower (32 loads per 28
FMAs).

Same meaning as ``mm512_fmadd_bcst_ps`` with ``b`` read from memory (one
fused multiply-add per lane, ``a[0] * b + dst``, one rounding). Under an
emulation layer (no native AVX-512 in the build) or a compiler without
GNU inline assembly the helper is the intrinsic form: portable C of the
same meaning.
"""
from __future__ import annotations

from exo_hl import DRAM, f32, instr, seq
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)

from .lib import AVX512

_FEATURES = {"avx512f"}

# Emitted once per .c file. ``{att|intel}`` dialect alternatives, so the
# C also builds with ``-masm=intel``; ``__m512_u``: any alignment, may
# alias the float buffer it points into. The portable form is a macro: a
# function passing ``__m512`` by value in a build without AVX-512 (the
# emulation layer's) draws GCC's -Wpsabi warning.
_HELPER = """#include <immintrin.h>
#ifndef EXO_HL_FMADD_BMEM
#define EXO_HL_FMADD_BMEM
#if (defined(__GNUC__) || defined(__clang__)) && \\
    !(defined(SIMDE_VERSION) && !defined(SIMDE_X86_AVX512F_NATIVE))
static inline __attribute__((target("avx512f"))) __m512
exo_hl_mm512_fmadd_bmem_ps(__m512 a, const float *b, __m512 dst) {
    __asm__("vfmadd231ps {%2, %1, %0|%0, %1, %2}"
            : "+v"(dst) : "v"(a), "m"(*(const __m512_u *)b));
    return dst;
}
#else
#define exo_hl_mm512_fmadd_bmem_ps(a, b, dst) \\
    _mm512_fmadd_ps((a), _mm512_loadu_ps(b), (dst))
#endif
#endif
"""


@instr("{dst_data} = exo_hl_mm512_fmadd_bmem_ps(_mm512_set1_ps({a_data}), "
       "&{b_data}, {dst_data});", _HELPER, cpu_features=_FEATURES)
def mm512_fmadd_bcst_bmem_ps(dst: [f32][16] @ AVX512, a: [f32][1] @ DRAM,
                             b: [f32][16] @ DRAM):
    """``dst += a[0] * b`` (fused), ``b`` read by the FMA from memory
    (``vfmadd231ps m512``): no register for it.

    >>> p = p.replace(p.find_loop('ol'), mm512_fmadd_bcst_bmem_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 16):
        dst[i] += a[0] * b[i]


INSTRS = (mm512_fmadd_bcst_bmem_ps,)
