"""Argument dimensions are never negative.

``f32[n - 4]`` is a valid annotation only when the preconditions keep
``n >= 4``. This runs once, when ``@proc`` decorates a function: rewrites
never change argument types, so their results need not repeat it.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..errors import located


def check_arg_dims(proc_ir) -> None:
    """Every dimension of a tensor argument is >= 0 for all argument values
    the preconditions allow (``f32[n - 4]`` needs ``assert n >= 4``); run
    once, on the parsed procedure (rewrites keep argument types)."""
    from ..core_ir.printer import expr_to_str
    from ..effects.api import counterexample, prove
    from ..effects.context import Ctx, proc_hyps
    from ..errors import BoundsError
    ctx = None
    sizes = {a.name for a in proc_ir.args if a.type is IR.Size}
    for a in proc_ir.args:
        if not isinstance(a.type, IR.Tensor):
            continue
        for d, h in enumerate(a.type.hi):
            if _plainly_nonneg(h, sizes):
                continue
            if isinstance(h, IR.Const):
                raise BoundsError(located(
                    f"dimension {d} of argument '{a.name.name}' is {h.val}: "
                    f"a dimension is never negative",
                    h.srcinfo or a.srcinfo, proc_ir.name))
            else:
                if ctx is None:
                    # sizes are positive and the preconditions hold; not the
                    # stride facts of dense tensors, which presume this
                    ctx = Ctx(proc_ir, (), [
                        h for h in proc_hyps(proc_ir)
                        if not _mentions_stride(h)])
                goal = IR.BinOp(">=", h, IR.Const(0, type=IR.Int),
                                type=IR.Bool)
                if prove(goal, ctx):
                    continue
                model = counterexample(goal, ctx) or {}
                why = ", ".join(f"{k} = {v}" for k, v in sorted(
                    model.items())) or "some argument values"
            raise BoundsError(located(
                f"dimension {d} of argument '{a.name.name}' "
                f"({expr_to_str(h)}) may be negative; counterexample: {why}"
                f"; add a precondition (assert ...) that keeps it >= 0",
                getattr(h, "srcinfo", None) or a.srcinfo, proc_ir.name))


def _plainly_nonneg(e, sizes) -> bool:
    """Syntactically >= 0 (saves a solver query for ``f32[n, 4 * m]``)."""
    if isinstance(e, IR.Const):
        return type(e.val) is int and e.val >= 0
    if isinstance(e, IR.Read) and not e.idx:
        return e.name in sizes
    if isinstance(e, IR.BinOp) and e.op in ("+", "*", "/", "%"):
        return _plainly_nonneg(e.lhs, sizes) and _plainly_nonneg(e.rhs, sizes)
    return False


def _mentions_stride(term) -> bool:
    from ..effects import eexpr as E
    stack = [term]
    while stack:
        t = stack.pop()
        if isinstance(t, E.StrideVar):
            return True
        if isinstance(t, tuple):
            stack.extend(t)
    return False
