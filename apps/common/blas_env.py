"""numpy's BLAS as a fair single-core baseline.

``configure_blas()`` must run before numpy is imported (OpenBLAS reads its
environment once, when it is loaded):

* one thread (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ...), since
  the kernels it is compared with are single-threaded;
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
    core = os.environ.pop("OPENBLAS_CORETYPE", None)
    if core is not None:
        notes.append(f"unset OPENBLAS_CORETYPE={core} (it forces OpenBLAS's "
                     f"{core} kernels; now OpenBLAS picks them for this CPU)")
    else:
        notes.append("OPENBLAS_CORETYPE is not set (OpenBLAS picks its "
                     "kernels for this CPU)")
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
