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

    def version(self) -> str:
        try:
            buf = ctypes.create_string_buffer(256)
            self.lib.MKL_Get_Version_String(buf, 256)
            return buf.value.decode(errors="replace").strip()
        except AttributeError:
            return "(version unknown)"

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
