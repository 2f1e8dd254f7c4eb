"""``commute_expr(expr)``: ``a op b`` becomes ``b op a``.

Allowed for the operators that are commutative on every value of every
type, with no evaluation-order effect (expressions have none): ``+`` and
``*`` (IEEE addition and multiplication are commutative, integer ones wrap
the same way), ``==``, ``and``, ``or``. ``-``, ``/``, ``%`` and the
ordering comparisons are refused.
"""
from __future__ import annotations

from ..core_ir import operators as OPS
from ..core_ir.nodes import IR
from . import _common as C
from ._expr_at import expr_text, replace_expr_at

OP = "commute_expr"
COMMUTATIVE = OPS.COMMUTATIVE


def commute_expr(proc, expr):
    spath, epath, e = C.resolve_expr(proc, expr, OP)
    ir = proc.ir()
    s = C.get_stmt(ir, spath)
    if not isinstance(e, IR.BinOp):
        raise C.scheduling_error(proc, s, f"{OP}: '{expr_text(e)}' is not a "
                                 f"binary operation")
    if e.op not in COMMUTATIVE:
        raise C.scheduling_error(proc, s, f"{OP}: '{e.op}' in "
                                 f"'{expr_text(e)}' is not commutative")
    new_s = replace_expr_at(s, epath, e.update(lhs=e.rhs, rhs=e.lhs))
    new_ir = C.replace_stmts_at(ir, spath, new_s)
    lhs, rhs = epath + (("lhs", None), ), epath + (("rhs", None), )
    return proc._derive(new_ir, OP, forward=C.forward_exprs(
        C.forward_replace(spath, 1, keep_inside=True), spath,
        moves={lhs: rhs, rhs: lhs}))
