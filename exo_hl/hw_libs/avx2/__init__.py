"""The AVX2 + FMA hardware library (a user library: public API only).

Memory ``AVX2``: ``__m256`` registers of 8 x f32 and ``__m256i`` registers
of 16 x ui16. ``INSTRS`` lists every instruction but
``mm256_fmadd_bcst_bmem_ps`` (fma_mem.py: an FMA reading its vector
operand from memory, for full register tiles; named in ``replace``).
"""
from .fma_mem import mm256_fmadd_bcst_bmem_ps
from .lib import (AVX2, INSTRS, mm256_add_epi16, mm256_add_ps,
                  mm256_avg_epu16, mm256_broadcast_ss, mm256_fmadd_bcst_ps,
                  mm256_fmadd_ps, mm256_loadu_epi16, mm256_loadu_ps,
                  mm256_maskload_ps, mm256_maskstore_ps, mm256_max_ps,
                  mm256_mean3_epu16, mm256_mean3_wrap_epu16, mm256_mul_ps, mm256_mulhi_epu16, mm256_prefix_add_ps,
                  mm256_prefix_fmadd_bcst_ps, mm256_prefix_fmadd_ps,
                  mm256_prefix_mul_ps, mm256_prefix_store_ps,
                  mm256_reduce_add_ps, mm256_relu_ps, mm256_set1_scalar_ps,
                  mm256_set1_epi16, mm256_setzero_ps, mm256_srli_epi16,
                  mm256_storeu_epi16, mm256_storeu_ps,
                  mm256_storeu_relu_ps, mm_prefetch_t0,
                  mm_prefetch_t0_bf16, mm_prefetch_t0_epi8,
                  mm_prefetch_t0_epu8)

__all__ = ["AVX2", "INSTRS", "mm256_fmadd_bcst_bmem_ps", "mm256_add_epi16", "mm256_add_ps",
           "mm256_avg_epu16", "mm256_broadcast_ss", "mm256_fmadd_bcst_ps",
           "mm256_fmadd_ps", "mm256_loadu_epi16", "mm256_loadu_ps",
           "mm256_maskload_ps", "mm256_maskstore_ps", "mm256_max_ps",
           "mm256_mean3_epu16", "mm256_mean3_wrap_epu16", "mm256_mul_ps", "mm256_mulhi_epu16", "mm256_prefix_add_ps",
           "mm256_prefix_fmadd_bcst_ps", "mm256_prefix_fmadd_ps",
           "mm256_prefix_mul_ps", "mm256_prefix_store_ps",
           "mm256_reduce_add_ps", "mm256_relu_ps", "mm256_set1_scalar_ps",
           "mm256_set1_epi16", "mm256_setzero_ps", "mm256_srli_epi16",
           "mm256_storeu_epi16", "mm256_storeu_ps",
           "mm256_storeu_relu_ps", "mm_prefetch_t0", "mm_prefetch_t0_bf16",
           "mm_prefetch_t0_epi8", "mm_prefetch_t0_epu8"]
