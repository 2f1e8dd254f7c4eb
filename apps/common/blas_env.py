"""numpy's BLAS as a fair single-core baseline.

``configure_blas()`` must run before numpy is imported (OpenBLAS reads its
environment once, when it is loaded):

* one thread (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ...), since
  the kernels it is compared with are single-threaded;
* ``OPENBLAS_L2_SIZE`` removed (it overrides the L2 size OpenBLAS blocks
  for);
* ``OPENBLAS_CORETYPE`` removed: some shells export e.g.
  ``OPENBLAS_CORETYPE=Haswell``, which forces OpenBLAS's Haswell kernels
  everywhere and halves its speed on AVX-512 CPUs. Without it OpenBLAS
  picks the kernels for the CPU it runs on.

Usage, at the top of a script::

    from apps.common.blas_env import configure_blas
    BLAS_NOTES = configure_blas()     # before `import numpy`
    import numpy as np
    ...
    for line in BLAS_NOTES + [blas_description()]:
        print(line)
"""
from __future__ import annotations

import ctypes
import glob
import os
import sys

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


#: variables that make OpenBLAS run other kernels or block sizes than it
#: would pick for this CPU
OVERRIDES = ("OPENBLAS_L2_SIZE", "OPENBLAS_CORETYPE")


def unset_overrides() -> list:
    """Remove ``OVERRIDES`` from the environment (for OpenBLAS loaded after
    this, here or in a child process: ``exo-hl tune``'s workers); returns
    lines saying what was done."""
    notes = []
    l2 = os.environ.pop("OPENBLAS_L2_SIZE", None)
    if l2 is not None:
        notes.append(f"unset OPENBLAS_L2_SIZE={l2} (OpenBLAS sizes its "
                     f"blocks from the L2 it detects)")
    core = os.environ.pop("OPENBLAS_CORETYPE", None)
    if core is not None:
        notes.append(f"unset OPENBLAS_CORETYPE={core} (it forces OpenBLAS's "
                     f"{core} kernels; now OpenBLAS picks them for this CPU)")
    else:
        notes.append("OPENBLAS_CORETYPE is not set (OpenBLAS picks its "
                     "kernels for this CPU)")
    return notes


def configure_blas(threads: int = 1) -> list:
    """Set the BLAS environment (see the module docstring); returns lines
    saying what was done, for the caller to print."""
    notes = []
    if "numpy" in sys.modules:
        notes.append("warning: numpy was imported before the BLAS settings; "
                     "they may not apply")
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    notes.append(f"BLAS baseline: numpy, {threads} thread"
                 f"{'s' if threads != 1 else ''} (OPENBLAS_NUM_THREADS="
                 f"OMP_NUM_THREADS=MKL_NUM_THREADS={threads})")
    notes += unset_overrides()
    return notes


def _openblas_lib():
    """numpy's OpenBLAS, if it ships one (wheels bundle it in numpy.libs)."""
    import numpy as np
    base = os.path.dirname(os.path.dirname(np.__file__))
    for path in sorted(glob.glob(os.path.join(base, "numpy.libs",
                                              "*openblas*.so*"))):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def blas_description() -> str:
    """Which BLAS numpy uses, and (for OpenBLAS) its kernel set and thread
    count as OpenBLAS itself reports them. Call after importing numpy."""
    import numpy as np
    name = "unknown BLAS"
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        name = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # older numpy: no mode="dicts"
        pass
    text = f"numpy {np.__version__} with {name}"
    lib = _openblas_lib()
    if lib is None:
        return text
    extra = []
    for prefix in ("scipy_openblas_", "openblas_"):
        for suffix in ("64_", ""):
            fn = getattr(lib, f"{prefix}get_corename{suffix}", None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                extra.append(f"kernels for {fn().decode()}")
                nt = getattr(lib, f"{prefix}get_num_threads{suffix}", None)
                if nt is not None:
                    nt.restype = ctypes.c_int
                    extra.append(f"{nt()} thread(s)")
                break
        if extra:
            break
    return text + (f" ({', '.join(extra)})" if extra else "")


# ---------------------------------------------------------------------------
# calling OpenBLAS directly (benchmarks)

def _symbol(lib, names):
    for n in names:
        fn = getattr(lib, n, None)
        if fn is not None:
            return n, fn
    return None, None


class OpenBlas:
    """numpy's OpenBLAS through ctypes: ``sgemm`` in place (``C = alpha A
    @ B + beta C``, row-major, what a kernel computing ``C += A @ B`` is
    compared with, without numpy's temporary and extra pass) and its
    thread count. ``OpenBlas.load()`` is None when numpy has no OpenBLAS
    with these symbols."""

    def __init__(self, lib, sgemm_name, sgemm, set_threads):
        self.lib = lib
        self.ilp64 = "64" in sgemm_name
        self._int = ctypes.c_int64 if self.ilp64 else ctypes.c_int
        self._sgemm = sgemm
        self._sgemm.restype = None
        i, f, p = self._int, ctypes.c_float, ctypes.c_void_p
        self._sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                i, i, i, f, p, i, p, i, f, p, i]
        self._set_threads = set_threads

    @classmethod
    def load(cls):
        import numpy  # noqa: F401  (after configure_blas)
        lib = _openblas_lib()
        if lib is None:
            return None
        name, fn = _symbol(lib, ("scipy_cblas_sgemm64_", "cblas_sgemm64_",
                                 "scipy_cblas_sgemm", "cblas_sgemm"))
        _, thr = _symbol(lib, ("scipy_openblas_set_num_threads64_",
                               "openblas_set_num_threads64_",
                               "scipy_openblas_set_num_threads",
                               "openblas_set_num_threads"))
        if fn is None:
            return None
        return cls(lib, name, fn, thr)

    def set_threads(self, n: int) -> bool:
        if self._set_threads is None:
            return False
        self._set_threads(ctypes.c_int(n))
        return True

    def sgemm(self, A, B, C, alpha=1.0, beta=1.0):
        self.bound_sgemm(A, B, C, alpha, beta)()

    def bound_sgemm(self, A, B, C, alpha=1.0, beta=1.0):
        """``sgemm(A, B, C, alpha, beta)`` as a callable with no arguments,
        the arrays' addresses looked up once (see the kernels' ``bound``)."""
        M, K = A.shape
        N = B.shape[1]
        fn, a, b, c = (self._sgemm, A.ctypes.data, B.ctypes.data,
                       C.ctypes.data)

        def call(_keep=(A, B, C)):
            fn(101, 111, 111, M, N, K, alpha, a, K, b, N, beta, c, N)
        return call


def _openmp_lib():
    for name in ("libgomp.so.1", "libgomp.so", "libomp.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def openmp_threads() -> int | None:
    """The thread count later parallel regions of this thread get
    (``omp_get_max_threads``), None without an OpenMP runtime."""
    lib = _openmp_lib()
    return None if lib is None else int(lib.omp_get_max_threads())


def _loaded_openmp_runtimes() -> list:
    """Every OpenMP runtime mapped in this process: libgomp, and Intel's
    libiomp5 (MKL) or LLVM's libomp when something loaded them. Either of
    those exports the ``GOMP_*`` entry points too, and when it was loaded
    with global symbols first, a kernel compiled against libgomp runs its
    ``par`` loops on it (measured: with MKL loaded, exo_hl's two-thread
    SGEMM ran on one thread, libgomp's count being the only one set)."""
    libs = [lib for lib in (_openmp_lib(),) if lib is not None]
    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if ln.rstrip().endswith(
                (".so", ".so.1", ".so.5")) and "/lib" in ln}
    except OSError:
        return libs
    for path in sorted(paths):
        name = path.rsplit("/", 1)[-1]
        if name.startswith(("libiomp5", "libomp")):
            try:
                libs.append(ctypes.CDLL(path))
            except OSError:
                continue
    return libs


def set_openmp_threads(n: int) -> bool:
    """Set the thread count of every OpenMP runtime in the process (the
    one compiled kernels with ``par`` loops run on, whichever that is),
    for later parallel regions of this thread."""
    libs = _loaded_openmp_runtimes()
    for lib in libs:
        lib.omp_set_num_threads(ctypes.c_int(n))
    return bool(libs)
