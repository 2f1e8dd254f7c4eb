"""The AVX-512 hardware library (a user library: public API only): f32
and ui16 instructions (lib.py), BF16 and VNNI dot products (lowp.py),
bf16 multiply-adds in an algorithm's order (bf16_mul.py), an FMA reading
its vector operand from memory (fma_mem.py)."""
from .lib import INSTRS as _F32_INSTRS
from .lowp import INSTRS as _LOWP_INSTRS
from .bf16_mul import INSTRS as _BF16_MUL_INSTRS
from .bf16_mul import (mm512_mul_add_bf16_even_bcst_ps,
                       mm512_mul_add_bf16_odd_bcst_ps)
from .fma_mem import mm512_fmadd_bcst_bmem_ps
from .lowp import (mm512_cvtne2ps_pbh, mm512_dpbf16_bcst_ps, mm512_dpbf16_ps,
                   mm512_dpbusd_bcst_epi32, mm512_dpbusd_epi32,
                   mm512_dpbusds_epi32, mm512_loadu_bf16, mm512_loadu_epi8,
                   mm512_loadu_epi32, mm512_loadu_epu8,
                   mm512_reduce_storeu_epi32, mm512_setzero_epi32,
                   mm512_storeu_bf16, mm512_storeu_epi32,
                   mm512_storeu_epi8, mm512_storeu_epu8, pack_vnni_bf16,
                   pack_vnni_epi8)
from .lib import (AVX512, mm512_add_loadu_ps, mm512_add_ps,
                  mm512_fmadd_bcst_ps, mm512_fmadd_ps, mm512_loadu_ps,
                  mm512_mask_storeu_ps, mm512_maskz_loadu_ps, mm512_mul_ps,
                  mm512_prefix_add_ps, mm512_prefix_fmadd_bcst_ps,
                  mm512_prefix_fmadd_ps, mm512_prefix_mul_ps,
                  mm512_prefix_storeu_ps,
                  mm512_reduce_storeu_ps, mm512_set1_ps, mm512_setzero_ps,
                  mm512_set1_scalar_ps, mm512_add3_ps, mm512_max_ps, mm512_relu_ps,
                  mm512_reduce_add_ps,
                  mm512_storeu_ps, mm512_storeu_relu_ps,
                  mm512_loadu_epi16, mm512_storeu_epi16,
                  mm512_mean3_wrap_epu16)
# the x86 prefetch (SSE): one instruction shared with the AVX2 library
from ..avx2.lib import (mm_prefetch_t0, mm_prefetch_t0_bf16,
                        mm_prefetch_t0_epi8, mm_prefetch_t0_epu8)

__all__ = ["AVX512", "INSTRS", "mm512_add_loadu_ps", "mm512_add_ps",
           "mm512_fmadd_bcst_ps", "mm512_fmadd_bcst_bmem_ps",
           "mm512_fmadd_ps", "mm512_loadu_ps",
           "mm512_mask_storeu_ps", "mm512_maskz_loadu_ps", "mm512_mul_ps",
           "mm512_prefix_add_ps", "mm512_prefix_fmadd_bcst_ps",
           "mm512_prefix_fmadd_ps", "mm512_prefix_mul_ps",
           "mm512_prefix_storeu_ps",
           "mm512_reduce_storeu_ps", "mm512_set1_ps", "mm512_setzero_ps",
           "mm512_set1_scalar_ps", "mm512_add3_ps", "mm512_max_ps", "mm512_relu_ps",
           "mm512_reduce_add_ps",
           "mm512_storeu_ps", "mm512_storeu_relu_ps",
           "mm512_loadu_epi16", "mm512_storeu_epi16",
           "mm512_mean3_wrap_epu16", "mm_prefetch_t0", "mm_prefetch_t0_bf16",
           "mm_prefetch_t0_epi8", "mm_prefetch_t0_epu8",
           # BF16 and VNNI (lowp.py)
           "mm512_cvtne2ps_pbh", "mm512_dpbf16_bcst_ps", "mm512_dpbf16_ps",
           "mm512_dpbusd_bcst_epi32", "mm512_dpbusd_epi32",
           "mm512_dpbusds_epi32", "mm512_loadu_bf16", "mm512_loadu_epi8",
           "mm512_loadu_epi32", "mm512_loadu_epu8",
           "mm512_mul_add_bf16_even_bcst_ps",
           "mm512_mul_add_bf16_odd_bcst_ps",
           "mm512_reduce_storeu_epi32", "mm512_setzero_epi32",
           "mm512_storeu_bf16", "mm512_storeu_epi32", "mm512_storeu_epi8",
           "mm512_storeu_epu8", "pack_vnni_bf16", "pack_vnni_epi8"]

#: every instruction (what ``replace_all``/``vectorize`` select from);
#: not ``mm512_fmadd_bcst_bmem_ps`` (fma_mem.py): it reads ``b`` from
#: memory in every FMA, a choice for full register tiles, named in
#: ``replace`` where wanted
INSTRS = _F32_INSTRS + _LOWP_INSTRS + _BF16_MUL_INSTRS
