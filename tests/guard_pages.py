"""Arrays that end (or start) exactly at a page no access is allowed to:
a kernel or instruction that reads or writes one element past its array
(a full vector loaded for a tail, an emulated masked load touching every
lane) then crashes with SIGSEGV instead of reading a neighbour's bytes
unnoticed. Comparing values cannot see such a read; this does.

``guarded(shape, dtype, at)``: a C-contiguous array whose last byte is
the last before an inaccessible page (``at='end'``) or whose first byte
is the first after one (``at='start'``); the other side is guarded too.
The array owns its mapping (numpy keeps the ``mmap`` alive as its base).
"""
from __future__ import annotations

import ctypes
import mmap

import numpy as np

PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.mprotect.restype = ctypes.c_int


def guarded(shape, dtype=np.float32, at: str = "end", fill=0):
    """A new array of ``shape`` and ``dtype`` (filled with ``fill``)
    between two inaccessible pages, flush against the one after it
    (``at='end'``) or before it (``at='start'``)."""
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in np.atleast_1d(shape))
    count = int(np.prod(shape))
    nbytes = count * dtype.itemsize
    pages = -(-nbytes // PAGE) + 2
    mm = mmap.mmap(-1, pages * PAGE)
    view = ctypes.c_char.from_buffer(mm)
    addr = ctypes.addressof(view)
    del view                             # (the mapping stays exportable)
    for p in (0, pages - 1):
        if _libc.mprotect(addr + p * PAGE, PAGE, 0) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
    off = (pages - 1) * PAGE - nbytes if at == "end" else PAGE
    out = np.frombuffer(mm, dtype, count, off).reshape(shape)
    out[...] = fill
    return out
