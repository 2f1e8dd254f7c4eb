"""A compiled procedure's C function called straight through ctypes.

The apps' entry points check their arguments once themselves and then
skip the compiled callable's per-call checks (tens of microseconds, which
matter for small products). What they must not skip is the function's
allocation status: a kernel with a heap buffer returns it, and a failed
allocation dropped here would leave the output silently unchanged.
"""
from __future__ import annotations

import ctypes


def raw_function(compiled, n_sizes: int, n_pointers: int):
    """(library, C function, status check) of a ``compile()`` result whose
    arguments are ``n_sizes`` size/index values then ``n_pointers``
    pointers (after the context pointer). Call ``check(fn(...))``: it
    raises a nonzero status as the compiled callable does (ValueError /
    MemoryError) and returns None otherwise."""
    lib = ctypes.CDLL(compiled.library_path)
    fn = getattr(lib, compiled.name)
    fn.restype = ctypes.c_int if compiled.returns_status else None
    lib.exo_hl_sizeof_fast32.restype = ctypes.c_size_t
    fast = ctypes.c_int64 if lib.exo_hl_sizeof_fast32() == 8 \
        else ctypes.c_int32
    p = ctypes.c_void_p
    fn.argtypes = [p] + [fast] * n_sizes + [p] * n_pointers
    return lib, fn, compiled.check_status
