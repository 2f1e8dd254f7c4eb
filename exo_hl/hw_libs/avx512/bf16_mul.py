"""bf16 times bf16 into f32 as a multiply then an add, one element of A
broadcast: the even or odd elements of 16 VNNI pairs of B.

Why not ``vdpbf16ps`` (lowp.py): it sums each pair into one accumulator,
an order other than an algorithm that keeps even and odd sums apart (the
AMX bf16 GEMM's tail rows, apps/gemm_amx). AVX-512F only; a user library
in the ``AVX512`` register memory, public API only.
"""
from __future__ import annotations

from exo_hl import DRAM, bf16, f32, instr, seq
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)

from .lib import AVX512

_FEATURES = {"avx512f"}
_INCLUDE = "#include <immintrin.h>\n"

# One element of a bf16 pair of A broadcast, times the even or odd elements
# of 16 pairs of B (VNNI layout), added into 16 f32: a bf16 is the top half
# of an f32, so the even element of a pair (the low 16 bits of its dword) is
# ``dword << 16`` and the odd one ``dword & 0xffff0000``. A multiply then an
# add (not an FMA): the product of two bf16 is rounded to f32 only when it
# leaves f32's range, as the body's ``a * b`` is (docs/semantics.md "bf16"),
# and the sum is rounded once. The bf16 GEMM's stated order (two sums per
# 32-deep step, docs of apps/gemm_amx) on AVX-512F alone, where
# ``vdpbf16ps`` (which sums each pair into one accumulator) would not do.
_BF16_EVEN = ("_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_loadu_si512("
              "(const void *)&{b_data}), 16))")
_BF16_ODD = ("_mm512_castsi512_ps(_mm512_and_si512(_mm512_loadu_si512("
             "(const void *)&{b_data}), _mm512_set1_epi32(-65536)))")
_BF16_BCST = ("_mm512_castsi512_ps(_mm512_set1_epi32("
              "(int32_t)((uint32_t){a_data} << 16)))")


@instr("{dst_data} = _mm512_add_ps({dst_data}, _mm512_mul_ps("
       + _BF16_BCST + ", " + _BF16_EVEN + "));",
       _INCLUDE + "#include <stdint.h>\n", cpu_features=_FEATURES)
def mm512_mul_add_bf16_even_bcst_ps(dst: [f32][16] @ AVX512,
                                    a: [bf16][1] @ DRAM,
                                    b: [bf16][16, 2] @ DRAM):
    """``dst[i] += a[0] * b[i, 0]``: one bf16 of A broadcast times the even
    elements of 16 pairs of B (16 columns x 2 k in the VNNI layout, 64
    contiguous bytes); a multiply, then an add (exact product unless out
    of f32's range, one rounding of the sum).

    >>> p = p.replace(p.find_loop('ji'), mm512_mul_add_bf16_even_bcst_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 1) == 1
    assert stride(b, 0) == 2
    for i in seq(0, 16):
        dst[i] += a[0] * b[i, 0]


@instr("{dst_data} = _mm512_add_ps({dst_data}, _mm512_mul_ps("
       + _BF16_BCST + ", " + _BF16_ODD + "));",
       _INCLUDE + "#include <stdint.h>\n", cpu_features=_FEATURES)
def mm512_mul_add_bf16_odd_bcst_ps(dst: [f32][16] @ AVX512,
                                   a: [bf16][1] @ DRAM,
                                   b: [bf16][16, 2] @ DRAM):
    """``dst[i] += a[0] * b[i, 1]``: as
    ``mm512_mul_add_bf16_even_bcst_ps``, the odd elements of the pairs.

    >>> p = p.replace(p.find_loop('ji'), mm512_mul_add_bf16_odd_bcst_ps)
    """
    assert stride(dst, 0) == 1
    assert stride(b, 1) == 1
    assert stride(b, 0) == 2
    for i in seq(0, 16):
        dst[i] += a[0] * b[i, 1]


INSTRS = (mm512_mul_add_bf16_even_bcst_ps, mm512_mul_add_bf16_odd_bcst_ps)
