"""``add_guard(stmt, cond)``: ``s`` becomes ``if cond: s else: s``.

Both branches run the same statement, so the rewrite is always equivalent;
it exists to let later rewrites specialize each branch. What must hold is
that the result is well typed: ``cond`` is a bool *control* expression over
names in scope at ``s`` (control arguments, enclosing loop iterators,
config fields). It is given as source text (parsed by the frontend's
expression parser with the procedure's names in scope) or as an IR
expression. Data-dependent or unknown names are rejected. Allocations and
window statements cannot be guarded (their names would go out of scope).
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.traversal import free_vars, fresh_copy, walk
from ..errors import ExoSyntaxError, ExoTypeError
from ..frontend import fragment as F
from ..provenance import derive
from . import _common as C
from ._expr_at import config_scope


def add_guard(proc, stmt, cond):
    path, s = C.resolve_stmt(proc, stmt, "add_guard")

    def err(msg):
        return C.scheduling_error(proc, s, "add_guard: " + msg)

    if isinstance(s, (IR.Alloc, IR.WindowStmt)):
        raise err(f"cannot guard the binding of '{s.name.name}': later "
                  f"statements would lose it")
    *parent, (field, k) = path
    names = F.names_at(proc.ir(), tuple(parent), field, k)
    if isinstance(cond, str):
        c = _parse_cond(proc, cond, names, s, err)
    elif isinstance(cond, IR.expr):
        c = cond
        visible = {sym for sym, _, _ in names.values()}
        unknown = free_vars(c) - visible
        if unknown:
            raise err("the condition mentions names not in scope here: "
                      + ", ".join(sorted(v.name for v in unknown)))
        if c.type is not IR.Bool or any(
                isinstance(n, IR.expr) and not T.is_control(n.type)
                for n in walk(c)):
            raise err("the condition must be a bool control expression")
    else:
        raise err(f"the condition must be a string or an IR expression, got "
                  f"{cond!r}")
    new = IR.If(c, (s, ), fresh_copy((s, )), srcinfo=s.srcinfo)
    new_ir = C.replace_stmts_at(proc.ir(), path, (new, ))
    return derive(proc, new_ir, "add_guard",
                  forward=C.forward_wrap(tuple(parent), field, k, k + 1))


def _parse_cond(proc, text, names, s, err):
    try:
        node = F.parse_text(text)
    except SyntaxError as e:
        raise err(f"cannot parse the condition {F.excerpt(text)!r}: "
                  f"{e.msg}") from None
    si = s.srcinfo
    try:
        return F.parse_condition(
            proc.ir(), text, names, "the guard condition",
            scope=config_scope(proc.ir()),
            filename=getattr(si, "filename", "<add_guard>"),
            lineno=getattr(si, "lineno", 1) or 1, node=node)
    except (ExoTypeError, ExoSyntaxError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        why = why.split(f"in procedure '{proc.name()}': ", 1)[-1]
        raise err(f"invalid condition {text!r}: {why}") from None
