"""Intel MKL as a second SGEMM baseline, through ctypes.

The ``mkl`` package from PyPI (in the project's ``bench`` extra) puts
``libmkl_rt.so`` in ``<prefix>/lib``; ``Mkl.load()`` finds it there (or
where ``EXO_HL_MKL`` points), calls ``cblas_sgemm`` in place like
``OpenBlas`` (``C += A @ B``, row-major) and sets its thread count with
``MKL_Set_Num_Threads``. Without it ``Mkl.load()`` returns (None, a
one-line reason), and a benchmark goes on without the column.
"""
from __future__ import annotations

import ctypes
import glob
import os
import sys


def _candidates():
    env = os.environ.get("EXO_HL_MKL")
    if env:
        yield env
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        yield from sorted(glob.glob(os.path.join(prefix, "lib",
                                                 "libmkl_rt.so*")))
    yield "libmkl_rt.so.2"
    yield "libmkl_rt.so"


class Mkl:
    """MKL's ``cblas_sgemm`` (LP64) and ``MKL_Set_Num_Threads``."""

    def __init__(self, lib, path):
        self.lib, self.path = lib, path
        self._sgemm = lib.cblas_sgemm
        self._sgemm.restype = None
        i, f, p = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
        self._sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                i, i, i, f, p, i, p, i, f, p, i]
        self._threads = lib.MKL_Set_Num_Threads
        self._threads.argtypes = [ctypes.c_int]

    @classmethod
    def load(cls):
        """(Mkl, description) or (None, why not)."""
        tried = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                tried.append(path)
                continue
            if not hasattr(lib, "cblas_sgemm"):
                continue
            m = cls(lib, path)
            return m, f"MKL {m.version()} ({path})"
        return None, ("MKL not found (pip install mkl, or the project's "
                      "'bench' extra): no MKL column")

    # -- low precision (apps/gemm_lowp)
    def bound_gemm_s8u8s32(self, A, B, C):
        """``C += A @ B`` with A u8 (M x K), B s8 (K x N), C s32, row-major,
        zero offsets (``cblas_gemm_s8u8s32``), as a callable."""
        fn = self.lib.cblas_gemm_s8u8s32
        i, p = ctypes.c_int, ctypes.c_void_p
        fn.restype = None
        fn.argtypes = [i, i, i, i, i, i, i, ctypes.c_float, p, i,
                       ctypes.c_int8, p, i, ctypes.c_int8, ctypes.c_float, p,
                       i, p]
        M, K = A.shape
        N = B.shape[1]
        co = (ctypes.c_int32 * 1)(0)
        a, b, c = A.ctypes.data, B.ctypes.data, C.ctypes.data
        # 101 row-major, 111 no transpose, 173 CblasFixOffset
        def call(_keep=(A, B, C, co)):
            fn(101, 111, 111, 173, M, N, K, 1.0, a, K, 0, b, N, 0, 1.0, c,
               N, co)
        return call

    def bound_gemm_bf16(self, A, B, C):
        """``C += A @ B`` with A, B bf16 (uint16 bits), C f32, row-major
        (``cblas_gemm_bf16bf16f32``), as a callable."""
        fn = self.lib.cblas_gemm_bf16bf16f32
        i, p, f = ctypes.c_int, ctypes.c_void_p, ctypes.c_float
        fn.restype = None
        fn.argtypes = [i, i, i, i, i, i, f, p, i, p, i, f, p, i]
        M, K = A.shape
        N = B.shape[1]
        a, b, c = A.ctypes.data, B.ctypes.data, C.ctypes.data

        def call(_keep=(A, B, C)):
            fn(101, 111, 111, M, N, K, 1.0, a, K, b, N, 1.0, c, N)
        return call

    def version(self) -> str:
        try:
            buf = ctypes.create_string_buffer(256)
            self.lib.MKL_Get_Version_String(buf, 256)
            return buf.value.decode(errors="replace").strip()
        except AttributeError:
            return "(version unknown)"

    def processor(self) -> str:
        """The instruction set MKL dispatches to in this process (the
        ``Processor`` of ``MKL_Get_Version``): it names AMX only when MKL
        will use it (not when Linux refused the tile state)."""
        class _Version(ctypes.Structure):
            _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int),
                        ("update", ctypes.c_int),
                        ("status", ctypes.c_char_p),
                        ("build", ctypes.c_char_p),
                        ("processor", ctypes.c_char_p),
                        ("platform", ctypes.c_char_p)]
        try:
            v = _Version()
            self.lib.MKL_Get_Version(ctypes.byref(v))
            return (v.processor or b"?").decode(errors="replace")
        except AttributeError:
            return "(unknown)"

    def set_threads(self, n: int) -> bool:
        self._threads(n)
        return True

    def sgemm(self, A, B, C, alpha=1.0, beta=1.0):
        self.bound_sgemm(A, B, C, alpha, beta)()

    def bound_sgemm(self, A, B, C, alpha=1.0, beta=1.0):
        """``C = alpha A @ B + beta C`` as a callable with no arguments."""
        M, K = A.shape
        N = B.shape[1]
        fn, a, b, c = (self._sgemm, A.ctypes.data, B.ctypes.data,
                       C.ctypes.data)

        def call(_keep=(A, B, C)):
            fn(101, 111, 111, M, N, K, alpha, a, K, b, N, beta, c, N)
        return call
