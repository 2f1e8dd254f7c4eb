"""Fission (and fusion) across writes that store equal values.

``for x: s1; s2`` -> ``(for x: s1); (for x: s2)`` normally needs every
later iteration of ``s1`` to commute with every earlier one of ``s2``
(``effects.api.can_fission``). That fails when a later ``s1`` overwrites a
location an earlier ``s2`` read, although the overwrite stores the value the
location already holds: hoisting a loop-invariant broadcast (``for jo:
(for ji: a[ji] = A[i, k]); ...`` split at ``jo``), or fusing a producer
divided with recompute into its consumer (overlapping blocks write the same
elements with the same values). This module proves such a split safe from
three facts, checked in the context of the loop:

1. ``s1`` is *value-determined*: it consists only of loops, ifs and plain
   assignments ``P[idx] = e`` (no reductions, calls, windows, allocations,
   config writes); no config field is written anywhere in the loop body (so
   control expressions mean the same in every iteration); every buffer
   ``e`` reads is modified by neither ``s1`` nor ``s2`` (its "inputs" are
   unchanged), and ``s2`` modifies no buffer ``s1`` writes. Then, for any
   two assignment instances (any statements, any iterations) that write
   the same location, the stored values are equal: the right-hand sides
   have the same shape, read the same buffers at provably equal indices
   (SMT, under the equality of the written indices); instances of
   different shapes must provably never write the same location.
   So every location ``L`` of ``P`` that ``s1`` writes is always given one
   value ``V(L)``.
2. *Coverage*: if ``s2`` of iteration ``x'`` reads a location ``L`` that
   ``s1`` of a later iteration ``x > x'`` may write, then ``s1`` of
   iteration ``x'`` itself definitely writes ``L`` (a guarded write is not
   definite).
3. Everything else commutes, because ``s1`` touches nothing but ``P``
   (writes) and its inputs (reads).

Why that suffices, in both directions: ``s2(x')`` reads ``L`` either after
some ``s1`` wrote ``V(L)`` or before any ``s1`` wrote it, in the split and
in the unsplit loop alike: when a later ``s1(x)`` writes ``L``, ``s1(x')``
already did (2); when none does, the writers of ``L`` before ``s2(x')`` are
the same in both. The final contents of ``P`` are ``V(L)`` wherever any
``s1`` wrote. Zero-trip loops run nothing in either program. Anything this
module cannot establish is a rejection.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR, same_constant
from ..core_ir.state import config_writes
from ..core_ir.traversal import walk, walk_stmts
from . import checks as C
from . import eexpr as E
from . import smt as S
from .checks import OK, Result
from ..core_ir.paths import norm_path, stmt_at, walk_with_paths
from .context import context
from .effects import Mod, Rd, Wr, eff_subst, flatten, rename_term


def equal_value_fission(proc, loop_path, k, hyps, a1, a2, x, x2):
    """Result: the fission of the loop at ``loop_path`` after ``body[:k]``
    is safe by the equal-values argument. ``a1`` is the effect of ``s1`` at
    iteration ``x``, ``a2`` that of ``s2`` at iteration ``x2`` (``x2 <
    x``), ``hyps`` the loop context's hypotheses with both iterations'
    bounds and ``x2 < x`` (as ``effects.api.can_fission`` builds them)."""
    loop_path = norm_path(loop_path)
    lp = stmt_at(proc, loop_path)
    s1, s2 = lp.body[:k], lp.body[k:]
    writes = []
    r = _shape(s1, loop_path, writes)
    if r is not None:
        return r
    if config_writes(tuple(lp.body)):
        return Result(False, "the loop body writes configuration state")
    window_names = {s.name for s in walk_stmts(proc.body)
                    if isinstance(s, IR.WindowStmt)}
    outs, ins = set(), set()
    for _, w in writes:
        outs.add(w.name)
        for n in walk(w.rhs):
            if isinstance(n, IR.Read) and T.is_data(n.type):
                ins.add(n.name)
    if (outs | ins) & window_names:
        return Result(False, "the first part accesses a window statement")
    if outs & ins:
        names = ", ".join(sorted(n.name for n in outs & ins))
        return Result(False, f"the first part reads what it writes ({names})")
    mod2 = {t.name for t in flatten(Mod(a2))}
    bad = mod2 & (outs | ins)
    if bad:
        names = ", ".join(sorted(getattr(n, "name", str(n)) for n in bad))
        return Result(False, f"the second part modifies {names}, which the "
                      "first part writes or reads")
    r = _equal_values(proc, loop_path, lp, writes)
    if not r:
        return r
    return _coverage(a1, a2, outs, x, x2, hyps)


# ---------------------------------------------------------------------------
# 1. shape and values

def _shape(stmts, prefix, out, field="body", start=0):
    """Collect ``(path, assign)`` of ``stmts``; a Result when a statement
    is not a loop, an if, a pass or a plain assignment."""
    for path, s in walk_with_paths(stmts, prefix, field, start):
        if isinstance(s, IR.Assign):
            out.append((path, s))
        elif not isinstance(s, (IR.Pass, IR.For, IR.If)):
            return Result(False, f"the first part contains a "
                          f"{type(s).__name__} statement, whose written "
                          "values are not known to be equal")
    return None


def _renaming(proc, loop_path, path):
    """Fresh names for the iterators bound at or below the loop on the way
    to ``path`` (a second, independent instance of the statement)."""
    ren = {}
    for n in range(len(loop_path), len(path)):
        s = stmt_at(proc, path[:n])
        if isinstance(s, IR.For):
            ren[s.iter] = E.var(s.iter.copy())
    return ren


def _equal_values(proc, loop_path, lp, writes):
    for i, (p1, w1) in enumerate(writes):
        for p2, w2 in writes[i:]:
            if w1.name is not w2.name:
                continue
            c1, c2 = context(proc, p1), context(proc, p2)
            ren = _renaming(proc, loop_path, p2)
            hyps = tuple(c1.hyps) + tuple(E.subst(h, ren) for h in c2.hyps)

            def l1(e):
                return c1.lift(e)

            def l2(e):
                return E.subst(c2.lift(e), ren)

            same = E.ands([E.eq(l1(a), l2(b))
                           for a, b in zip(w1.idx, w2.idx)])
            pairs = []
            if _match(w1.rhs, w2.rhs, pairs):
                goal = E.ands([E.eq(l1(a), l2(b)) for a, b in pairs])
                what = "the values written may differ"
            else:
                # or the two never run in one execution of the loop body
                # (then and else of an `if` whose condition does not vary:
                # both contexts' hypotheses cannot hold together). In the
                # goal, since sat_under drops the hypotheses sharing no
                # variable with it (a scalar: `same` is True, no variable)
                goal = E.or_(E.not_(same), E.not_(E.ands(hyps)))
                what = "two different assignments may write one location"
            r = C.prove(E.implies(same, goal), hyps)
            if not r:
                return Result(False, f"{what} ({w1.name.name}): {r.reason}",
                              r.model)
    return OK


def _match(e1, e2, pairs) -> bool:
    """Same shape; control sub-expressions are paired up in ``pairs`` (to
    be proven equal). Unknown expression kinds never match."""
    if type(e1) is not type(e2) or e1.type != e2.type:
        return False
    if T.is_control(e1.type):
        if e1.type is IR.Bool:
            return False
        pairs.append((e1, e2))
        return True
    if isinstance(e1, IR.Const):
        # by their bits: 0.0 and -0.0 are two values (1 / x tells them apart)
        return same_constant(e1.val, e2.val)
    if isinstance(e1, IR.Read):
        if e1.name is not e2.name or len(e1.idx) != len(e2.idx):
            return False
        pairs.extend(zip(e1.idx, e2.idx))
        return True
    if isinstance(e1, IR.BinOp):
        return e1.op == e2.op and _match(e1.lhs, e2.lhs, pairs) \
            and _match(e1.rhs, e2.rhs, pairs)
    if isinstance(e1, IR.USub):
        return _match(e1.arg, e2.arg, pairs)
    if isinstance(e1, IR.Extern):
        return e1.f is e2.f and len(e1.args) == len(e2.args) and all(
            _match(a, b, pairs) for a, b in zip(e1.args, e2.args))
    if isinstance(e1, IR.ReadConfig):
        # no config field is written in the loop body (checked)
        return e1.config is e2.config and e1.field == e2.field
    return False


# ---------------------------------------------------------------------------
# 2. coverage

def _coverage(a1, a2, outs, x, x2, hyps):
    """No location ``s2(x2)`` reads that a later ``s1(x)`` may write is left
    unwritten by ``s1(x2)``."""
    hyps_t = C.hyp_terms(hyps)
    memo = {}
    a1_early = eff_subst(a1, {x: E.var(x2)})
    later_w = [t for t in flatten(Wr(a1)) if t.name in outs]
    early_w = [t for t in flatten(Wr(a1_early)) if t.name in outs]
    for rt in flatten(Rd(a2)):
        if rt.name not in outs:
            continue
        r = rename_term(rt)
        if r.idx is None:
            return Result(False, f"{rt!r} is read as a whole")
        for wt in later_w:
            if wt.name != r.name:
                continue
            if wt.idx is None:
                return Result(False, f"{wt!r} is written as a whole")
            w = rename_term(wt)
            covered = [C.mem_term("D", r.name, r.idx, rename_term(d), memo)
                       for d in early_w if d.name == r.name]
            if any(d.idx is None for d in early_w if d.name == r.name):
                return Result(False, f"{rt!r} is written as a whole")
            goal = S.band(S.collapse_M(r.cond, memo),
                          C.mem_term("M", r.name, r.idx, w, memo, free=True),
                          S.bnot(S.bor(*covered)))
            res, model = C.sat_under(goal, hyps_t)
            if res != "unsat":
                why = ("the solver could not decide" if res == "unknown"
                       else "it may not be written in the reading iteration")
                return Result(False, f"a read of {rt!r} in the second part "
                              f"may see a location that only a later "
                              f"iteration of the first part writes: {why}"
                              f"{C._fmt_model(model)}", model)
    return OK
