"""What statements and callees do with a buffer: the kinds of access
('read', 'write', 'reduce') a procedure makes to a buffer parameter, and
the expressions a statement evaluates itself.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import walk, walk_stmts


def param_uses(callee, k, _seen=None) -> frozenset:
    """Kinds of access ('read', 'write', 'reduce') the procedure ``callee``
    makes to its ``k``-th parameter, through windows and nested calls."""
    seen = _seen if _seen is not None else set()
    key = (id(callee), k)
    if key in seen:
        return frozenset()
    seen.add(key)
    names = {callee.args[k].name}
    for s in walk_stmts(callee.body):
        if isinstance(s, IR.WindowStmt) and s.rhs.name in names:
            names.add(s.name)
    kinds = set()
    for s in walk_stmts(callee.body):
        if isinstance(s, IR.Assign) and s.name in names:
            kinds.add("write")
        elif isinstance(s, IR.Reduce) and s.name in names:
            kinds.add("reduce")
        elif isinstance(s, IR.Call):
            for j, a in enumerate(s.args):
                if isinstance(a, (IR.Read, IR.WindowExpr)) and a.name in names:
                    kinds |= param_uses(s.f, j, seen)
        for e in stmt_exprs(s):
            for n in walk(e):
                if isinstance(n, IR.Read) and n.name in names and n.idx:
                    kinds.add("read")
    return frozenset(kinds)


def stmt_exprs(s):
    """The expressions of a statement itself (not of nested statements);
    call arguments that pass whole buffers/windows are left out."""
    if isinstance(s, (IR.Assign, IR.Reduce)):
        return tuple(s.idx) + (s.rhs, )
    if isinstance(s, IR.WriteConfig):
        return (s.rhs, )
    if isinstance(s, IR.If):
        return (s.cond, )
    if isinstance(s, IR.For):
        return (s.lo, s.hi)
    if isinstance(s, IR.WindowStmt):
        return tuple(x for w in s.rhs.idx for x in _w_exprs(w))
    if isinstance(s, IR.Call):
        out = []
        for a in s.args:
            if isinstance(a, IR.WindowExpr):
                out.extend(x for w in a.idx for x in _w_exprs(w))
            elif not (isinstance(a, IR.Read) and not a.idx):
                out.append(a)
        return tuple(out)
    return ()


def _w_exprs(w):
    return (w.lo, w.hi) if isinstance(w, IR.Interval) else (w.pt, )
