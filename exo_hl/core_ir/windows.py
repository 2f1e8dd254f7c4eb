"""Building window expressions: the one place their types are computed.

A window's type records its extents ``hi - lo`` per sliced dimension. The
frontend, ``replace``, ``inline`` and the buffer rewrites all make windows;
computing the extents in one way (exact algebraic simplification, no range
assumptions) keeps a printed procedure reparsing to the identical IR.
"""
from __future__ import annotations

from .nodes import IR
from .simplify import simplify_expr
from .types import basetype


def window_extent(lo, hi, srcinfo=None):
    """``hi - lo`` in normal form (valid for all values of the variables)."""
    e = IR.BinOp("-", hi, lo, type=IR.Index, srcinfo=srcinfo)
    return simplify_expr(e)


def make_window(buf, buf_type, idx, srcinfo=None):
    """``buf[idx]`` as a typed ``WindowExpr``; ``idx`` holds ``Interval`` and
    ``Point`` accesses, one per dimension of ``buf_type``."""
    his = tuple(window_extent(w.lo, w.hi, w.srcinfo or srcinfo)
                for w in idx if isinstance(w, IR.Interval))
    as_t = IR.Tensor(his, True, basetype(buf_type))
    wt = IR.WindowType(buf_type, as_t, buf, tuple(idx))
    return IR.WindowExpr(buf, tuple(idx), type=wt, srcinfo=srcinfo)
