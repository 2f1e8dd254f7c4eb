"""Static bounds and precondition checking (docs/api.md §1: every access and call precondition is proven).

``check_proc(proc)`` proves, for every argument value satisfying the
procedure's preconditions (sizes > 0, strides > 0, the ``assert``s):
  * every tensor read/write/reduce index is in bounds, every window slice
    ``lo:hi`` satisfies ``0 <= lo <= hi <= size`` and every window point is in
    bounds, where ``size`` is the extent of the buffer, window statement or
    window argument named (windows are checked against their own extents);
  * every call satisfies its callee's preconditions (control arguments and
    strides substituted, config fields replaced by their values right before
    the call, PreValG), passes a value >= 1 for every ``size`` parameter
    (the callee assumes it) and passes tensors/windows of the declared
    shapes;
  * every allocation size is >= 1;
  * a call passing views of one buffer to two parameters, one of which the
    callee writes, passes provably disjoint regions (the callee's own
    analysis and C ``restrict`` assume its buffer arguments never alias);
    failures raise ``ExoTypeError`` instead of ``BoundsError``.

Facts on a path: the preconditions, enclosing loop bounds ``lo <= i < hi``
and if-conditions (negated in ``else``). Config values come from the effect
package's global dataflow (``lift.valg``); an unknown value (⊥) makes any
obligation mentioning it unprovable.

How queries are made. The walk collects one *obligation* per check as the
two-valued term "path facts ∧ ¬goal" (smt.py's encoding, D-collapse of the
goal, so ⊥ never proves anything). All obligations of a procedure go to z3
as ONE disjunction under the procedure-level facts; in the usual case it is
'unsat' and the procedure is done with a single solver call (cached by the
SMT bridge's canonical LRU). Only when that fails are obligations checked one
by one, in program order, to name the first that fails together with a
counterexample. 'sat' and 'unknown' are both failures.

Why one module of this size: the walker that builds the state of each
statement, the obligations it collects and their discharge are one
analysis; the incremental re-checker (``recheck.py``) subclasses the
walker, which is the seam a split would have to cut through.
"""
from __future__ import annotations


from collections import OrderedDict

from ..caches import container, memo
from ..core_ir import operators as OPS
from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.buffers import aliasing_call_args, written_buffers
from ..core_ir.printer import expr_to_str, stmt_to_str
from ..core_ir.traversal import walk_stmts
from ..errors import BoundsError, ExoTypeError, located
from . import eexpr as E
from . import smt as S
from .checks import hyp_terms, sat_under
from .checklog import logged_check as _logged_check
from .context import proc_hyps
from .loop_values import is_unknown, sharpen
from .lift import (BufSub, env_compose, lift, map_subst, valg, valg_at_iter,
                   valg_block, window_map)

__all__ = ["check_proc", "obligations", "clear_cache", "BoundsError",
           "lift_index"]


# ---------------------------------------------------------------------------
# obligations


class Obligation:
    """One thing to prove: ``neg`` (facts of its path ∧ ¬goal) must be unsat.

    ``what()`` builds the message head (lazily: printing costs more than
    proving); ``stmt``/``expr`` locate it for the user.
    """

    __slots__ = ("neg", "hyps", "what", "stmt", "expr", "goal", "exc")

    def __init__(self, neg, hyps, what, stmt, expr, goal, exc=BoundsError):
        self.neg = neg
        self.hyps = hyps
        self.what = what
        self.stmt = stmt
        self.expr = expr
        self.goal = goal
        self.exc = exc

    def term(self):
        return S.band(*self.hyps, self.neg)


#: small goal -> its negated D-collapse: a re-check builds the same goals
#: (an access's index bounds) for every statement it walks again, and
#: collapsing them is most of building an obligation. Terms are immutable;
#: big ones share sub-terms and hash in exponential time, so they are not
#: kept
_GOAL_MEMO: dict = container("exo_hl.effects.bounds.goals", {})
_GOAL_LIMIT = 1 << 14


def _negated_goal(goal, memo):
    if not S._is_small(goal):
        return S.bnot(S.collapse_D(goal, memo))
    neg = _GOAL_MEMO.get(goal)
    if neg is None:
        neg = S.bnot(S.collapse_D(goal, memo))
        if len(_GOAL_MEMO) >= _GOAL_LIMIT:
            _GOAL_MEMO.clear()
        _GOAL_MEMO[goal] = neg
    return neg


class _St:
    """What the walk knows at a program point (copied, never shared).

    hyps   path facts as two-valued terms (beyond the procedure's own)
    env    PreValG: {GVar: value in entry-state terms}
    sub    window statements in scope (for strides of windows)
    shapes {buffer Sym: ((extent ee, extent text), ...)}
    boxes  {window statement Sym: (root buffer Sym, box)}, a box being one
           (is interval, lo ee, hi ee) per root dimension (a point p is
           (False, p, p + 1)),
           lifted where the window statement stands; never mutated
    """

    __slots__ = ("hyps", "env", "sub", "shapes", "boxes")

    def __init__(self, hyps, env, sub, shapes, boxes=None):
        self.hyps = hyps
        self.env = env
        self.sub = sub
        self.shapes = shapes
        self.boxes = boxes if boxes is not None else {}

    def copy(self, **kw):
        st = _St(self.hyps, self.env, self.sub, dict(self.shapes),
                 self.boxes)
        for k, v in kw.items():
            setattr(st, k, v)
        return st

    def lift_ee(self, ee):
        if self.sub:
            ee = E.subst(ee, self.sub.stride_env())
        return E.subst(ee, self.env) if self.env else ee

    def lift(self, e):
        return self.lift_ee(lift_index(e))


class _Walker:
    def __init__(self, proc, cfg=None):
        self.proc = proc
        self.memo = {}
        self.obs = []
        # config dataflow is only needed when some statement writes config
        # (skipping it avoids ValG's memo lookups on large statement trees;
        # with no config writer it is empty, so cfg=True gives the same)
        self.cfg = _writes_config(proc.body, set()) if cfg is None else cfg

    # -- helpers ----------------------------------------------------------
    def facts(self, ee):
        """Path fact ee -> list of two-valued conjuncts (M-collapse: a ⊥
        fact is simply dropped, which only weakens what we know)."""
        return hyp_terms([ee])

    def need(self, st, goal, what, stmt, expr=None, exc=BoundsError):
        neg = _negated_goal(goal, self.memo)
        if neg is False:
            return
        self.obs.append(Obligation(neg, st.hyps, what, stmt, expr, goal, exc))

    def dense_stride_facts(self, name, his):
        """A fresh allocation is dense row-major."""
        n = len(his)
        out = []
        if n:
            out.append(E.eq(E.var(E.StrideVar(name, n - 1)), E.const(1)))
        for d in range(n - 1):
            h = his[d + 1]
            nxt = E.const(1) if d == n - 2 else E.var(E.StrideVar(name, d + 1))
            if h[0] == "const" or d == n - 2:
                out.append(E.eq(E.var(E.StrideVar(name, d)),
                                E.op("*", h, nxt)))
        return out

    # -- expressions --------------------------------------------------------
    def expr(self, e, st, stmt):
        if isinstance(e, IR.Read):
            if e.idx:
                self.point_access(e.name, e.idx, st, stmt, e)
                for i in e.idx:
                    self.expr(i, st, stmt)
        elif isinstance(e, IR.WindowExpr):
            self.window(e, st, stmt)
        elif isinstance(e, (IR.USub, IR.Not)):
            self.expr(e.arg, st, stmt)
        elif isinstance(e, IR.BinOp):
            self.expr(e.lhs, st, stmt)
            self.expr(e.rhs, st, stmt)
        elif isinstance(e, IR.Extern):
            for a in e.args:
                self.expr(a, st, stmt)

    def point_access(self, name, idx, st, stmt, expr):
        shp = st.shapes.get(name)
        if shp is None or len(shp) != len(idx):
            return  # not a tracked buffer (cannot happen for typed IR)
        bname = name.name
        for d, (i, (sz, sz_ir)) in enumerate(zip(idx, shp)):
            ie = st.lift(i)
            goal = E.and_(E.op("<=", E.const(0), ie), E.op("<", ie, sz))

            def what(i=i, d=d, sz_ir=sz_ir):
                it = expr_to_str(i)
                return (f"index {it} may be out of bounds: dimension {d} of "
                        f"'{bname}' needs 0 <= {it} < {_txt(sz_ir)}")
            self.need(st, goal, what, stmt, expr)

    def window(self, w, st, stmt):
        shp = st.shapes.get(w.name)
        bname = w.name.name
        for d, a in enumerate(w.idx):
            if isinstance(a, IR.Interval):
                self.expr(a.lo, st, stmt)
                self.expr(a.hi, st, stmt)
            else:
                self.expr(a.pt, st, stmt)
            if shp is None or len(shp) != len(w.idx):
                continue
            sz, sz_ir = shp[d]
            if isinstance(a, IR.Interval):
                lo, hi = st.lift(a.lo), st.lift(a.hi)
                goal = E.ands([E.op("<=", E.const(0), lo),
                               E.op("<=", lo, hi), E.op("<=", hi, sz)])

                def what(a=a, d=d, sz_ir=sz_ir):
                    lt, ht = expr_to_str(a.lo), expr_to_str(a.hi)
                    return (f"window slice {lt}:{ht} may be out of bounds: "
                            f"dimension {d} of '{bname}' needs "
                            f"0 <= {lt} <= {ht} <= {_txt(sz_ir)}")
            else:
                p = st.lift(a.pt)
                goal = E.and_(E.op("<=", E.const(0), p), E.op("<", p, sz))

                def what(a=a, d=d, sz_ir=sz_ir):
                    pt = expr_to_str(a.pt)
                    return (f"window point {pt} may be out of bounds: "
                            f"dimension {d} of '{bname}' needs "
                            f"0 <= {pt} < {_txt(sz_ir)}")
            self.need(st, goal, what, stmt, w)

    def window_extents(self, w, st):
        tys = T.shape(w.type) if isinstance(w.type, IR.WindowType) else ()
        out = []
        k = 0
        for a in w.idx:
            if isinstance(a, IR.Interval):
                ee = E.op("-", st.lift(a.hi), st.lift(a.lo))
                out.append((ee, tys[k] if k < len(tys) else (a.hi, a.lo)))
                k += 1
        return tuple(out)

    def arg_strides(self, a, st):
        """Caller-side strides of the tensor/window passed as ``a``."""
        if isinstance(a, IR.WindowExpr):
            raw = [E.var(E.StrideVar(a.name, j))
                   for j, x in enumerate(a.idx) if isinstance(x, IR.Interval)]
        elif isinstance(a, IR.Read):
            n = len(st.shapes.get(a.name, ()))
            raw = [E.var(E.StrideVar(a.name, d)) for d in range(n)]
        else:
            return []
        return [st.lift_ee(r) for r in raw]

    # -- statements ---------------------------------------------------------
    def block(self, stmts, st):
        for s in stmts:
            st = self.stmt(s, st)
        return st

    def stmt(self, s, st):
        """Collect the obligations of ``s`` (checked in state ``st``) and
        return the state after it."""
        if isinstance(s, (IR.Assign, IR.Reduce)):
            if s.idx:
                self.point_access(s.name, s.idx, st, s, None)
                for i in s.idx:
                    self.expr(i, st, s)
            self.expr(s.rhs, st, s)
        elif isinstance(s, IR.WriteConfig):
            self.expr(s.rhs, st, s)
        elif isinstance(s, IR.If):
            self.expr(s.cond, st, s)
            st_body, st_else = self.if_states(s, st)
            self.block(s.body, st_body)
            if s.orelse:
                self.block(s.orelse, st_else)
        elif isinstance(s, IR.For):
            self.expr(s.lo, st, s)
            self.expr(s.hi, st, s)
            self.block(s.body, self.loop_state(s, st))
        elif isinstance(s, IR.Alloc):
            if isinstance(s.type, IR.Tensor):
                for h in s.type.hi:
                    self.need(st, E.op(">=", st.lift(h), E.const(1)),
                              lambda h=h: f"allocation size {expr_to_str(h)}"
                              f" of '{s.name.name}' may not be positive", s, h)
        elif isinstance(s, IR.WindowStmt):
            self.expr(s.rhs, st, s)
        elif isinstance(s, IR.Call):
            self.call(s, st)
        return self.transfer(s, st)

    # -- states ---------------------------------------------------------------
    # The state a statement is checked in depends on the statements before
    # it only through ``transfer``, which changes it only for allocations,
    # window statements and statements writing config state (a call's
    # transfer is its callee's config writes).
    def if_states(self, s, st):
        """(state of the then-branch, of the else-branch or None)."""
        c = st.lift(s.cond)
        st_body = st.copy(hyps=st.hyps + tuple(self.facts(c)))
        st_else = None
        if s.orelse:
            st_else = st.copy(hyps=st.hyps + tuple(self.facts(E.not_(c))))
        return st_body, st_else

    def body_valg(self, body):
        """ValG of a loop body (the config values its iterations write)."""
        return valg_block(body)

    def loop_state(self, s, st):
        """The state the body of loop ``s`` is checked in."""
        lo, hi = st.lift(s.lo), st.lift(s.hi)
        x = E.var(s.iter)
        bd = E.and_(E.op("<=", lo, x), E.op("<", x, hi))
        Gb = _sv(self.body_valg(s.body), st.sub) if self.cfg else None
        # the body's values are relative to the state at the loop, so its
        # lower bound must be too: env_compose maps that state to entry
        # terms (``lo`` is in entry terms already; composed again, a bound
        # reading a field written before the loop, ``C.k = C.k + 1; for i
        # in seq(C.k, n)``, counted that write twice and the second
        # iteration saw the entry values)
        lo_here = _sv({0: lift_index(s.lo)}, st.sub)[0]
        if not Gb:
            return st.copy(hyps=st.hyps + tuple(self.facts(bd)))
        g, known = sharpen(s.iter, lo_here, x, Gb,
                           valg_at_iter(s.iter, lo_here, Gb),
                           f"at the start of iteration {s.iter.name}",
                           "previous")
        return st.copy(hyps=st.hyps + tuple(self.facts(bd)) + tuple(
            t for f in known for t in self.facts(E.subst(f, st.env))),
            env=env_compose(st.env, g))

    def transfer(self, s, st):
        """The state after statement ``s`` run in state ``st``."""
        if isinstance(s, IR.Alloc):
            if isinstance(s.type, IR.Tensor):
                his = [st.lift(h) for h in s.type.hi]
                st = st.copy(hyps=st.hyps + tuple(
                    t for f in self.dense_stride_facts(s.name, his)
                    for t in self.facts(f)))
                st.shapes[s.name] = tuple(
                    (he, h) for h, he in zip(s.type.hi, his))
            else:
                st = st.copy()
                st.shapes[s.name] = ()
            return st
        if isinstance(s, IR.WindowStmt):
            n, m = window_map(s.rhs)
            if st.sub:
                m = map_subst(m, st.sub.stride_env())
            ext = self.window_extents(s.rhs, st)
            boxes = dict(st.boxes)
            boxes[s.name] = self.window_box(s.rhs, st)
            st = st.copy(sub=st.sub.bind(s.name, n, m), boxes=boxes)
            st.shapes[s.name] = ext
            return st
        if not self.cfg:
            return st
        if isinstance(s, IR.Call):
            g = valg(s)
            if g:
                strides = self.call_strides(s, st)
                if strides:
                    g = {k: E.subst(v, strides) for k, v in g.items()}
                st = st.copy(env=env_compose(st.env, _sv(g, st.sub)))
            return st
        # config values it writes
        g = _sv(valg(s), st.sub)
        if g and isinstance(s, IR.For):
            here = {0: lift_index(s.lo), 1: lift_index(s.hi)}
            here = _sv(here, st.sub)
            g, known = sharpen(s.iter, here[0], here[1],
                               _sv(self.body_valg(s.body), st.sub), g,
                               f"after the loop at line "
                               f"{getattr(s.srcinfo, 'lineno', '?')}")
            if known:
                st = st.copy(hyps=st.hyps + tuple(
                    t for f in known for t in self.facts(E.subst(f, st.env))))
        if g:
            st = st.copy(env=env_compose(st.env, g))
        return st

    def call_strides(self, s, st):
        """Callee stride variables -> caller-side strides of the buffers
        passed for its tensor/window parameters."""
        strides = {}
        for fa, a in zip(s.f.args, s.args):
            if isinstance(fa.type, IR.Tensor):
                for d, sv in enumerate(self.arg_strides(a, st)):
                    strides[E.StrideVar(fa.name, d)] = sv
        return strides

    def call(self, s, st):
        """Obligations of a call: callee preconditions, argument shapes,
        disjointness of aliased arguments."""
        f = s.f
        for a in s.args:
            self.expr(a, st, s)
        m = {}
        for fa, a in zip(f.args, s.args):
            if T.is_control(fa.type):
                m[fa.name] = st.lift(a)
        m.update(self.call_strides(s, st))
        full = dict(st.env)
        full.update(m)
        # the callee assumes its size parameters positive (proc_hyps)
        for fa, a in zip(f.args, s.args):
            if fa.type is IR.Size:
                def what(fa=fa, a=a):
                    return (f"size argument '{fa.name.name}' = "
                            f"{expr_to_str(a)} of '{f.name}' may not be "
                            f"positive at this call (a size is >= 1)")
                self.need(st, E.op(">=", m[fa.name], E.const(1)), what, s, a)
        for p in f.preds:
            pe = E.subst(lift_index(p), full)

            def what(p=p, env=st.env):
                out = (f"cannot prove precondition '{expr_to_str(p)}' of "
                       f"'{f.name}' for this call")
                unknown = sorted(repr(k) for k in E.free_keys(lift(p))
                                 if isinstance(k, E.GVar)
                                 and is_unknown(env.get(k, E.const(0))))
                if unknown:
                    out += (f" (the value of {', '.join(unknown)} before "
                            "the call is not known)")
                return out
            self.need(st, pe, what, s)
        for k, (fa, a) in enumerate(zip(f.args, s.args)):
            if not isinstance(fa.type, IR.Tensor):
                continue
            if isinstance(a, IR.WindowExpr):
                ext = self.window_extents(a, st)
            elif isinstance(a, IR.Read):
                ext = st.shapes.get(a.name)
            else:
                ext = None
            if ext is None or len(ext) != len(fa.type.hi):
                continue
            for d, ((ae, at), h) in enumerate(zip(ext, fa.type.hi)):
                pe = E.subst(lift_index(h), full)

                def what(a=a, at=at, d=d, fa=fa, h=h):
                    return (f"argument '{expr_to_str(a)}' of the call to "
                            f"'{f.name}' may have the wrong shape: extent "
                            f"{_txt(at)} of dimension {d} must equal the "
                            f"parameter '{fa.name.name}' size "
                            f"{expr_to_str(h)}")
                self.need(st, E.eq(ae, pe), what, s, a)
        self.call_aliasing(s, st)

    # -- aliasing call arguments ----------------------------------------------
    def window_box(self, w, st):
        """(root Sym, box) that the WindowExpr ``w`` designates, composed
        through the window statements in scope (ee lifted at this point)."""
        lows = []
        for a in w.idx:
            if isinstance(a, IR.Interval):
                lows.append((True, st.lift(a.lo), st.lift(a.hi)))
            else:
                p = st.lift(a.pt)
                lows.append((False, p, E.op("+", p, E.const(1))))
        hit = st.boxes.get(w.name)
        if hit is None:
            return w.name, tuple(lows)
        root, outer = hit
        it = iter(lows)
        out = []
        for is_iv, lo, hi in outer:
            if not is_iv:
                out.append((False, lo, hi))
                continue
            k, l2, h2 = next(it)
            out.append((k, E.op("+", lo, l2), E.op("+", lo, h2)))
        return root, tuple(out)

    def arg_box(self, a, st):
        """(root, box) of a buffer argument, None if it is not one."""
        if isinstance(a, IR.WindowExpr):
            root, box = self.window_box(a, st)
        elif isinstance(a, IR.Read) and not a.idx:
            hit = st.boxes.get(a.name)
            if hit is not None:
                root, box = hit
            else:
                shp = st.shapes.get(a.name)
                if shp is None:
                    return None
                root = a.name
                box = tuple((True, E.const(0), ext) for ext, _ in shp)
        else:
            return None
        return root, tuple((lo, hi) for _, lo, hi in box)

    def call_aliasing(self, s, st):
        """Two parameters viewing one buffer, one of them written by the
        callee, must get provably disjoint boxes (syntactic pre-filter
        first: only such candidate pairs cost an SMT obligation)."""
        alias = {n: r for n, (r, _) in st.boxes.items()}
        cands = aliasing_call_args(s, alias)
        if not cands:
            return
        f = s.f
        written = written_buffers(f)
        arg_of = {fa.name: a for fa, a in zip(f.args, s.args)}
        for root, params in cands:
            for i, p in enumerate(params):
                for q in params[i + 1:]:
                    if p.name not in written and q.name not in written:
                        continue
                    bp = self.arg_box(arg_of[p.name], st)
                    bq = self.arg_box(arg_of[q.name], st)
                    if bp is None or bq is None or bp[0] != bq[0] \
                            or len(bp[1]) != len(bq[1]):
                        goal = E.const(False)
                    else:
                        goal = _disjoint(bp[1], bq[1])

                    def what(p=p, q=q, root=root):
                        ws = [x.name.name for x in (p, q)
                              if x.name in written]
                        return (f"in call to '{f.name}': parameters "
                                f"'{p.name.name}', '{q.name.name}' would all "
                                f"view buffer '{root.name}' in regions not "
                                f"proven disjoint, and '{f.name}' writes to "
                                f"'{ws[0]}'; pass distinct buffers or "
                                f"non-overlapping windows (procedures assume "
                                f"their buffer arguments do not alias)")
                    self.need(st, goal, what, s, None, ExoTypeError)


def _disjoint(b1, b2):
    """Some root dimension where the two half-open intervals share no
    index (an empty interval shares none)."""
    seps = []
    for (l1, h1), (l2, h2) in zip(b1, b2):
        seps.append(E.ors([E.op("<=", h1, l2), E.op("<=", h2, l1),
                           E.op("<=", h1, l1), E.op("<=", h2, l2)]))
    return E.ors(seps)


_LIFT_OPS = OPS.ARITH_OPS | OPS.CMP_OPS | OPS.BOOL_OPS


def lift_index(e):
    """``lift.lift`` for the common control shapes (index expressions),
    without its memo; also the re-check's comparison of unrolled copies
    (``unrolled``).

    Rewrites rebuild equal-but-distinct IR nodes, so the memo of ``lift``
    pays a deep structural comparison per hit; recursing on small index
    expressions is cheaper. Anything else goes to ``lift`` itself, and the
    cases handled here give exactly its result.
    """
    t = type(e)
    if t is IR.Read:
        if not e.idx and T.is_control(e.type):
            return E.var(e.name, E.BOOL if e.type is IR.Bool else E.INT)
    elif t is IR.Const:
        v = e.val
        if isinstance(v, int):
            return E.const(v)
    elif t is IR.BinOp:
        if e.op in _LIFT_OPS and T.is_control(e.type):
            return E.op(e.op, lift_index(e.lhs), lift_index(e.rhs))
    elif t is IR.USub:
        return E.op("neg", lift_index(e.arg))
    elif t is IR.Not:
        return E.not_(lift_index(e.arg))
    return lift(e)


def _writes_config(stmts, seen):
    """Does any statement (or callee, transitively) write a config field?"""
    for n in walk_stmts(stmts):
        if isinstance(n, IR.WriteConfig):
            return True
        if isinstance(n, IR.Call) and id(n.f) not in seen:
            seen.add(id(n.f))
            if _writes_config(n.f.body, seen):
                return True
    return False


def _txt(x):
    """Text of an extent: an IR size expression or (hi, lo) of a slice."""
    if isinstance(x, tuple):
        return f"{expr_to_str(x[0])} - {expr_to_str(x[1])}"
    return expr_to_str(x)


def _sv(G, sub):
    if not G or not sub:
        return G
    senv = sub.stride_env()
    return {k: E.subst(v, senv) for k, v in G.items()}


def _arg_shapes(proc):
    out = {}
    for a in proc.args:
        if isinstance(a.type, IR.Tensor):
            out[a.name] = tuple((lift_index(h), h) for h in a.type.hi)
        else:
            out[a.name] = ()
    return out


def obligations(proc):
    """(procedure-level fact terms, [Obligation...]) in program order."""
    w = _Walker(proc)
    w.block(proc.body, _St((), {}, BufSub(), _arg_shapes(proc)))
    return hyp_terms(proc_hyps(proc)), w.obs


# ---------------------------------------------------------------------------
# solving and reporting


def _fmt_model(proc, model):
    if not model:
        return "any argument values"
    order = {a.name: i for i, a in enumerate(proc.args)}
    args, others = [], []
    for k, v in model.items():
        if isinstance(v, bool):
            v = str(v)
        if isinstance(k, E.StrideVar):
            nm = getattr(k.buf, "name", k.buf)
            key = (1, order.get(k.buf, len(order)), k.dim)
            (args if k.buf in order else others).append(
                (key, f"stride({nm}, {k.dim}) = {v}"))
        elif isinstance(k, E.GVar):
            args.append(((2, repr(k)), f"{k!r} = {v}"))
        elif k in order:
            args.append(((0, order[k]), f"{k.name} = {v}"))
        else:
            others.append(((3, getattr(k, "name", str(k))),
                           f"{getattr(k, 'name', k)} = {v}"))
    args.sort(key=lambda x: x[0])
    others.sort(key=lambda x: x[0])
    txt = ", ".join(t for _, t in args) or "any argument values"
    if others:
        txt += " (at " + ", ".join(t for _, t in others) + ")"
    return txt


def _fail(proc, ob, res, model):
    msg = ob.what()
    if res == "unknown":
        msg += "; the solver could not decide (unknown/timeout), so it is " \
               "not proven"
    else:
        keys = S.term_keys(ob.term())
        model = {k: v for k, v in (model or {}).items() if k in keys}
        msg += f"; counterexample: {_fmt_model(proc, model)}"
    s = ob.stmt
    if ob.exc is not BoundsError:
        # point at the call with a caret rather than reprinting it
        return ob.exc(located(msg, s.srcinfo, proc.name))
    if isinstance(s, (IR.If, IR.For)):
        text = expr_to_str(ob.expr) if ob.expr is not None else None
    else:
        text = stmt_to_str(s)
    src = getattr(ob.expr, "srcinfo", None) or s.srcinfo
    if src is None or not getattr(src, "lineno", 0):
        src = s.srcinfo
    return BoundsError(located(msg, src, proc.name, text))


@_logged_check
def check_proc(proc, solver=None) -> None:
    """Raise ``BoundsError`` unless every access, window, call precondition,
    call argument shape and allocation size of ``proc`` is proven safe."""
    if solver is None:
        _proven(proc)
    else:
        _check(proc, solver)


def clear_cache():
    """Forget memoised results (benchmarks measuring cold checks): every
    cache exo_hl keeps (``exo_hl.caches.clear_all``)."""
    from ..caches import clear_all
    clear_all()


@memo(maxsize=4096)
def _proven(proc):
    """Memo of successes with the default solver (rewrites re-check equal
    procedures; failures raise and are not memoised, so their messages
    always carry the caller's own source locations)."""
    _check(proc, S.solver())
    return True


def _check(proc, solver):
    base, obs = obligations(proc)
    discharge(proc, base, obs, solver)


#: (procedure-level facts, obligation key) of the obligations proven with
#: the default solver; oldest first. After a rewrite the re-checked
#: statements are mostly the same statements in the same facts (a loop
#: nest reordered, a body fissioned, a loop's mode changed): their
#: obligations are not asked again, and the query holds only the new ones
_PROVEN: "OrderedDict[tuple, None]" = container(
    "exo_hl.effects.bounds.proven", OrderedDict())
_PROVEN_LIMIT = 1 << 16


def _ob_key(ob, facts=None):
    """What an obligation's verdict is a function of, besides the
    procedure-level facts: its negated goal and its path facts (as a set).
    None when a term is big: terms share sub-terms, and hashing one walks
    it as a tree (see ``discharge``). ``facts``: {id(path facts): (them,
    their set or None)}, shared by the obligations of one discharge (the
    statements of a block share one tuple of path facts)."""
    if not S._is_small(ob.neg):
        return None
    hyps = ob.hyps
    hit = facts.get(id(hyps)) if facts is not None else None
    if hit is None or hit[0] is not hyps:
        fs = frozenset(hyps) if all(S._is_small(h) for h in hyps) else None
        hit = (hyps, fs)
        if facts is not None:
            facts[id(hyps)] = hit
    return None if hit[1] is None else (ob.neg, hit[1])


class _Facts:
    """Procedure-level facts as a key of ``_PROVEN``: a tuple hashes as a
    tree at every lookup, and a discharge looks up every obligation under
    the same facts; this hashes them once."""

    __slots__ = ("facts", "_hash")

    def __init__(self, facts):
        self.facts = facts
        self._hash = hash(facts)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return isinstance(other, _Facts) and self._hash == other._hash \
            and self.facts == other.facts


def _proven_keys(base):
    """The procedure-level facts as a key, or None when one is big."""
    if not all(S._is_small(h) for h in base):
        return None
    return _Facts(tuple(base))


def _remember_proven(known, keys):
    for k in keys:
        _PROVEN[(known, k)] = None
    while len(_PROVEN) > _PROVEN_LIMIT:
        _PROVEN.popitem(last=False)


def discharge(proc, base, obs, solver=None):
    """Prove the obligations ``obs`` (of procedure ``proc``) under the
    procedure-level facts ``base``; raise for the first (in the order given)
    that is not proven."""
    if not obs:
        return
    if solver is None:
        solver = S.solver()
    known = _proven_keys(base) if solver is S.solver() else None
    if known is not None:
        facts = {}
        keys = [_ob_key(ob, facts) for ob in obs]
        todo = [(ob, k) for ob, k in zip(obs, keys)
                if k is None or (known, k) not in _PROVEN]
        if not todo:
            return
        obs = [ob for ob, _ in todo]
    # One query for everything (obligations grouped by their path facts).
    # Checking only obligations not proven before would make these queries
    # differ from one version of a procedure to the next and defeat the
    # solver's canonical cache; measured slower on the rewrite tests.
    # Grouped by the identity of the facts, not their value: the facts are
    # tuples whose hash walks them as trees, and the values of config
    # fields after loops that write them conditionally share subterms, so
    # that walk is exponential in the number of such loops (equal facts
    # in two objects just make two groups of the same formula).
    groups = {}
    for ob in obs:
        groups.setdefault(id(ob.hyps), (ob.hyps, []))[1].append(ob.neg)
    big = S.bor(*(S.band(*h, S.bor(*negs)) for h, negs in groups.values()))
    res, _ = sat_under(big, base, solver)
    if res == "unsat":
        if known is not None:
            _remember_proven(known, [k for _, k in todo if k is not None])
        return
    # (an obligation proven before is not the first that fails: the others
    # are asked in their order)
    for ob in obs:
        res, model = sat_under(ob.term(), base, solver)
        if res != "unsat":
            raise _fail(proc, ob, res, model)
