"""MKL's int8 and bf16 GEMMs through ctypes (the AMX bench's baseline).

``cblas_gemm_s8u8s32`` row-major (fixed offset: CblasFixOffset is 173)
computes ``C = alpha * A @ B + beta * C``
with A *unsigned* and B *signed* bytes (checked against numpy by
``check()``: MKL's name lists the column-major operands), offsets 0;
``cblas_gemm_bf16bf16f32`` takes bf16 as uint16. Kept apart from
apps/common/mkl.py so the AVX-512 BF16/VNNI branch can extend that file.
"""
from __future__ import annotations

import ctypes

import numpy as np

from apps.common.mkl import Mkl

ROW_MAJOR, NO_TRANS, FIX_OFFSET = 101, 111, 173


class MklLowp:
    """int8 / bf16 GEMMs of an ``Mkl`` (``MklLowp.load()``)."""

    def __init__(self, mkl):
        self.mkl = mkl
        i, f, p = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
        self._s8u8 = getattr(mkl.lib, "cblas_gemm_s8u8s32", None)
        if self._s8u8 is not None:
            self._s8u8.restype = None
            self._s8u8.argtypes = [i, i, i, i, i, i, i, f, p, i,
                                   ctypes.c_int8, p, i, ctypes.c_int8, f, p,
                                   i, p]
        self._bf16 = getattr(mkl.lib, "cblas_gemm_bf16bf16f32", None)
        if self._bf16 is not None:
            self._bf16.restype = None
            self._bf16.argtypes = [i, i, i, i, i, i, f, p, i, p, i, f, p, i]
        self._co = (ctypes.c_int32 * 1)(0)

    @classmethod
    def load(cls):
        """(MklLowp, description) or (None, why not)."""
        m, why = Mkl.load()
        if m is None:
            return None, why
        return cls(m), why

    def set_threads(self, n):
        self.mkl._threads(int(n))

    def u8s8s32(self, A, B, C, beta=1.0):
        """C = A @ B + beta C (A: uint8 M x K, B: int8 K x N, C: int32)."""
        M, K = A.shape
        N = B.shape[1]
        self._s8u8(ROW_MAJOR, NO_TRANS, NO_TRANS, FIX_OFFSET, M, N, K, 1.0,
                   A.ctypes.data, K, 0, B.ctypes.data, N, 0, beta,
                   C.ctypes.data, N, ctypes.addressof(self._co))

    def bf16bf16f32(self, A, B, C, beta=1.0):
        """C = A @ B + beta C (A, B: bf16 bits as uint16, C: float32)."""
        M, K = A.shape
        N = B.shape[1]
        self._bf16(ROW_MAJOR, NO_TRANS, NO_TRANS, M, N, K, 1.0,
                   A.ctypes.data, K, B.ctypes.data, N, beta, C.ctypes.data, N)

    def check(self):
        """MKL's u8 x s8 agrees with numpy on a small case (raises if not)."""
        rng = np.random.default_rng(1)
        A = rng.integers(0, 256, (64, 64), dtype=np.uint8)
        B = rng.integers(-128, 128, (64, 64), dtype=np.int8)
        C = np.zeros((64, 64), np.int32)
        self.u8s8s32(A, B, C, beta=0.0)
        ref = A.astype(np.int32) @ B.astype(np.int32)
        if not np.array_equal(C, ref):
            raise RuntimeError("cblas_gemm_s8u8s32 does not compute u8 x s8 "
                               "as assumed")
