"""The safety checks of §3.5.7–3.5.8 on effects, as SMT queries.

Every check is "this set of queries is unsatisfiable"; any 'sat' or
'unknown' answer is a failure whose reason names the conflicting locations.

Quantifiers. Location sets contain ⋃_x (an ∃ under membership). In the
emptiness tests of Commutes and in M-membership at positive polarity the ∃
sits at the top of a satisfiability query, so its variables simply become
free (renamed apart per term): those queries are quantifier-free. Where an
∃ appears under a negation (D-membership in Shadows, set differences), it is
eliminated by the one-point rule whenever some index equation gives the
bound variable with coefficient ±1 (e.g. ``x ∈ ⋃_j {A, j+1}``), see
``smt.exists_elim``; otherwise an explicit quantifier goes to z3, which may
answer 'unknown' (= not proven).
"""
from __future__ import annotations

from ..caches import container
from . import eexpr as E
from . import smt as S
from .effects import (A, All, Mod, Rd, Rp, Rp_H, SideRenamer, Wr,
                      eff_names, flatten, noop_refine, rename_term)


class Result:
    """Outcome of a check: truthy when safe; ``reason`` says why not."""

    __slots__ = ("ok", "reason", "model")

    def __init__(self, ok, reason="", model=None):
        self.ok = ok
        self.reason = reason
        self.model = model

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return "Result(ok)" if self.ok else f"Result(fail: {self.reason})"


OK = Result(True)

#: longest spelling of an expression in a failure reason: the predicates
#: about config values after loop nests share sub-expressions, and spelled
#: out in full they can run to millions of characters
MESSAGE_LIMIT = 500


#: small hypothesis -> its M-collapse: loop bounds and path facts are
#: collapsed again at every re-check of the statements under them. Values
#: are immutable terms (and handing back the same object lets the solver's
#: identity-keyed tables answer); big terms share sub-terms and hash in
#: exponential time, so they are not kept
_HYP_TERMS_MEMO: dict = container("exo_hl.effects.checks.hyp_terms", {})
_HYP_TERMS_LIMIT = 1 << 14


def _collapse_hyp(h, memo):
    if not S._is_small(h):
        return S.collapse_M(h, memo)
    t = _HYP_TERMS_MEMO.get(h)
    if t is None:
        t = S.collapse_M(h, memo)
        if len(_HYP_TERMS_MEMO) >= _HYP_TERMS_LIMIT:
            _HYP_TERMS_MEMO.clear()
        _HYP_TERMS_MEMO[h] = t
    return t


def hyp_terms(hyps):
    """M-collapse of each hypothesis conjunct (M distributes over ∧)."""
    memo = {}
    out = []
    for h in hyps:
        t = _collapse_hyp(h, memo)
        if t is True:
            continue
        if isinstance(t, tuple) and t[0] == "and":
            out.extend(t[1])
        else:
            out.append(t)
    return out


def sat_under(goal, hyps_t, solver=None):
    """Satisfiability of goal ∧ (the hypotheses sharing variables with it).

    Dropping unrelated hypotheses only weakens them, so an 'unsat' answer
    stays a proof; it keeps queries small and cache keys stable.
    """
    solver = solver or S.solver()
    if goal is False:
        solver.stats.queries += 1
        solver.stats.trivial += 1
        return "unsat", None
    goal_keys = S.term_keys(goal)
    keys = set(goal_keys)
    pool = [(h, S.hyp_keys(h)) for h in hyps_t]
    chosen = []
    changed = True
    while changed:
        changed = False
        rest = []
        for h, ks in pool:
            if ks & keys or not ks:
                chosen.append(h)
                keys |= ks
                changed = True
            else:
                rest.append((h, ks))
        pool = rest
    # the stride variables of the query in ``term_keys``' order: the
    # goal's, then each chosen hypothesis's new ones (the conjunction
    # lists the goal's operands first, then the hypotheses', and a term
    # walked once yields its variables at their first occurrence)
    strides = [k for k in goal_keys if isinstance(k, E.StrideVar)]
    for h in chosen:
        for k in S.hyp_strides(h):
            if k not in strides:
                strides.append(k)
    return solver.check(S.band(goal, *chosen), strides)


def _fmt_loc(t):
    return repr(t)


def _fmt_model(model):
    if not model:
        return ""
    # user-facing spellings; two different variables spelled alike (e.g.
    # the iterators of two statements) get primes: i, i'
    items, seen = [], {}
    for k, v in sorted(model.items(), key=lambda kv: getattr(kv[0], "id", 0)):
        nm = getattr(k, "name", None)
        if isinstance(k, (E.GVar, E.StrideVar)) or nm is None:
            nm = repr(k)
        else:
            nm = nm + "'" * seen.get(nm, 0)
            seen[getattr(k, "name")] = seen.get(getattr(k, "name"), 0) + 1
        items.append(f"{nm}={v}")
    return " (e.g. " + ", ".join(sorted(items)) + ")"


# ---------------------------------------------------------------------------
# membership as two-valued terms


def _eq_parts(mode, idx, t, memo):
    parts, diffs = [], []
    for a, b in zip(idx, t.idx):
        va, da = S.encode(a, memo)
        vb, db = S.encode(b, memo)
        diff = S.ladd(vb, va, -1)
        if mode == "D":
            parts += [da, db, S.beq0(diff)]
            diffs.append(diff)
        else:
            parts.append(S.bor(S.bnot(S.band(da, db)), S.beq0(diff)))
            if da is True and db is True:
                diffs.append(diff)
    return parts, diffs


def mem_term(mode, name, idx, t, memo, free=False, minus=True):
    """M/D (name, idx) ∈ term as a classical formula.

    With ``free=True`` the term's bound variables are left free (valid only
    at positive polarity of a satisfiability query; caller renames apart).
    With ``minus=False`` the term's subtracted sets are left out: a weaker
    formula (a conjunction with fewer conjuncts), so at positive polarity
    its unsatisfiability proves the full one's.
    """
    if t.name != name:
        return False
    if t.idx is None or idx is None:
        return True
    coll = S.collapse_M if mode == "M" else S.collapse_D
    parts = [coll(t.cond, memo)]
    eqp, diffs = _eq_parts(mode, idx, t, memo)
    parts += eqp
    dual = "D" if mode == "M" else "M"
    for L in (t.minus if minus else ()):
        for t2 in flatten(L):
            parts.append(S.bnot(mem_term(dual, name, idx, rename_term(t2),
                                         memo)))
    body = S.band(*parts)
    if free:
        return body
    return S.exists_elim(t.bvars, body, diffs)


# ---------------------------------------------------------------------------
# Commutes (Def. 3.8)


def _pairs(L1, L2, kinds, hyps_t, extra, solver):
    """The first pair of a location set of ``L1`` and one of ``L2`` that
    may share a location, as a failed Result; None if there is none.

    Each term is renamed apart once, not once per pair: every query is
    its own satisfiability check, so a renamed term of ``L2`` may serve
    all of ``L1``'s (and the collapsed formulas of its conditions stay in
    ``memo``); a big loop body otherwise spends most of its check
    renaming. The terms of each side are renamed by one ``SideRenamer``
    (a query holds one term of each side), so the terms of one loop share
    their renamed conditions and ``memo`` encodes them once.

    A term of ``L2`` with subtracted sets (the reads of a statement minus
    what the statements before it wrote) is first asked without them: most
    pairs are apart by their indices alone, and the subtracted sets, one
    per earlier write, are most of the formula. Only a pair that query
    does not separate is asked again in full, so the verdicts (and the
    failure reasons) are the full queries'."""
    terms1, terms2 = flatten(L1), flatten(L2)
    if _apart(terms1, terms2, hyps_t, extra, solver):
        return None
    memo = {}
    ren1, ren2 = SideRenamer(), SideRenamer()
    terms2 = [(t2, ren2(t2)) for t2 in terms2]
    for t1 in terms1:
        r1 = None
        for t2, r2 in terms2:
            if t1.name != t2.name:
                continue
            if r1 is None:
                r1 = ren1(t1)
            if r1.idx is None or r2.idx is None:
                goal = S.band(S.collapse_M(r1.cond, memo),
                              S.collapse_M(r2.cond, memo))
            else:
                if r2.minus:
                    light = S.band(S.collapse_M(r1.cond, memo),
                                   mem_term("M", r1.name, r1.idx, r2, memo,
                                            free=True, minus=False))
                    if extra is not None:
                        light = S.band(light, extra)
                    if sat_under(light, hyps_t, solver)[0] == "unsat":
                        continue
                goal = S.band(S.collapse_M(r1.cond, memo),
                              mem_term("M", r1.name, r1.idx, r2, memo,
                                       free=True))
            if extra is not None:
                goal = S.band(goal, extra)
            res, model = sat_under(goal, hyps_t, solver)
            if res != "unsat":
                why = ("the solver could not decide"
                       if res == "unknown" else "they may overlap")
                return Result(False, f"{kinds[0]} of {_fmt_loc(t1)} and "
                              f"{kinds[1]} of {_fmt_loc(t2)} may touch the "
                              f"same location: {why}{_fmt_model(model)}",
                              model)
    return None


#: ``_apart`` asks one query for a buffer when the two sides have at least
#: this many pairs of its terms (fewer are mostly decided without the
#: solver, pair by pair)
APART_MIN_PAIRS = 8


def _apart(terms1, terms2, hyps_t, extra, solver) -> bool:
    """Are the two sides' terms proven apart, one query per buffer both
    touch: some location x in a term of the first side and in one of the
    second. Any pair of ``_pairs`` (even without its subtracted sets) that
    may share a location gives such an x, so 'unsat' proves every pair
    apart; otherwise (or with few pairs, or terms of whole buffers) False,
    and ``_pairs`` asks pair by pair, which names the first conflicting
    pair as before. A big loop body otherwise asks a query per pair of its
    accesses to one buffer (a thousand in a tile's row loop)."""
    from ..core_ir.syms import Sym
    by1, by2 = {}, {}
    for t in terms1:
        by1.setdefault(t.name, []).append(t)
    for t in terms2:
        by2.setdefault(t.name, []).append(t)
    common = [n for n in by1 if n in by2]
    if sum(len(by1[n]) * len(by2[n]) for n in common) < APART_MIN_PAIRS:
        return False
    memo = {}
    ren1, ren2 = SideRenamer(), SideRenamer()
    for name in common:
        ts = by1[name] + by2[name]
        if any(t.idx is None for t in ts) or \
                len({len(t.idx) for t in ts}) != 1:
            return False
        x = tuple(E.var(Sym("loc")) for _ in ts[0].idx)
        sides = [S.bor(*(mem_term("M", name, x, ren(t), memo,
                                  free=True, minus=False) for t in side))
                 for side, ren in ((by1[name], ren1), (by2[name], ren2))]
        goal = S.band(*sides) if extra is None else S.band(*sides, extra)
        if sat_under(goal, hyps_t, solver)[0] != "unsat":
            return False
    return True


def _commute_apart(a1, a2, hyps_t, extra, solver) -> bool:
    """The four conditions of Commutes proven at once: one query per buffer
    both sides touch, for some location x of it written by one side and
    accessed by the other, or reduced by one and read by the other (each
    set without its subtracted sets, as in ``_apart``). 'unsat' proves
    every pair of the four checks apart; anything else (or few pairs, or
    terms of whole buffers) gives False, and the checks run one by one,
    which decide and name the conflict as before. Each term's membership
    formula is built once, not once per check it is in (a term of
    ``Wr(a)`` is also in ``All(a)``), and a big block asks one query per
    buffer instead of up to four.

    Sharing a term's renamed formula between disjuncts is sound: its
    variables are free (existential at the top of a satisfiability query)
    and ∃ distributes over ∨; the two sides' terms are renamed apart, and
    only formulas of different sides are conjoined."""
    sides = []
    for a in (a1, a2):
        side = {}
        for kind, terms in (("w", flatten(Wr(a))), ("r", flatten(Rd(a))),
                            ("p", flatten(Rp_H(a)))):
            for t in terms:
                side.setdefault(t.name, {"w": [], "r": [], "p": []})[
                    kind].append(t)
        sides.append(side)
    s1, s2 = sides
    common = [n for n in s1 if n in s2]
    pairs = 0
    for n in common:
        k1, k2 = s1[n], s2[n]
        n1 = len(k1["w"]) + len(k1["r"]) + len(k1["p"])
        n2 = len(k2["w"]) + len(k2["r"]) + len(k2["p"])
        pairs += (len(k1["w"]) * n2 + len(k2["w"]) * n1 +
                  len(k1["p"]) * len(k2["r"]) + len(k2["p"]) * len(k1["r"]))
    if pairs < APART_MIN_PAIRS:
        return False
    from ..core_ir.syms import Sym
    memo = {}
    ren1, ren2 = SideRenamer(), SideRenamer()
    for name in common:
        ts = [t for side in (s1, s2) for ks in side[name].values()
              for t in ks]
        if any(t.idx is None for t in ts) or \
                len({len(t.idx) for t in ts}) != 1:
            return False
        x = tuple(E.var(Sym("loc")) for _ in ts[0].idx)
        f = [{k: [mem_term("M", name, x, ren(t), memo, free=True,
                           minus=False) for t in side[name][k]]
              for k in "wrp"} for side, ren in ((s1, ren1), (s2, ren2))]

        def some(s, kinds):
            return S.bor(*(m for k in kinds for m in f[s][k]))
        goal = S.bor(S.band(some(0, "w"), some(1, "wrp")),
                     S.band(some(1, "w"), some(0, "wrp")),
                     S.band(some(0, "p"), some(1, "r")),
                     S.band(some(1, "p"), some(0, "r")))
        if extra is not None:
            goal = S.band(goal, extra)
        if sat_under(goal, hyps_t, solver)[0] != "unsat":
            return False
    return True


def commutes(a1, a2, hyps=(), solver=None, extra=None):
    """Commutes a1 a2 under hypotheses (ternary bool ees, used as M h).

    ``extra``: an additional classical hypothesis term (used by loop checks).
    """
    hyps_t = hyp_terms(hyps) if not isinstance(hyps, _HypTerms) else hyps.t
    # config writes of the value a field provably already holds are no-ops
    # (Eff of ``x := v`` read as that of ``if x != v: x := v``)
    a1, a2 = noop_refine(a1), noop_refine(a2)
    n1, n2 = eff_names(a1), eff_names(a2)
    for aa, nb in ((a1, n2), (a2, n1)):
        for t in flatten(A(aa)):
            if t.name in nb:
                return Result(False, f"{getattr(t.name, 'name', t.name)} is "
                              "allocated by one statement and used by the other")
    if _commute_apart(a1, a2, hyps_t, extra, solver):
        return OK
    checks = (
        (Wr(a1), All(a2), ("write", "access")),
        (Wr(a2), All(a1), ("write", "access")),
        (Rp(a1), Rd(a2), ("reduction", "read")),
        (Rp(a2), Rd(a1), ("reduction", "read")),
    )
    for L1, L2, kinds in checks:
        r = _pairs(L1, L2, kinds, hyps_t, extra, solver)
        if r is not None:
            return r
    return OK


class _HypTerms:
    """Pre-collapsed hypotheses (avoid re-encoding in loops of queries)."""

    __slots__ = ("t", )

    def __init__(self, hyps):
        self.t = hyp_terms(hyps)


# ---------------------------------------------------------------------------
# Shadows (Def. 3.9)


def shadows(a1, a2, hyps=(), solver=None):
    """∀x ∈ M Mod(a1) ⇒ x ∉ M Rd(a2) ∧ x ∈ D Wr(a2)."""
    hyps_t = hyp_terms(hyps)
    memo = {}
    reads = flatten(Rd(a2))
    writes = flatten(Wr(a2))
    for tm in flatten(Mod(a1)):
        m = rename_term(tm)
        if m.idx is None:
            continue
        rd = [mem_term("M", m.name, m.idx, rename_term(r), memo, free=True)
              for r in reads if r.name == m.name]
        wr = [mem_term("D", m.name, m.idx, rename_term(w), memo)
              for w in writes if w.name == m.name]
        goal = S.band(S.collapse_M(m.cond, memo),
                      S.bor(*rd, S.bnot(S.bor(*wr))))
        res, model = sat_under(goal, hyps_t, solver)
        if res != "unsat":
            if res == "unknown":
                why = "the solver could not decide"
            else:
                why = "it may be read, or not definitely overwritten"
            return Result(False, f"modified location {_fmt_loc(tm)} is not "
                          f"shadowed: {why}{_fmt_model(model)}", model)
    return OK


# ---------------------------------------------------------------------------
# predicates


def prove(pred, hyps=(), solver=None):
    """D pred holds whenever M hyps does. Returns a Result (model on failure)."""
    hyps_t = hyp_terms(hyps)
    goal = S.bnot(S.collapse_D(pred))
    res, model = sat_under(goal, hyps_t, solver)
    if res == "unsat":
        return OK
    text = E.to_str(pred, MESSAGE_LIMIT)
    if res == "unknown":
        return Result(False, f"could not prove {text} (solver gave up)")
    return Result(False, f"{text} may be false{_fmt_model(model)}", model)


def iterations_disjoint(a1, a2, hyps=(), solver=None, witness=()):
    """Race freedom of two iterations of one loop body: Mod(a1) ∩ All(a2) =
    ∅ (stricter than Commutes: concurrent reductions of one location race).

    The caller guarantees that swapping the two iterators maps ``a1`` to
    ``a2``, ``a2`` to ``a1`` and ``hyps`` to themselves (``i != i'``, not
    ``i < i'``): Mod(a2) ∩ All(a1) is then the same query renamed, so one
    direction decides both.

    ``witness``: hypotheses (among ``hyps``) the counterexample must show
    even when the overlapping locations do not mention their variables --
    the two different iterations that race. The proof leaves them out of
    each query when unrelated (``sat_under``); a failed query is asked
    again with them in the goal, so its model names the iterations."""
    hyps_t = hyp_terms(hyps)
    r = _pairs(Mod(a1), All(a2), ("modification", "access"), hyps_t, None,
               solver)
    if r is None:
        return OK
    extra = S.band(*hyp_terms(witness)) if witness else None
    if extra is not None and extra is not True:
        shown = _pairs(Mod(a1), All(a2), ("modification", "access"), hyps_t,
                       extra, solver)
        if shown is not None:
            return shown
    return r
