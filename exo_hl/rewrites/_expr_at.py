"""Rebuilding one expression inside a statement, by expression path.

Expression rewrites (``commute_expr``, ``rewrite_expr``) change exactly the
expression an ``ExprCursor`` denotes; the statement around it is rebuilt
sharing everything else. Paths follow ``exo_hl.cursors``: ``(field, index
or None)`` steps from the statement.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import walk
from ..cursors import InvalidCursorError


def replace_expr_at(node, epath, new):
    """``node`` (a statement or expression) with the expression at
    ``epath`` replaced by ``new``, and the types of the expressions around
    it recomputed as the frontend types them (``rejoin_type``)."""
    from ._precision import rejoin_type
    if not epath:
        return new
    (field, i), rest = epath[0], epath[1:]
    if field not in node._fields:
        raise InvalidCursorError(f"invalid expression path {epath!r}")
    v = getattr(node, field)
    if i is None:
        out = node.update(**{field: replace_expr_at(v, rest, new)})
    else:
        if not isinstance(v, tuple) or not 0 <= i < len(v):
            raise InvalidCursorError(f"invalid expression path {epath!r}")
        child = replace_expr_at(v[i], rest, new)
        out = node.update(**{field: v[:i] + (child, ) + v[i + 1:]})
    retyped = rejoin_type(out) if isinstance(out, IR.expr) else None
    return out if retyped is None else retyped


def reads_config(e) -> bool:
    """True when ``e`` reads a configuration field (its value may change
    between two points of a program)."""
    return any(isinstance(n, IR.ReadConfig) for n in walk(e))


def expr_text(e) -> str:
    try:
        from ..core_ir.printer import expr_to_str
        return expr_to_str(e)
    except Exception:  # never let the printer hide the real error
        return repr(e)


def config_scope(proc_ir) -> dict:
    """Name -> config object of every config the procedure mentions, so a
    user-written expression (``'Cfg.k + 1'``) can name them."""
    out = {}
    for s in tuple(proc_ir.body) + tuple(proc_ir.preds):
        for n in walk(s):
            if isinstance(n, (IR.ReadConfig, IR.WriteConfig)):
                out[n.config.name()] = n.config
    return out
