"""The AVX-512 hardware library (a user library: public API only)."""
from .lib import (AVX512, INSTRS, mm512_add_loadu_ps, mm512_add_ps,
                  mm512_fmadd_bcst_ps, mm512_fmadd_ps, mm512_loadu_ps,
                  mm512_mask_storeu_ps, mm512_maskz_loadu_ps, mm512_mul_ps,
                  mm512_prefix_add_ps, mm512_prefix_fmadd_bcst_ps,
                  mm512_prefix_fmadd_ps, mm512_prefix_mul_ps,
                  mm512_prefix_storeu_ps,
                  mm512_reduce_storeu_ps, mm512_set1_ps, mm512_setzero_ps,
                  mm512_storeu_ps, mm512_storeu_relu_ps,
                  mm512_loadu_epi16, mm512_storeu_epi16,
                  mm512_mean3_wrap_epu16)

__all__ = ["AVX512", "INSTRS", "mm512_add_loadu_ps", "mm512_add_ps",
           "mm512_fmadd_bcst_ps", "mm512_fmadd_ps", "mm512_loadu_ps",
           "mm512_mask_storeu_ps", "mm512_maskz_loadu_ps", "mm512_mul_ps",
           "mm512_prefix_add_ps", "mm512_prefix_fmadd_bcst_ps",
           "mm512_prefix_fmadd_ps", "mm512_prefix_mul_ps",
           "mm512_prefix_storeu_ps",
           "mm512_reduce_storeu_ps", "mm512_set1_ps", "mm512_setzero_ps",
           "mm512_storeu_ps", "mm512_storeu_relu_ps",
           "mm512_loadu_epi16", "mm512_storeu_epi16",
           "mm512_mean3_wrap_epu16"]
