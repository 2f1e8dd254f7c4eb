"""Cache-line aligned numpy arrays for the apps' kernels.

numpy puts a large array 16 bytes past a cache line (``malloc``'s
alignment), so every 64-byte vector load from it straddles two lines.
A buffer a kernel reads with full-width vector loads many times over
(pre-packed weights) should start on a line: measured on the conv layer
of Halide's benchmark (AVX-512, 1 thread, loaded Intel Xeon, CPU clock),
the same kernel ran 18-20% slower with its pre-packed weights 16 or 48
bytes past a line than on one.
"""
from __future__ import annotations

import numpy as np

#: bytes: a cache line, and one AVX-512 register
LINE = 64


def aligned_empty(shape, dtype=np.float32, align: int = LINE):
    """An uninitialized C-contiguous array whose data starts on an
    ``align``-byte boundary (a view into a slightly larger buffer)."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else \
        tuple(int(s) for s in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + align, np.uint8)
    skip = -raw.ctypes.data % align
    return raw[skip:skip + nbytes].view(dtype).reshape(shape)


def aligned_copy(a, align: int = LINE):
    """``a`` copied into a C-contiguous ``align``-byte aligned array."""
    out = aligned_empty(a.shape, a.dtype, align)
    out[...] = a
    return out
