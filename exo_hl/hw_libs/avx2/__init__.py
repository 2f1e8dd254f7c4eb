"""The AVX2 + FMA hardware library (a user library: public API only)."""
from .lib import (AVX2, INSTRS, mm256_broadcast_ss, mm256_fmadd_bcst_ps,
                  mm256_fmadd_ps, mm256_loadu_ps, mm256_setzero_ps,
                  mm256_storeu_ps)

__all__ = ["AVX2", "INSTRS", "mm256_broadcast_ss", "mm256_fmadd_bcst_ps",
           "mm256_fmadd_ps", "mm256_loadu_ps", "mm256_setzero_ps",
           "mm256_storeu_ps"]
