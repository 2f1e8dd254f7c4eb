"""Single-statement mutations of a procedure, for testing validators.

Each mutant changes one place: an index off by one (in an access, or a
call argument's window moved by one along one dimension), the operands of
a non-commutative binary operation swapped (``a + b`` and ``b + a`` are
the same value by docs/semantics.md, where a NaN's sign and payload are
not specified: an equivalent mutant, not drawn), a guard dropped (an
``if`` replaced by its body), an ``if``'s condition negated (its
branches swap), a loop bound moved by one, a literal's sign flipped. Source
locations are kept, so a validator that guesses prophecies from them
meets the mutant's statement with the original's claim.
"""
from __future__ import annotations

import random

from ..core_ir.nodes import IR

__all__ = ["KINDS", "sites", "mutate"]

KINDS = ("index", "arg", "swap", "guard", "bound", "literal", "negate")

#: operations whose operands commute (swapping them is no mutation)
COMMUTATIVE = frozenset(("+", "*", "and", "or", "==", "!="))


def _one(e):
    return IR.Const(1, type=e.type, srcinfo=e.srcinfo)


def _walk_stmts(stmts, out):
    for s in stmts:
        out.append(s)
        for f in ("body", "orelse"):
            if hasattr(s, f):
                _walk_stmts(getattr(s, f), out)
        if isinstance(s, IR.Call):
            pass
    return out


def _exprs(e, out):
    """Subexpressions in preorder (index expressions included)."""
    out.append(e)
    for f in e._fields:
        v = getattr(e, f)
        for x in (v if isinstance(v, tuple) else (v, )):
            if isinstance(x, IR.expr):
                _exprs(x, out)
    return out


def _data_exprs(e, out):
    """ids of the data (not index) subexpressions of ``e``."""
    out.add(id(e))
    if isinstance(e, IR.Read):
        return out
    for f in e._fields:
        v = getattr(e, f)
        for x in (v if isinstance(v, tuple) else (v, )):
            if isinstance(x, IR.expr):
                _data_exprs(x, out)
    return out


def _assign_sites(s, n):
    """Index, operand-swap and literal mutations of an assignment or
    reduction (swaps and literals in data expressions only)."""
    out = [("index", n, ("w", k)) for k in range(len(s.idx))]
    data = _data_exprs(s.rhs, set())
    for m, e in enumerate(_exprs(s.rhs, [])):
        if isinstance(e, IR.Read) and e.idx:
            out += [("index", n, ("r", m, k)) for k in range(len(e.idx))]
        if id(e) not in data:
            continue      # index arithmetic: swaps are equivalent
        if isinstance(e, IR.BinOp) and e.lhs != e.rhs and \
                e.op not in COMMUTATIVE:
            out.append(("swap", n, m))
        if isinstance(e, IR.Const) and e.val != 0:
            out.append(("literal", n, m))
    return out


def _call_sites(s, n):
    """A window argument moved by one along each of its dimensions."""
    return [("arg", n, (a, k)) for a, e in enumerate(s.args)
            if isinstance(e, IR.WindowExpr) for k in range(len(e.idx))]


#: the mutations each statement kind offers
_SITES = {
    IR.Assign: _assign_sites,
    IR.Reduce: _assign_sites,
    IR.Call: _call_sites,
    IR.If: lambda s, n: [("guard", n, None), ("negate", n, None)],
    IR.For: lambda s, n: [("bound", n, +1), ("bound", n, -1)],
}


def sites(proc):
    """[(kind, statement number, detail)] of every mutation of ``proc``."""
    out = []
    for n, s in enumerate(_walk_stmts(proc.body, [])):
        for kind, make in _SITES.items():
            if isinstance(s, kind):
                out += make(s, n)
    return out


def _rewrite_expr(e, m, fn, counter):
    """``e`` with its ``m``-th subexpression (preorder) replaced."""
    k = counter[0]
    counter[0] += 1
    if k == m:
        return fn(e)
    changes = {}
    for f in e._fields:
        v = getattr(e, f)
        if isinstance(v, tuple):
            new = tuple(_rewrite_expr(x, m, fn, counter)
                        if isinstance(x, IR.expr) else x for x in v)
            if new != v:
                changes[f] = new
        elif isinstance(v, IR.expr):
            new = _rewrite_expr(v, m, fn, counter)
            if new is not v:
                changes[f] = new
    return e.update(**changes) if changes else e


def _apply(s, kind, detail):
    if kind == "index" and detail[0] == "w":
        k = detail[1]
        idx = list(s.idx)
        idx[k] = IR.BinOp("+", idx[k], _one(idx[k]), type=idx[k].type,
                          srcinfo=idx[k].srcinfo)
        return [s.update(idx=tuple(idx))]
    if kind == "index":
        _, m, k = detail

        def bump(e):
            idx = list(e.idx)
            idx[k] = IR.BinOp("+", idx[k], _one(idx[k]), type=idx[k].type,
                              srcinfo=idx[k].srcinfo)
            return e.update(idx=tuple(idx))
        return [s.update(rhs=_rewrite_expr(s.rhs, m, bump, [0]))]
    if kind == "swap":
        return [s.update(rhs=_rewrite_expr(
            s.rhs, detail, lambda e: e.update(lhs=e.rhs, rhs=e.lhs), [0]))]
    if kind == "literal":
        return [s.update(rhs=_rewrite_expr(
            s.rhs, detail, lambda e: e.update(val=-e.val), [0]))]
    if kind == "arg":
        a, k = detail
        args = list(s.args)
        args[a] = _shift_window(args[a], k)
        return [s.update(args=tuple(args))]
    if kind == "guard":
        return list(s.body)
    if kind == "negate":
        return [s.update(cond=IR.Not(s.cond, type=IR.Bool,
                                     srcinfo=s.cond.srcinfo))]
    if kind == "bound":
        hi = s.hi
        return [s.update(hi=IR.BinOp("+", hi, IR.Const(detail, type=hi.type),
                                     type=hi.type, srcinfo=hi.srcinfo))]
    raise ValueError(kind)


def _plus1(e):
    return IR.BinOp("+", e, _one(e), type=e.type, srcinfo=e.srcinfo)


def _shift_window(e, k):
    """Window ``e`` moved by one along its ``k``-th dimension (a point
    index + 1, or both ends of an interval: the same extent)."""
    from ..core_ir.simplify import make_window
    idx = list(e.idx)
    w = idx[k]
    if isinstance(w, IR.Interval):
        idx[k] = w.update(lo=_plus1(w.lo), hi=_plus1(w.hi))
    else:
        idx[k] = w.update(pt=_plus1(w.pt))
    return make_window(e.name, e.type.src_type, idx, e.srcinfo)


def _rebuild(stmts, target, kind, detail, counter):
    out = []
    for s in stmts:
        n = counter[0]
        counter[0] += 1
        if n == target:
            out.extend(_apply(s, kind, detail))
            continue
        changes = {}
        for f in ("body", "orelse"):
            if hasattr(s, f):
                changes[f] = tuple(_rebuild(getattr(s, f), target, kind,
                                            detail, counter))
        out.append(s.update(**changes) if changes else s)
    return out


def mutate(proc, site):
    """``proc`` (an IR.Proc) with the mutation ``site`` (from ``sites``)."""
    kind, n, detail = site
    body = _rebuild(proc.body, n, kind, detail, [0])
    return proc.update(body=tuple(body), name=proc.name + "_mut")


def random_mutants(proc, count, seed=0):
    """``count`` mutants, drawn in turn from each kind's shuffled sites (a
    call-heavy procedure has far more window arguments than guards)."""
    rng = random.Random(seed)
    by_kind = {k: [] for k in KINDS}
    for site in sites(proc):
        by_kind[site[0]].append(site)
    for v in by_kind.values():
        rng.shuffle(v)
    picked = []
    while len(picked) < count and any(by_kind.values()):
        for k in KINDS:
            if by_kind[k] and len(picked) < count:
                picked.append(by_kind[k].pop())
    return [(s, mutate(proc, s)) for s in picked]
