"""A compiled procedure's C function called straight through ctypes.

The apps' entry points check their arguments once themselves and then
skip the compiled callable's per-call checks (tens of microseconds, which
matter for small products). What they must not skip is the function's
allocation status: a kernel with a heap buffer returns it, and a failed
allocation dropped here would leave the output silently unchanged. Nor
may they skip the argument checks a kernel relies on: ``float32_array``
and ``check_no_overlap`` are those checks, one copy for every app.
"""
from __future__ import annotations

import ctypes
import math
import numbers

import numpy as np

from exo_hl.core_ir.array_layout import misalignment


def raw_function(compiled, n_sizes: int, n_pointers: int, names=None):
    """(library, C function, status check) of a ``compile()`` result whose
    arguments are ``n_sizes`` size/index values then ``n_pointers``
    pointers (after the context pointer). Call ``check(fn(...))``: it
    raises a nonzero status as the compiled callable does (ValueError /
    MemoryError) and returns None otherwise. The procedure's signature is
    checked to be that (``check_signature``), so a kernel whose arguments
    changed order or kind (a window is a struct, not a pointer) is
    refused here instead of called with the wrong values."""
    check_signature(compiled.proc, n_sizes, n_pointers, names)
    lib = ctypes.CDLL(compiled.library_path)
    fn = getattr(lib, compiled.name)
    fn.restype = ctypes.c_int if compiled.returns_status else None
    lib.exo_hl_sizeof_fast32.restype = ctypes.c_size_t
    fast = ctypes.c_int64 if lib.exo_hl_sizeof_fast32() == 8 \
        else ctypes.c_int32
    p = ctypes.c_void_p
    fn.argtypes = [p] + [fast] * n_sizes + [p] * n_pointers
    return lib, fn, compiled.check_status


def check_signature(proc, n_sizes: int, n_pointers: int, names=None):
    """``ValueError`` unless ``proc``'s arguments (an IR procedure: a
    compiled callable's ``.proc``) are ``n_sizes`` control
    values then ``n_pointers`` dense tensors or data scalars (each passed
    as one pointer) and, when ``names`` is given, are named ``names`` in
    that order (the raw call passes its values by position)."""
    from exo_hl.core_ir.types import (is_control, is_real_scalar,
                                      is_tensor_or_window, is_window)
    args = list(proc.args)
    kinds = [is_control(a.type) for a in args]
    ok = (len(args) == n_sizes + n_pointers and all(kinds[:n_sizes])
          and all(not is_window(a.type) and (is_tensor_or_window(a.type)
                                             or is_real_scalar(a.type))
                  for a in args[n_sizes:]))
    got = tuple(str(a.name) for a in args)
    if not ok or (names is not None and got != tuple(names)):
        raise ValueError(
            f"raw call of {proc.name}: its arguments ({', '.join(got)}) "
            f"are not {n_sizes} sizes then {n_pointers} dense buffers"
            + (f" named {', '.join(names)}" if names is not None else ""))
    # the C assumes the preconditions (undefined behaviour when false) and
    # a raw call skips the callable's check of them: only those a dense
    # buffer meets by itself are allowed (stride(X, last) == 1)
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir.printer import expr_to_str
    dense = {a.name: len(a.type.hi) for a in args
             if is_tensor_or_window(a.type)}
    for e in proc.preds:
        if not (isinstance(e, IR.BinOp) and e.op == "=="
                and isinstance(e.lhs, IR.StrideExpr)
                and dense.get(e.lhs.name) == e.lhs.dim + 1
                and isinstance(e.rhs, IR.Const) and e.rhs.val == 1):
            raise ValueError(
                f"raw call of {proc.name}: its precondition "
                f"{expr_to_str(e)} is not checked by a raw call")


#: the largest size a kernel takes (its size arguments are 32-bit values,
#: docs/semantics.md "Control values")
MAX_DIM = 2**31 - 1


def float32_array(app: str, x, name: str, ndim: int, written: bool = False):
    """``x`` when a raw call may pass its data pointer as ``name``: a
    C-contiguous ``ndim``-d float32 numpy array (native byte order), not
    empty, every size a 32-bit value, its data aligned to a float (the
    callable's rule, ``core_ir.array_layout.misalignment``) and, when the
    kernel writes it, writeable. These are the compiled callable's checks (core_ir/call_args)
    that a raw call skips; each app's entry point runs them on every
    array, so none of them can be forgotten by one app (conv wrote into a
    read-only ``out``, such as an array over an immutable ``bytes``)."""
    float32_pointer(app, x, name, ndim, written)
    return x


def float32_pointer(app: str, x, name: str, ndim: int,
                    written: bool = False, empty_ok: bool = False) -> int:
    """``float32_array``'s checks, then ``x``'s data address (the pointer
    the raw call passes): numpy takes most of a microsecond to give it,
    and the alignment check needs it too, so an entry point that asks
    once saves that per array and call (``sgemm``: 64^3 is 3 us). With
    ``empty_ok`` an empty array passes the type checks and gives 0 (the
    entry point computes such a call without the kernel, which refuses a
    size of 0)."""
    if not isinstance(x, np.ndarray) or x.dtype != np.float32 or \
            x.ndim != ndim or not x.flags.c_contiguous:
        raise TypeError(f"{app}: {name} must be a C-contiguous {ndim}-d "
                        f"float32 numpy array")
    if 0 in x.shape:
        if empty_ok:
            if written and not x.flags.writeable:
                raise ValueError(f"{app}: {name} is read-only")
            return 0
        raise ValueError(f"{app}: {name} is empty ({x.shape})")
    if max(x.shape) > MAX_DIM:
        raise ValueError(f"{app}: {name} is {'x'.join(map(str, x.shape))}; "
                         f"sizes above {MAX_DIM} are not supported")
    if written and not x.flags.writeable:
        raise ValueError(f"{app}: {name} is read-only")
    addr = x.ctypes.data
    why = misalignment(x, addr)
    if why is not None:
        raise ValueError(f"{app}: {name} {why}")
    return addr


def check_no_overlap(app: str, out, out_name: str, *inputs):
    """``ValueError`` when the written array ``out`` may share memory with
    one of ``inputs`` (the compiled callable refuses such calls: the
    kernel was checked assuming distinct buffers)."""
    if any(np.may_share_memory(out, a) for a in inputs):
        raise ValueError(f"{app}: {out_name} must not overlap the inputs")


def float32_scalar(app: str, v, name: str):
    """A real number (Python or numpy scalar, or a 0-d array) as the
    1-element float32 array a raw call passes for an ``f32`` scalar; as
    the compiled callable does (core_ir/call_args), a finite value past
    float32's range is refused (it became an infinity: ``alpha=1e39``
    turned ``0 * alpha`` into NaN), NaN and infinities are kept."""
    if isinstance(v, (bool, np.bool_)) or not (
            isinstance(v, numbers.Real) or
            (isinstance(v, np.ndarray) and v.ndim == 0
             and v.dtype.kind in "iuf")):
        raise TypeError(f"{app}: {name} must be a real number, got "
                        f"{type(v).__name__}")
    try:
        x = float(v)
    except OverflowError:            # an int past a float's range
        x = math.inf
        finite = True
    else:
        finite = math.isfinite(x)
    largest = float(np.finfo(np.float32).max)
    if finite and abs(x) > largest:
        raise ValueError(f"{app}: {name} = {v!r} is out of the range of "
                         f"float32 (largest finite value {largest:g})")
    return np.array([x], np.float32)
