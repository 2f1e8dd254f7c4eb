"""One precision per data expression: the rule C code generation applies.

C computes each expression in one precision (``float``, ``double``,
``_Float16``, or ``int`` for every integer width), so an expression whose
data leaves have two floating-point precisions, or a float and an
integer, is refused by ``compile()``; the interpreter would compute it.
It lives here, below both users, because a rewrite that puts a typed read
where literals stood (``bind_expr`` with a ``precision``) must refuse what
``compile()`` would refuse, not leave it for the build.
"""
from __future__ import annotations

from . import operators as OPS
from .nodes import IR
from .types import TYPE_NAMES, is_data, is_real_scalar
from .visitors import Visitor
from ..errors import ExoTypeError

#: operators whose value is a boolean whatever their operands' types
_BOOL_VALUED = OPS.CMP_OPS | OPS.BOOL_OPS

#: integer element types by width (all narrower than C's int, or int itself)
INT_BITS = {IR.I8: 8, IR.UI8: 8, IR.I16: 16, IR.UI16: 16, IR.I32: 32}


class _DataLeaves(Visitor):
    """The data leaves of one expression, the first of each precision.
    Indices, windows and control arithmetic hold none; comparisons and
    logic may compare data. An extern with its own argument types is a
    leaf of its result's precision, its arguments checked on their own."""

    def __init__(self, fail, stmt):
        self.found, self.fail, self.stmt = {}, fail, stmt

    def leaf(self, x):
        if is_real_scalar(x.type) and x.type is not IR.Num:
            # a bf16 is read as the f32 it is the top half of
            t = IR.F32 if x.type is IR.BF16 else x.type
            self.found.setdefault(t, x)

    def visit_Extern(self, x):
        if not x.f.own_arg_types:
            return None
        self.leaf(x)
        for a in x.args:
            check_precision(a, self.fail, self.stmt)
        return False

    def visit_Read(self, x):
        self.leaf(x)
        return False

    visit_ReadConfig = visit_Read

    def visit_WindowExpr(self, x):
        return False

    def visit_BinOp(self, x):
        return is_data(x.type) or x.op in _BOOL_VALUED

    def visit_USub(self, x):
        return is_data(x.type)


def check_precision(e, fail, stmt=None):
    """All data leaves of one expression share one precision, except
    that integers of different widths may mix (C computes them all in
    int, as the interpreter computes them exactly); returns it.
    ``fail(cls, msg, node)`` raises."""
    v = _DataLeaves(fail, stmt)
    v.visit(e)
    found = v.found
    if len(found) > 1 and all(t in INT_BITS for t in found):
        # integers of every width are computed in C's int (the usual
        # arithmetic conversions), exactly as the interpreter does
        return max(found, key=lambda t: INT_BITS[t])
    if len(found) > 1:
        names = ", ".join(TYPE_NAMES[t] for t in found)
        fail(ExoTypeError,
             f"mixed precisions ({names}) in one expression; "
             f"bind a sub-expression to a buffer of one precision "
             f"first", stmt or e)
    return next(iter(found), None)
