"""Where a numpy argument's bytes lie: its alignment, the span it can
touch and whether two of its indices share bytes. Kept apart from the
argument checks (``call_args``) that use them, so the apps' raw calls
(``apps/common/raw_call``) apply the same rules without the call plan.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["misalignment", "self_overlaps", "dense_strides", "byte_span"]


def misalignment(v, addr=None) -> Optional[str]:
    """None when the data of the numpy array ``v`` (at ``addr``, default
    its own address) starts at a multiple of its element size, else why it
    is refused and how to get an aligned array. C requires a ``float *``
    to be aligned to ``_Alignof(float)`` (the element size for every
    exo_hl type on the targets it runs on): passing
    ``np.frombuffer(buf, np.float32, offset=1)`` as one is undefined
    behaviour (an element-aligned vector load, RISC-V's ``vle32``, may
    trap). Every argument check of a call goes through this one rule (the
    compiled callable, the interpreter, the apps' raw calls); strides are
    already whole elements, so every element is aligned when the first
    is. The library instructions use unaligned vector loads and stores
    (``_mm512_loadu_ps`` ...), so nothing stronger is needed."""
    if addr is None:
        addr = v.ctypes.data
    size = v.itemsize
    if addr % size == 0:
        return None
    return (f"({v.dtype}) is misaligned: its data starts {addr % size} "
            f"byte{'s' if addr % size > 1 else ''} past a multiple of "
            f"{size} bytes (its element size, the alignment C needs of "
            f"its pointer): pass an aligned copy, e.g. "
            f"np.require(x, requirements='CA') or x.copy() "
            f"(np.ascontiguousarray returns a contiguous array unchanged, "
            f"misaligned); for a written argument, read the results from "
            f"that copy")


#: elements up to which a layout that is not nested (below) is checked
#: element by element; a larger one is refused
_EXACT_OVERLAP_LIMIT = 1 << 22


def self_overlaps(v) -> bool:
    """Whether two distinct indices of ``v`` (positive strides) address
    overlapping bytes. Layouts whose dimensions nest (sorted by stride,
    each stride is past the extent of the smaller ones: every row-major
    slice, transpose and step) are settled at once; others by listing the
    offsets, and, past ``_EXACT_OVERLAP_LIMIT`` elements, counted as
    overlapping (not proven otherwise)."""
    dims = sorted((s, d) for s, d in zip(v.strides, v.shape) if d > 1)
    if v.size == 0:
        return False
    extent = v.itemsize
    for s, d in dims:
        if s < extent:
            break
        extent = s * (d - 1) + extent
    else:
        return False
    if v.size > _EXACT_OVERLAP_LIMIT:
        return True
    offsets = np.zeros(1, np.int64)
    for s, d in dims:
        offsets = (offsets[:, None] + s * np.arange(d, dtype=np.int64)
                   ).reshape(-1)
    offsets.sort()
    return bool((np.diff(offsets) < v.itemsize).any())


def dense_strides(v):
    """Row-major strides of ``v``'s shape, in bytes."""
    out, step = [], v.itemsize
    for d in reversed(v.shape):
        out.append(step)
        step *= max(d, 1)
    return tuple(reversed(out))


def byte_span(v, lo):
    """``[first, last]`` byte addresses an array at address ``lo`` (with
    non-negative strides) can touch; an empty array touches none (None)."""
    if v.size == 0:
        return None
    if v.flags.c_contiguous:
        return lo, lo + v.nbytes - 1
    return lo, lo + sum((d - 1) * s for d, s in zip(v.shape, v.strides)
                        ) + v.itemsize - 1
