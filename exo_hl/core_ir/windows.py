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


def retype_window_names(proc_ir):
    """Re-derive the type carried by every use of a window-statement name
    from the statement that binds it.

    A use of ``w`` (``Read(w, ())`` passed to a call, ``w[...]`` windows of
    it) carries a copy of ``w``'s type; rewrites that rebuild the binding
    would otherwise have to find and fix every copy. Returns the same object
    when nothing changes.
    """
    from .traversal import map_node

    def block(stmts, env):
        out, changed = [], False
        for s in stmts:
            ns = stmt(s, env)
            changed |= ns is not s
            out.append(ns)
            if isinstance(ns, IR.WindowStmt):
                env = dict(env)
                env[ns.name] = ns.rhs.type
        return (tuple(out), env) if changed else (stmts, env)

    def fix_expr(e, env):
        def fn(n):
            if isinstance(n, IR.Read) and not n.idx and n.name in env \
                    and n.type != env[n.name]:
                return n.update(type=env[n.name])
            if isinstance(n, IR.WindowExpr) and n.name in env \
                    and n.type.src_type != env[n.name]:
                return make_window(n.name, env[n.name], n.idx, n.srcinfo)
            return None
        return map_node(e, fn)

    def stmt(s, env):
        if isinstance(s, (IR.For, IR.If)):
            changes = {}
            for field in ("body", "orelse"):
                if field in s._fields:
                    nb, _ = block(getattr(s, field), env)
                    if nb is not getattr(s, field):
                        changes[field] = nb
            s2 = s.update(**changes) if changes else s
            fields = ("lo", "hi") if isinstance(s, IR.For) else ("cond", )
            upd = {f: fix_expr(getattr(s2, f), env) for f in fields}
            upd = {f: v for f, v in upd.items() if v is not getattr(s2, f)}
            return s2.update(**upd) if upd else s2
        if not env:
            return s
        return fix_expr(s, env)

    body, _ = block(proc_ir.body, {})
    return proc_ir if body is proc_ir.body else proc_ir.update(body=body)
