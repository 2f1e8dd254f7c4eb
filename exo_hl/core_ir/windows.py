"""Window expressions: building them (``make_window``, defined with the
simplifier whose normal form their types use) and re-typing window names.

A window's type records its extents ``hi - lo`` per sliced dimension. The
frontend, ``replace``, ``inline`` and the buffer rewrites all make windows;
computing the extents in one way (exact algebraic simplification, no range
assumptions) keeps a printed procedure reparsing to the identical IR.
"""
from __future__ import annotations

from .nodes import IR
# the extent normal form is the simplifier's, so window construction lives
# beside it (simplify -> windows is the only direction); re-exported here
from .simplify import make_window, window_extent  # noqa: F401


def retype_window_names(proc_ir, parent=None):
    """Re-derive the type carried by every use of a window-statement name
    from the statement that binds it.

    A use of ``w`` (``Read(w, ())`` passed to a call, ``w[...]`` windows of
    it) carries a copy of ``w``'s type; rewrites that rebuild the binding
    would otherwise have to find and fix every copy. Returns the same object
    when nothing changes.

    ``parent``: a procedure ``proc_ir`` was edited from that is itself
    already retyped (a fixed point of this function). Then only the edited
    statements are retyped, plus the ones after them if the window
    statements among the edited ones bind different names or types.
    """
    if parent is None:
        body, _ = _block(proc_ir.body, {})
        return proc_ir if body is proc_ir.body else proc_ir.update(body=body)
    body = _block_diff(parent.body, proc_ir.body, {})
    return proc_ir if body is proc_ir.body else proc_ir.update(body=body)


def _block_diff(old, new, env):
    """``_block(new, env)``, given that ``old`` is retyped under ``env``:
    only the statements differing from ``old`` (and, if the window
    statements among them bind differently, the ones after) are visited;
    a loop (if) edited inside, with the same header, is compared
    recursively. Returns ``new`` itself when nothing changes."""
    from .blockinfo import diff, sc_prefix
    p, eo, en = diff(old, new)
    if p == eo == en:
        return new
    for s in sc_prefix(old, p):   # old[:p] == new[:p]
        if isinstance(s, IR.WindowStmt):
            env = dict(env)
            env[s.name] = s.rhs.type
    mid = new[p:en]
    region = None
    if eo - p == 1 and en - p == 1:
        o, n = old[p], new[p]
        if isinstance(n, IR.For) and isinstance(o, IR.For) and \
                (o.lo, o.hi) == (n.lo, n.hi):
            b = _block_diff(o.body, n.body, env)
            region = mid if b is n.body else (n.update(body=b), )
        elif isinstance(n, IR.If) and isinstance(o, IR.If) and \
                o.cond == n.cond:
            b = _block_diff(o.body, n.body, env)
            e = _block_diff(o.orelse, n.orelse, env)
            region = mid if b is n.body and e is n.orelse else (
                n.update(body=b, orelse=e), )
    env2 = env
    if region is None:
        region, env2 = _block(mid, env)
    suffix = None   # the same as in new (no copy of a long tail unless needed)
    if _top_windows(old[p:eo]) != _top_windows(region):
        tail = new[en:]
        suffix, _ = _block(tail, env2)
        if suffix is tail:
            suffix = None
    if region is mid and suffix is None:
        return new
    return new[:p] + region + (new[en:] if suffix is None else suffix)


def _top_windows(stmts):
    return [(s.name, s.rhs.type) for s in stmts
            if isinstance(s, IR.WindowStmt)]


def _block(stmts, env):
    out, changed = [], False
    for s in stmts:
        ns = _stmt(s, env)
        changed |= ns is not s
        out.append(ns)
        if isinstance(ns, IR.WindowStmt):
            env = dict(env)
            env[ns.name] = ns.rhs.type
    return (tuple(out), env) if changed else (stmts, env)


def _fix_expr(e, env):
    from .traversal import map_node

    def fn(n):
        if isinstance(n, IR.Read) and not n.idx and n.name in env \
                and n.type != env[n.name]:
            return n.update(type=env[n.name])
        if isinstance(n, IR.WindowExpr) and n.name in env \
                and n.type.src_type != env[n.name]:
            return make_window(n.name, env[n.name], n.idx, n.srcinfo)
        return None
    return map_node(e, fn)


def _stmt(s, env):
    if not env:
        from .blockinfo import stmt_info
        if not stmt_info(s).has_win:
            return s   # no window name in scope here or inside
    if isinstance(s, (IR.For, IR.If)):
        changes = {}
        for field in ("body", "orelse"):
            if field in s._fields:
                nb, _ = _block(getattr(s, field), env)
                if nb is not getattr(s, field):
                    changes[field] = nb
        s2 = s.update(**changes) if changes else s
        fields = ("lo", "hi") if isinstance(s, IR.For) else ("cond", )
        upd = {f: _fix_expr(getattr(s2, f), env) for f in fields}
        upd = {f: v for f, v in upd.items() if v is not getattr(s2, f)}
        return s2.update(**upd) if upd else s2
    if not env:
        return s
    return _fix_expr(s, env)
