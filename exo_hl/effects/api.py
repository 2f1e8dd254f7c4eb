"""The effect analysis as rewrites use it. No rewrite builds formulas itself.

Statements are named by paths (see ``context.py``): tuples of
``('body'|'orelse', index)`` steps from the procedure body, or plain ints for
``'body'`` steps. ``proc`` arguments accept an ``IR.Proc`` or a
``Procedure``. Every check returns a ``Result``: truthy when safe; when not,
``.reason`` names the conflicting locations (ready for a SchedulingError
message) and ``.model`` may hold a counterexample.

    ctx = context(proc, path)            # CtrlPred / PreValG / PostEff
    prove(pred, ctx)                     # pred: IR control expr or effect expr
    counterexample(pred, ctx)            # {name: value} or None
    prove_at(proc, path, pred)           # the two above in one call
    commutes(stmts_a, stmts_b, ctx)      # s_a; s_b  ~>  s_b; s_a
    shadows(stmts_a, stmts_b, ctx)       # s_a; s_b  ~>  s_b
    can_reorder_loops(proc, outer_loop_path)
    can_fission(proc, loop_path, split_index)   # body[:k] | body[k:]
    can_remove_loop(proc, loop_path)
    loop_is_parallel(proc, loop_path)
    equiv_modulo(proc, path, fields)     # context extension (§3.6.2)
    never_same_location(proc, scope, (path_a, idx_a), (path_b, idx_b))

Bounds checking (the frontend's) is ``prove_at(proc, path, 0 <= i < n)`` for
each access: build the predicate with ``eexpr`` (or as IR) and prove it.
Unknown solver answers and timeouts never count as proofs.
"""
from __future__ import annotations

from ..caches import memo
from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.paths import block_of, norm_path, stmt_at
from ..core_ir.traversal import free_vars, used_syms, walk, walk_stmts
from . import checks as C
from . import eexpr as E
from .checks import Result, OK
from .checklog import logged_check
from .context import Ctx, context
from .footprint import with_footprints
from .effects import (eff_expr, eff_subst, seq, Wr_G, Rd_G, flatten, bounds,
                      rename_term)
from . import smt as S

__all__ = [
    "Result", "Ctx", "context", "stmt_at", "block_of", "norm_path", "prove",
    "counterexample", "prove_at", "commutes", "shadows", "can_reorder_loops",
    "can_fission", "can_remove_loop", "loop_is_parallel", "equiv_modulo",
    "never_same_location", "stats", "clear_cache",
]



def _ir(p):
    return p.ir() if hasattr(p, "ir") and not isinstance(p, IR.Proc) else p


def _as_ee(pred, ctx):
    if isinstance(pred, tuple):
        return E.subst(pred, ctx.env) if ctx.env else pred
    return ctx.lift(pred)


def stats():
    """Query statistics of the per-process solver (benchmarks)."""
    return S.solver().stats


def clear_cache():
    """Forget memoised solver results and every other cache exo_hl keeps
    (``exo_hl.caches.clear_all``)."""
    from ..caches import clear_all
    clear_all()


# ---------------------------------------------------------------------------
# predicates


@logged_check
def prove(pred, ctx=None):
    """Prove a control predicate (IR expr, or effect expr in terms of the
    state at ctx) under ctx's CtrlPred. Returns a Result."""
    ctx = ctx or Ctx()
    return C.prove(_as_ee(pred, ctx), ctx.hyps)


def counterexample(pred, ctx=None):
    """Values of variables making ``pred`` false under ctx, or None when the
    predicate is proven (or the solver gave up without a model)."""
    r = prove(pred, ctx)
    if r.ok or r.model is None:
        return None
    out = {}
    for k, v in r.model.items():
        name = k.name if hasattr(k, "name") and not isinstance(
            k, (E.GVar, E.StrideVar)) else repr(k)
        out[name] = v
    return out


@logged_check
def prove_at(proc, path, pred):
    """Whether ``pred`` holds whenever the statement at ``path`` runs: a
    ``Result``, true only when proven."""
    return prove(pred, context(_ir(proc), path))


# ---------------------------------------------------------------------------
# statement checks


def _bound_names(stmts):
    out = set()
    for s in walk_stmts(tuple(stmts)):
        if isinstance(s, (IR.Alloc, IR.WindowStmt)):
            out.add(s.name)
    return out


def _scope_conflict(sa, sb):
    top_a = {s.name for s in sa if isinstance(s, (IR.Alloc, IR.WindowStmt))}
    top_b = {s.name for s in sb if isinstance(s, (IR.Alloc, IR.WindowStmt))}
    ua, ub = used_syms(tuple(sa)), used_syms(tuple(sb))
    for n in top_a & ub:
        return Result(False, f"'{n.name}' is bound by the first statements "
                      "and used by the others")
    for n in top_b & ua:
        return Result(False, f"'{n.name}' is bound by the second statements "
                      "and used by the first")
    return None


def _stmts(x):
    if isinstance(x, IR.stmt):
        return (x, )
    return tuple(x)


@logged_check
def commutes(stmts_a, stmts_b, ctx=None):
    """Can ``stmts_a; stmts_b`` be rewritten to ``stmts_b; stmts_a`` (at ctx)?"""
    ctx = ctx or Ctx()
    sa, sb = _stmts(stmts_a), _stmts(stmts_b)
    r = _scope_conflict(sa, sb)
    if r is not None:
        return r
    return C.commutes(ctx.eff(sa), ctx.eff(sb), ctx.hyps)


@logged_check
def shadows(stmts_a, stmts_b, ctx=None):
    """Is ``stmts_a`` made dead by ``stmts_b`` (``s_a; s_b ~> s_b``)?"""
    ctx = ctx or Ctx()
    return C.shadows(ctx.eff(_stmts(stmts_a)), ctx.eff(_stmts(stmts_b)),
                     ctx.hyps)


def _loop_at(proc, path):
    s = stmt_at(proc, path)
    if not isinstance(s, IR.For):
        raise ValueError(f"the statement at {path} is not a loop")
    return s


def _bound_reads(ctx, loop):
    return ctx.place(seq(eff_expr(loop.lo), eff_expr(loop.hi)))


def _fresh(sym):
    return sym.copy()


def _iter_ctx(proc, loop_path, k=0):
    """Ctx of ``body[k]`` of the loop at ``loop_path``, for one iteration:
    its env is the config state at that point of the iteration (PreValG),
    not the state before the loop. Effects of loop-body statements must be
    taken there: a body that writes a config field it also reads sees the
    entry value only in its first iteration."""
    return context(proc, norm_path(loop_path) + (("body", k), ))


@logged_check
def can_reorder_loops(proc, outer_loop_path):
    """§3.5.8 loop reordering of ``for x: for y: s`` (the outer loop's body
    must be exactly the inner loop)."""
    proc = _ir(proc)
    outer = _loop_at(proc, outer_loop_path)
    if len(outer.body) != 1 or not isinstance(outer.body[0], IR.For):
        return Result(False, f"loop '{outer.iter.name}' does not directly and "
                      "only contain another loop")
    inner = outer.body[0]
    x, y = outer.iter, inner.iter
    if x in free_vars(inner.lo) | free_vars(inner.hi):
        return Result(False, f"the bounds of loop '{y.name}' depend on "
                      f"'{x.name}'")
    ctx = context(proc, outer_loop_path)
    if not inner.body:
        return OK
    cx = _iter_ctx(proc, outer_loop_path)
    cxy = _iter_ctx(proc, norm_path(outer_loop_path) + (("body", 0), ))
    bx = bounds(x, ctx.lift(outer.lo), ctx.lift(outer.hi))
    by = bounds(y, cx.lift(inner.lo), cx.lift(inner.hi))
    a = cxy.eff(inner.body)
    ax, ay = _bound_reads(ctx, outer), _bound_reads(cx, inner)
    r = C.commutes(seq(ax, ay), a, ctx.hyps + (bx, by))
    if not r:
        return Result(False, "the loop body changes what the loop bounds "
                      "read: " + r.reason, r.model)
    x2, y2 = _fresh(x), _fresh(y)
    ren = {x: E.var(x2), y: E.var(y2)}
    a2 = eff_subst(a, ren)
    hyps = ctx.hyps + (bx, by, E.subst(bx, ren), E.subst(by, ren),
                       E.op("<", E.var(x), E.var(x2)),
                       E.op("<", E.var(y2), E.var(y)))
    r = C.commutes(a, a2, hyps)
    if not r:
        return Result(False, f"iterations of '{x.name}' and '{y.name}' do not "
                      "commute: " + r.reason, r.model)
    return OK


@logged_check
def can_fission(proc, loop_path, split_index):
    """§3.5.8: ``for x: s1; s2`` -> ``for x: s1`` ; ``for x: s2`` with
    s1 = body[:split_index]."""
    proc = _ir(proc)
    lp = _loop_at(proc, loop_path)
    k = split_index
    if not 0 < k < len(lp.body):
        return Result(False, "the split point must leave statements on both "
                      "sides")
    s1, s2 = lp.body[:k], lp.body[k:]
    bound = {s.name for s in s1 if isinstance(s, (IR.Alloc, IR.WindowStmt))}
    used = used_syms(tuple(s2))
    for n in bound & used:
        return Result(False, f"'{n.name}' is bound before the split and used "
                      "after it (lift it out of the loop first)")
    ctx = context(proc, loop_path)
    x = lp.iter
    bx = bounds(x, ctx.lift(lp.lo), ctx.lift(lp.hi))
    a1 = _iter_ctx(proc, loop_path, 0).eff(s1)
    r = C.commutes(_bound_reads(ctx, lp), a1, ctx.hyps + (bx, ))
    if not r:
        return Result(False, "the first part changes what the loop bounds "
                      "read: " + r.reason, r.model)
    x2 = _fresh(x)
    ren = {x: E.var(x2)}
    a2 = eff_subst(_iter_ctx(proc, loop_path, k).eff(s2), ren)
    hyps = ctx.hyps + (bx, E.subst(bx, ren), E.op("<", E.var(x2), E.var(x)))
    r = C.commutes(a1, a2, hyps)
    if not r:
        # the conflict may only be overwrites with the values already there
        from .equal_writes import equal_value_fission
        r2 = equal_value_fission(proc, loop_path, k, hyps, a1, a2, x, x2)
        if r2:
            return OK
        return Result(False, "a later iteration of the first part does not "
                      "commute with an earlier iteration of the second: "
                      + r.reason + " (and the first part's writes are not "
                      "provably equal-valued: " + r2.reason + ")", r.model)
    return OK


@logged_check
def can_remove_loop(proc, loop_path):
    """§3.5.8: ``for x: s`` -> ``s``: x unused, ≥1 iteration, s idempotent."""
    proc = _ir(proc)
    lp = _loop_at(proc, loop_path)
    if lp.iter in used_syms(tuple(lp.body)):
        return Result(False, f"the body uses the loop variable "
                      f"'{lp.iter.name}'")
    ctx = context(proc, loop_path)
    r = C.prove(E.op("<", ctx.lift(lp.lo), ctx.lift(lp.hi)), ctx.hyps)
    if not r:
        return Result(False, "cannot prove the loop runs at least once: "
                      + r.reason, r.model)
    a = ctx.eff(lp.body)
    r = C.shadows(a, a, ctx.hyps)
    if not r:
        return Result(False, "the body is not idempotent: " + r.reason,
                      r.model)
    return OK


@logged_check
def loop_is_parallel(proc, loop_path):
    """No iteration modifies (writes or reduces) a location another iteration
    reads, writes or reduces; reads in guards and bounds count; the body must
    not change what the loop bounds read.

    The verdict does not depend on the loop's own mode (its body's effects
    and its context are the same for ``seq`` and ``par``), so it is asked
    of the procedure with that loop ``seq`` and remembered: ``parallelize``
    proves a loop race-free, and the re-check of its result then finds the
    answer instead of proving it again."""
    proc = _ir(proc)
    path = norm_path(loop_path)
    lp = _loop_at(proc, path)
    if lp.mode is not IR.Seq:
        lp = lp.update(mode=IR.Seq)
        proc = proc.update(body=_with_stmt(proc.body, path, lp))
    # first with the calls of procedures in the body coarsened to their
    # footprints (whole argument windows, ``footprint``): an
    # over-approximation of the body's effect, so race freedom proven with
    # it holds for the body; a big callee (a scheduled kernel) then costs
    # one access per argument instead of thousands. Not proven that way:
    # the precise effect decides (and words the reason)
    body = with_footprints(lp.body)
    if body is not lp.body:
        coarse = proc.update(body=_with_stmt(proc.body, path,
                                             lp.update(body=body)))
        r = _race_free(coarse, path)
        if r:
            return r
    return _race_free(proc, path)


def _with_stmt(block, path, new):
    """``block`` with the statement at ``path`` replaced by ``new``."""
    (field, i), rest = path[0], path[1:]
    s = new if not rest else block[i].update(
        **{rest[0][0]: _with_stmt(getattr(block[i], rest[0][0]), rest, new)})
    return block[:i] + (s, ) + block[i + 1:]


@memo(maxsize=256)
def _race_free(proc, loop_path):
    lp = _loop_at(proc, loop_path)
    ctx = context(proc, loop_path)
    x = lp.iter
    bx = bounds(x, ctx.lift(lp.lo), ctx.lift(lp.hi))
    a = ctx.eff(lp.body)
    r = C.commutes(_bound_reads(ctx, lp), a, ctx.hyps + (bx, ))
    if not r:
        return Result(False, "the body changes what the loop bounds read: "
                      + r.reason, r.model)
    # two different iterations x != x2: swapping x and x2 exchanges a and
    # a2 and leaves these hypotheses as they are (ctx.hyps do not mention
    # the loop's own iterator), so one direction of the check covers both
    x2 = _fresh(x)
    ren = {x: E.var(x2)}
    a2 = eff_subst(a, ren)
    differ = E.op("or", E.op("<", E.var(x), E.var(x2)),
                  E.op("<", E.var(x2), E.var(x)))
    hyps = ctx.hyps + (bx, E.subst(bx, ren), differ)
    r = C.iterations_disjoint(a, a2, hyps,
                              witness=(bx, E.subst(bx, ren), differ))
    if not r:
        return Result(False, f"iterations of '{x.name}' race: " + r.reason,
                      r.model)
    return OK


@logged_check
def equiv_modulo(proc, path, fields, include_stmt=False, stmt=None,
                 bound=()):
    """Context extension (§3.6.2) for a rewrite of the statement at ``path``
    that is locally equivalent modulo config ``fields``.

    Returns (Result, new_fields): the Result fails when code after the
    statement may read one of the fields; new_fields is M(L - Wr_G(PostEff)),
    the fields the whole procedure is then equivalent modulo (fields that
    are definitely overwritten later drop out).

    ``include_stmt=True``: the code "after" starts with the statement at
    ``path`` itself (its original effect, then PostEff); used for a config
    write inserted right before that statement. ``stmt``: that statement
    as the new program runs it instead (``bind_config``: the reads its
    value replaces taken out), in the same context; ``bound``: ``(Read of
    a fresh name, control expression)`` pairs, the value of each name being
    that of the expression right before the statement (a hypothesis; M
    collapse, so an unknown value assumes nothing).
    """
    proc = _ir(proc)
    ctx = context(proc, path)
    if bound:
        ctx = ctx.with_hyps(*(E.eq(ctx.lift(r), ctx.lift(x)) for r, x in bound
                              if T.is_control(x.type)))
    if include_stmt:
        s = stmt_at(proc, path) if stmt is None else stmt
        ctx = Ctx(ctx.proc, ctx.path, ctx.hyps, ctx.env, ctx.sub,
                  seq(ctx.eff((s, )), ctx.post))
    L = set()
    for f in fields:
        if isinstance(f, E.GVar):
            L.add(f)
        elif hasattr(f, "config"):
            L.add(E.GVar(f.config, f.field))
        else:
            L.add(E.GVar(*f))
    hyps_t = C.hyp_terms(ctx.hyps)
    memo = {}
    for t in flatten(Rd_G(ctx.post)):
        if t.name in L:
            t = rename_term(t)
            res, model = C.sat_under(
                C.mem_term("M", t.name, (), t, memo, free=True), hyps_t)
            if res != "unsat":
                return (Result(False, f"{t.name!r} may be read after the "
                               "statement", model), frozenset(L))
    out = set()
    writes = flatten(Wr_G(ctx.post))
    for g in L:
        ws = [C.mem_term("D", g, (), w, memo) for w in writes if w.name == g]
        res, _ = C.sat_under(S.bnot(S.bor(*ws)), hyps_t)
        if res != "unsat":
            out.add(g)
    return OK, frozenset(out)


@logged_check
def never_same_location(proc, scope, a, b):
    """Whether no run of the statement at ``a[0]`` indexing one buffer with
    ``a[1]`` and no run of the one at ``b[0]`` indexing it with ``b[1]``
    name the same element, in one run of the block holding the statement
    at ``scope`` (an allocation's lifetime): the loops enclosing both inside
    that block run independently (any iteration of one against any of the
    other); those around the block are shared. Indices must not read
    configuration state (refused: their values would be compared at two
    points)."""
    from .equal_writes import _renaming
    proc = _ir(proc)
    (pa, ia), (pb, ib) = a, b
    ia, ib = tuple(ia), tuple(ib)
    if len(ia) != len(ib):
        return Result(False, "the accesses differ in rank")
    if any(isinstance(n, IR.ReadConfig) for e in ia + ib
           for n in walk(e)):
        return Result(False, "an index reads configuration state")
    ca, cb = context(proc, pa), context(proc, pb)
    ren = _renaming(proc, norm_path(scope), norm_path(pb))
    hyps = tuple(ca.hyps) + tuple(E.subst(h, ren) for h in cb.hyps)
    same = E.ands([E.eq(ca.lift(x), E.subst(cb.lift(y), ren))
                   for x, y in zip(ia, ib)])
    return C.prove(E.not_(same), hyps)

