"""Contexts (§3.6, §3.14): CtrlPred, PreValG, PostEff of a statement.

Paths. A statement inside a procedure is named by a *path*: a tuple of
steps ``(field, index)``, where ``field`` is ``'body'`` or ``'orelse'`` and
``index`` is a position in that statement list. The first step indexes the
procedure's body (its field is always ``'body'``). Example:
``(('body', 1), ('body', 0), ('orelse', 2))`` is
``proc.body[1].body[0].orelse[2]``. A path may also be given in the short
form of plain ints, meaning ``'body'`` at every step: ``(1, 0)``.

``Ctx`` bundles what a check needs about the surroundings of that statement:
  hyps  CtrlPred as a list of conjuncts (procedure preconditions, size
        positivity, dense-tensor stride facts, enclosing loop bounds and
        guards), in terms of the procedure's entry state;
  env   PreValG: config values right before the statement, in entry terms;
  sub   window bindings (WindowStmt) in scope at the statement;
  post  PostEff: the effect of the code that runs after the statement
        (computed on first use: most checks never look at it, and it costs
        time proportional to all the code after the statement).

Only the *state changers* before a statement (config writers, allocations,
window statements; ``core_ir.blockinfo``) are folded over to find its
PreValG and window bindings: every other statement leaves both unchanged,
so the result is the same as folding over the whole prefix.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.blockinfo import sc_prefix
from ..core_ir.nodes import IR
from ..core_ir.paths import norm_path
from . import eexpr as E
from .effects import (EMPTY, at_point, bounds, eff_block, eff_subst, guard,
                      loop, seq)
from .lift import (BufSub, env_compose, lift, valg_at_iter, valg_block,
                   window_map)


class Ctx:
    __slots__ = ("proc", "path", "hyps", "env", "sub", "_post", "_post_fn")

    def __init__(self, proc=None, path=(), hyps=(), env=None, sub=None,
                 post=EMPTY, post_fn=None):
        self.proc = proc
        self.path = path
        self.hyps = tuple(hyps)
        self.env = dict(env or {})
        self.sub = sub or BufSub()
        # post_fn (if given) computes post on first use
        self._post = post
        self._post_fn = post_fn

    @property
    def post(self):
        if self._post_fn is not None:
            self._post = self._post_fn()
            self._post_fn = None
        return self._post

    def lift(self, e):
        """A control expression at this point, in entry-state terms."""
        ee = lift(e)
        if self.sub:
            ee = E.subst(ee, self.sub.stride_env())
        return E.subst(ee, self.env) if self.env else ee

    def eff(self, stmts):
        """Effect of statements executed at this point, in entry terms."""
        return self.place(eff_block(tuple(stmts)))

    def place(self, a):
        """An effect in terms of the state at this point, in entry terms:
        the config values here first, then the windows in scope (whose
        offsets are in entry terms already, evaluated where each window
        was bound)."""
        return at_point(a, self.env, self.sub)

    def with_hyps(self, *more):
        return Ctx(self.proc, self.path, self.hyps + tuple(more), self.env,
                   self.sub, self._post, self._post_fn)


def proc_hyps(proc):
    """Preconditions, size positivity and dense-tensor stride facts."""
    hyps = []
    for a in proc.args:
        if a.type is IR.Size:
            hyps.append(E.op(">", E.var(a.name), E.const(0)))
        elif isinstance(a.type, IR.Tensor) and not a.type.is_window:
            hi = a.type.hi
            n = len(hi)
            if n:
                hyps.append(E.eq(E.var(E.StrideVar(a.name, n - 1)),
                                 E.const(1)))
            for d in range(n - 1):
                h = lift(hi[d + 1])
                nxt = E.var(E.StrideVar(a.name, d + 1))
                if h[0] == "const":
                    hyps.append(E.eq(E.var(E.StrideVar(a.name, d)),
                                     E.op("*", h, nxt)))
            # dense row-major: stride of the last-but-one dim is the last size
            if n >= 2:
                h = lift(hi[n - 1])
                hyps.append(E.eq(E.var(E.StrideVar(a.name, n - 2)), h))
    for p in proc.preds:
        hyps.append(lift(p))
    return hyps


def _havoc(G):
    return {k: E.bot(v[2] if v[0] in ("var", "const") else E.sort_of(v))
            for k, v in G.items()}


def context(proc, path):
    """The Ctx of the statement at ``path`` in ``proc`` (an IR.Proc)."""
    path = norm_path(path)
    hyps = proc_hyps(proc)
    gamma = {}
    sub = BufSub()
    guards = []
    posts = []   # thunks, outermost level first
    blk = proc.body
    for depth, (field, i) in enumerate(path):
        if depth:
            blk = getattr(s, field)
        s = blk[i]
        prefix = sc_prefix(blk, i)
        for j, p in enumerate(prefix):
            if isinstance(p, IR.WindowStmt):
                n, m = window_map(p.rhs)
                if sub:
                    m = tuple((k, E.subst(v, sub.stride_env())) for k, v in m)
                # the offsets in entry terms, with the config values where
                # the window is bound (not where it is used)
                g = env_compose(gamma, _sv(valg_block(prefix[:j]), sub))
                if g:
                    m = tuple((k, E.subst(v, g)) for k, v in m)
                sub = sub.bind(p.name, n, m)
        gpre = env_compose(gamma, _sv(valg_block(prefix), sub))
        # post effect at this level: the rest of this block
        if i + 1 < len(blk):
            posts.append(_post_rest(blk, i, gpre, sub, tuple(guards)))
        if depth == len(path) - 1:
            gamma = gpre
            break
        nf = path[depth + 1][0]
        if isinstance(s, IR.If):
            c = _ap(gpre, sub, lift(s.cond))
            c = c if nf == "body" else E.not_(c)
            hyps.append(c)
            guards.append(c)
            gamma = gpre
        elif isinstance(s, IR.For):
            if nf != "body":
                raise ValueError("a loop has no 'orelse'")
            lo, hi = _ap(gpre, sub, lift(s.lo)), _ap(gpre, sub, lift(s.hi))
            bd = bounds(s.iter, lo, hi)
            hyps.append(bd)
            Gb = _sv(valg_block(sc_prefix(s.body, len(s.body))), sub)
            # relative to the state at the loop, as Gb is (lo is in entry
            # terms: composed with gpre again it would count the config
            # writes before the loop twice)
            lo_here = _ap(None, sub, lift(s.lo))
            gamma = env_compose(gpre, valg_at_iter(s.iter, lo_here, Gb))
            guards.append(bd)
            posts.append(_post_later_iters(s, gpre, sub, Gb, hi,
                                           tuple(guards)))
        else:
            raise ValueError(f"path step into a {type(s).__name__}")

    def post():
        return seq(*(f() for f in reversed(posts))) if posts else EMPTY
    return Ctx(proc, path, hyps, gamma, sub, post_fn=post)


def _post_rest(blk, i, gpre, sub, guards):
    """Thunk: the effect of ``blk[i+1:]`` (run after ``blk[i]``)."""
    def f():
        s, suffix = blk[i], blk[i + 1:]
        gpost = env_compose(gpre, _sv(valg_block((s, )), sub))
        a = at_point(eff_block(tuple(suffix)), gpost, sub)
        return guard(E.ands(list(guards)), a)
    return f


def _post_later_iters(s, gpre, sub, Gb, hi, guards):
    """Thunk: the effect of the iterations of loop ``s`` after this one,
    with the globals its body writes made unknown."""
    def f():
        x2 = s.iter.copy()
        rest = eff_block(tuple(s.body))
        rest = eff_subst(rest, {s.iter: E.var(x2)})
        env2 = env_compose(gpre, _havoc(Gb)) if Gb else gpre
        rest = at_point(rest, env2, sub)
        later = E.and_(E.op("<", E.var(s.iter), E.var(x2)),
                       E.op("<", E.var(x2), hi))
        tail = loop(x2, guard(later, rest))
        return guard(E.ands(list(guards)), tail)
    return f


def _sv(G, sub):
    if not G or not sub:
        return G
    senv = sub.stride_env()
    return {k: E.subst(v, senv) for k, v in G.items()}


def _ap(gamma, sub, ee):
    if sub:
        ee = E.subst(ee, sub.stride_env())
    return E.subst(ee, gamma) if gamma else ee


def loop_iter_hyps(ctx, loop_stmt, it):
    """Bd(it) for ``loop_stmt`` (at ctx) with its iterator renamed to ``it``."""
    lo, hi = ctx.lift(loop_stmt.lo), ctx.lift(loop_stmt.hi)
    return bounds(it, lo, hi)


def is_data_scalar(t):
    return T.is_real_scalar(t)
