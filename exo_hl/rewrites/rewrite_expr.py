"""``rewrite_expr(expr, new_expr)``: replace a control expression by one
proven equal where it is evaluated.

``new_expr`` (a string in the procedure's syntax, or an int) is read with
the names visible at the statement holding the expression. The proof is
``expr == new_expr`` (for booleans: both true or both false) under the
statement's context: preconditions, enclosing loop bounds and guards, and
configuration values at that point (effect analysis, SMT). Data
expressions are refused: their equality is not a question of control
arithmetic.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..effects.api import counterexample, context, prove
from . import _common as C
from ._expr_at import config_scope, expr_text, replace_expr_at

OP = "rewrite_expr"


def rewrite_expr(proc, expr, new_expr):
    spath, epath, e = C.resolve_expr(proc, expr, OP)
    ir = proc.ir()
    s = C.get_stmt(ir, spath)

    def fail(msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    if not T.is_control(e.type):
        raise fail(f"'{expr_text(e)}' is not a control expression")
    *parent, (field, k) = spath
    new = C.parse_expr_at(proc, new_expr, tuple(parent), field, k, OP,
                          scope=config_scope(ir))
    is_bool = e.type is IR.Bool
    if (new.type is IR.Bool) != is_bool or not T.is_control(new.type) or (
            (e.type is IR.Stride) != (new.type is IR.Stride)):
        raise fail(f"'{expr_text(new)}' ({T.type_name(new.type)}) cannot "
                   f"replace '{expr_text(e)}' ({T.type_name(e.type)})")
    if is_bool:
        both = IR.BinOp("and", e, new, type=IR.Bool)
        neither = IR.BinOp("and", IR.Not(e, type=IR.Bool),
                           IR.Not(new, type=IR.Bool), type=IR.Bool)
        pred = IR.BinOp("or", both, neither, type=IR.Bool)
    else:
        pred = IR.BinOp("==", e, new, type=IR.Bool)
    ctx = context(ir, spath)
    if not prove(pred, ctx):
        cex = counterexample(pred, ctx)
        why = f" (e.g. {cex})" if cex else ""
        # conditions in parentheses: '(k / 2 == -1) == (k == -3 or k ==
        # -2)', not a chain of == and or
        a, b = expr_text(e), expr_text(new)
        if is_bool:
            a, b = f"({a})", f"({b})"
        raise fail(f"cannot prove {a} == {b} here{why}")
    new_s = replace_expr_at(s, epath, new.update(srcinfo=e.srcinfo))
    new_ir = C.replace_stmts_at(ir, spath, new_s)
    return proc._derive(new_ir, OP, forward=C.forward_exprs(
        C.forward_replace(spath, 1, keep_inside=True), spath,
        replaced=[epath]))
