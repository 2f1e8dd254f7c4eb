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

import ast
from types import SimpleNamespace

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.traversal import free_vars, fresh_copy, walk
from ..errors import ExoSyntaxError, ExoTypeError
from . import _common as C


def add_guard(proc, stmt, cond):
    path, s = C.resolve_stmt(proc, stmt, "add_guard")

    def err(msg):
        return C.scheduling_error(proc, s, "add_guard: " + msg)

    if isinstance(s, (IR.Alloc, IR.WindowStmt)):
        raise err(f"cannot guard the binding of '{s.name.name}': later "
                  f"statements would lose it")
    scope = _names_in_scope(proc.ir(), path)
    if isinstance(cond, str):
        c = _parse_cond(proc, cond, scope, s, err)
    elif isinstance(cond, IR.expr):
        c = cond
        visible = {v.sym for v in scope.values()}
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
    *parent, (field, k) = path
    return proc._derive(new_ir, "add_guard",
                        forward=C.forward_wrap(tuple(parent), field, k, k + 1))


def _names_in_scope(ir, path):
    """name -> variable (sym, type) visible at ``path`` (inner names win)."""
    from ..frontend.parser import _Var
    env = {}
    for a in ir.args:
        env[a.name.name] = _Var(a.name, a.type, a.mem)
    node = ir
    path = tuple(path)
    for depth, (field, i) in enumerate(path):
        block = getattr(node, field)
        for prev in block[:i]:
            if isinstance(prev, IR.Alloc):
                env[prev.name.name] = _Var(prev.name, prev.type, prev.mem)
            elif isinstance(prev, IR.WindowStmt):
                env[prev.name.name] = _Var(prev.name, prev.rhs.type)
        node = block[i]
        if isinstance(node, IR.For) and depth < len(path) - 1:
            env[node.iter.name] = _Var(node.iter, IR.Index)
    return env


def _config_scope(ir):
    """Configs the procedure mentions, by name (for ``Cfg.field``)."""
    scope = {}
    for root in tuple(ir.body) + tuple(ir.preds):
        for n in walk(root):
            if isinstance(n, (IR.ReadConfig, IR.WriteConfig)):
                scope[n.config.name()] = n.config
    return scope


def _parse_cond(proc, text, env, s, err):
    from ..frontend.parser import ProcParser, SourceMap
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as e:
        raise err(f"cannot parse the condition {text!r}: {e.msg}") from None
    si = s.srcinfo
    srcmap = SourceMap(getattr(si, "filename", "<add_guard>"), [text.strip()],
                       getattr(si, "lineno", 1) or 1)
    parser = ProcParser(SimpleNamespace(name=proc.name()), _config_scope(
        proc.ir()), srcmap)
    try:
        return parser.control_expr(node, env, "the guard condition",
                                   want_bool=True)
    except (ExoTypeError, ExoSyntaxError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        why = why.split(f"in procedure '{proc.name()}': ", 1)[-1]
        raise err(f"invalid condition {text!r}: {why}") from None
