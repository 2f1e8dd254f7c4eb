"""The size-parametric proof: prophecies and three verification conditions.

After Clément and Cohen (OOPSLA 2022), with the original procedure as the
specification. Every original statement instance ``s`` of ``S`` writes a
value named ``V_S(s)``, defined by S's right-hand side with each read
replaced by its last writer's name (isl's lexmax) or the input. A scheduled
statement ``T`` may carry a prophecy ``(S, sigma)``: each instance ``t``
claims to write ``V_S(sigma(t))``. Prophecies are *guessed* (from the
statement's source location and by matching its accesses) and never
trusted: they are what the conditions check. Statements without one
(copies made by staging) are transparent: their value is their
right-hand side.

- VC2 (defined, in bounds): every access is inside its buffer, and every
  read of a buffer the procedure allocates has a write before it.
- VC3 (prophecies): for every instance of a prophesied ``T``, ``sigma(t)``
  is an instance of ``S``, and T's right-hand side, its reads replaced by
  their last writers' values, equals S's right-hand side at ``sigma(t)``.
- VC1 (outputs): every data argument and config field ends with the value
  the original leaves there (the last writers of both, or the input).
- Race freedom: no two iterations of a ``par`` loop touch one location,
  one of them writing.

By induction over the scheduled run, VC2 and VC3 make every prophesied
write hold its claimed value, and VC1 then gives equal final states, for
all sizes the preconditions allow. Z3 discharges each condition with
values uninterpreted (``zvalues``) and control arithmetic exact.
"""
from __future__ import annotations

import z3

from .flatten import flatten, reads as _reads
from .limits import RLIMIT, TIMEOUT_MS, bound, why_unknown
from .poly import Poly, domain_constraints, isl_cond, isl_expr
from .symexec import Unsupported
from .prophecy import guess_prophecies
from .races import check_races
from .value_types import read_type
from .verdict import Failed
from .zvalues import ZV, _truth, ctrl_z3

__all__ = ["prove", "Failed"]

_MAX_DEPTH = 12


class _Side:
    """One procedure: its flat form, isl view and value construction."""

    def __init__(self, proc, prefix, zv, params, context_isl, spec):
        self.flat = flatten(proc, prefix)
        self.poly = Poly(self.flat, params, context_isl)
        self.zv = zv
        self.spec = spec            # True: every statement names its value
        self.proph = {}             # sid -> (spec FStmt, [z3 over iters])
        self.cache = {}
        self._read_types = {}
        self._ivars = {}
        self._doms = {}
        self.penv = {p: z3.Int(p) for p in params}

    def ivars(self, st):
        """The iterators of ``st`` as Z3 integers (one list per
        statement: ``read`` knows the identity iteration by it)."""
        got = self._ivars.get(st.sid)
        if got is None or st.sid < 0:
            got = [z3.Int(v) for v in st.iters]
            if st.sid >= 0:
                self._ivars[st.sid] = got
        return got

    def env(self, st, vals=None):
        e = dict(self.penv)
        vals = self.ivars(st) if vals is None else vals
        e.update(zip(st.iters, vals))
        return e

    def dom(self, st, vals=None):
        if vals is None and st.sid >= 0:
            got = self._doms.get(st.sid)
            if got is None:
                got = self._doms[st.sid] = self._dom(st, None)
            return got
        return self._dom(st, vals)

    def _dom(self, st, vals):
        e = self.env(st, vals)
        cs = []
        for v, (lo, hi) in zip(st.iters, st.bounds):
            cs += [ctrl_z3(lo, e) <= e[v], e[v] < ctrl_z3(hi, e)]
        cs += [_truth(ctrl_z3(g, e)) for g in st.guards]
        return z3.And(cs) if cs else z3.BoolVal(True)

    def sources(self, st, rd):
        """Last-writer pieces of read ``rd`` in ``st`` (templates)."""
        key = (st.sid, rd[1], rd[2])
        got = self.cache.get(key)
        if got is None:
            loc = [isl_expr(i) for i in rd[2]]
            before = [str(x) for x in st.time]
            before += ["0"] * (self.poly.L - len(before))
            got = self.poly.last_writers(st.iters, domain_constraints(st),
                                         loc, before, rd[1])
            self.cache[key] = got
        return got

    def value(self, st, tree, vals, depth=0):
        """(z3 value, value type) of ``tree`` in ``st`` at iteration
        ``vals``."""
        zv = self.zv
        k = tree[0]
        if k == "k":
            return zv.const(tree[1], tree[2]), tree[2]
        if k == "op":
            a, _ = self.value(st, tree[3], vals, depth)
            b, _ = self.value(st, tree[4], vals, depth)
            return zv.op(tree[1], tree[2], a, b), tree[2]
        if k == "neg":
            a, _ = self.value(st, tree[2], vals, depth)
            return zv.neg(tree[1], a), tree[1]
        if k == "conv":
            a, vt = self.value(st, tree[3], vals, depth)
            return zv.conv(tree[1], tree[2], a, vt)
        if k == "ext":
            args = [self.value(st, a, vals, depth)[0] for a in tree[3]]
            return zv.ext(tree[1], tree[2], args), tree[2]
        if k == "rd":
            return (self.read(st, tree, vals, depth),
                    read_type(self, st, tree, self._read_types))
        raise Unsupported(f"value '{k}'")

    def initial(self, storage, idx):
        if storage.startswith("arg") or storage.startswith("cfg:"):
            return self.zv.input(storage, idx)
        return self.zv.undef(storage, idx)

    def read(self, st, rd, vals, depth):
        pieces, none = self.sources(st, rd)
        e = self.env(st, vals)
        idx = [ctrl_z3(i, e) for i in rd[2]]
        # no substitution at the statement's own iteration
        sub = [] if vals is self.ivars(st) else list(zip(self.ivars(st),
                                                         vals))
        out = self.initial(rd[1], idx)
        for cond, w, wv in reversed(pieces):
            wvals = [z3.substitute(x, *sub) if sub else x for x in wv]
            c = z3.substitute(cond, *sub) if sub else cond
            out = z3.If(c, self.written(w, wvals, depth + 1), out)
        return out

    def written(self, w, wvals, depth):
        """The value instance ``wvals`` of ``w`` wrote."""
        if self.spec:
            return self.zv.proph(w.sid, wvals)
        p = self.proph.get(w.sid)
        if p is not None:
            s, sigma = p
            sub = list(zip(self.ivars(w), wvals))
            return self.zv.proph(s.sid, [z3.substitute(x, *sub) if sub
                                         else x for x in sigma])
        if depth > _MAX_DEPTH:
            raise Unsupported("a chain of writes without a prophecy (a "
                              "statement whose value needs induction)")
        return self.value(w, w.rhs, wvals, depth)[0]


def _valid(facts, goal, rlimit=RLIMIT, timeout=TIMEOUT_MS):
    """(holds, z3 result, model or None, why unknown) of ``facts -> goal``."""
    s = bound(z3.Solver(), rlimit, timeout)
    s.add(*facts)
    s.add(z3.Not(goal))
    r = s.check()
    return (r == z3.unsat, r, (s.model() if r == z3.sat else None),
            why_unknown(s) if r == z3.unknown else "")


class Prover:
    def __init__(self, orig, sched, rlimit=RLIMIT, timeout=TIMEOUT_MS):
        self.zv = ZV()
        self.rlimit = rlimit
        self.timeout = timeout
        o0 = flatten(orig, "o")
        params = o0.params
        self.penv = {p: z3.Int(p) for p in params}
        ctx = []
        for pos, a in enumerate(orig.args):
            nm = f"p{pos}"
            if nm in self.penv:
                from ..core_ir.nodes import IR
                # an ``index`` argument may be negative: interpret()
                # and the C take any 32-bit value (the bounds checks
                # do not assume more), so neither does the proof
                if a.type is IR.Size:
                    ctx.append(f"{nm} >= 1")
        ctx += [isl_cond(p) for p in o0.preds]
        ctx_isl = " and ".join(ctx) if ctx else "1 = 1"
        self.o = _Side(orig, "o", self.zv, params, ctx_isl, spec=True)
        self.s = _Side(sched, "s", self.zv, params, ctx_isl, spec=False)
        self.facts = [ctrl_z3(p, self.penv) for p in o0.preds]
        for pos, a in enumerate(orig.args):
            nm = f"p{pos}"
            if nm in self.penv:
                from ..core_ir.nodes import IR
                if a.type is IR.Size:
                    self.facts.append(self.penv[nm] >= 1)
        self.by_id = {s.sid: s for s in self.o.flat.stmts}
        self.dropped = []          # (sid, why) of prophecies that failed

    # -- unfolding the specification's names
    def axioms(self, terms, rounds=3):
        """Instances of the definitions ``V_S(s) = rhs_S(s)`` for the
        names occurring in ``terms`` (and, ``rounds`` deep, in theirs)."""
        out, seen = [], set()
        todo = list(terms)
        for _ in range(rounds):
            apps = []
            for t in todo:
                _collect(t, apps, seen)
            todo = []
            for app in apps:
                sid = int(app.decl().name()[1:])
                st = self.by_id[sid]
                args = [app.arg(k) for k in range(app.num_args())]
                body = self.o.value(st, st.rhs, args)[0]
                out.append(z3.Implies(self.o.dom(st, args), app == body))
                todo.append(body)
        return out

    def check(self, what, facts, goal):
        ok, r, m, why = _valid(self.facts + self.zv.commutative() + facts,
                               goal, self.rlimit, self.timeout)
        if not ok:
            params = {}
            if m is not None:
                for name, v in self.penv.items():
                    x = m.eval(v, model_completion=False)
                    if z3.is_int_value(x):
                        params[name] = x.as_long()
            raise Failed(f"{what} ("
                         f"{why if r == z3.unknown else 'violated'})",
                         params)

    # -- prophecies (guessed in ``prophecy``; checked by VC3 below)
    def guess(self):
        guess_prophecies(self)

    # -- the conditions
    def check_all(self, facts, goals):
        """Each ``(what, goal)`` of ``goals`` follows from ``facts``: one
        query for all of them, then one each only when it fails (to name
        the goal that does not hold)."""
        if len(goals) > 1:
            try:
                self.check(goals[0][0], facts, z3.And([g for _, g in goals]))
                return
            except Failed:
                pass
        for what, goal in goals:
            self.check(what, facts, goal)

    def vc_bounds(self, side):
        for st in side.flat.stmts:
            accs = [(st.storage, st.idx)] + [(r[1], r[2])
                                              for r in _reads(st.rhs, [])]
            e = side.env(st)
            goals = []
            for storage, idx in accs:
                shape = side.flat.shapes.get(storage)
                if shape is None:
                    continue
                inst = side.flat.instance_dims.get(storage, [])
                idx = idx[len(inst):]
                cs = []
                for i, n in zip(idx, shape):
                    zi = ctrl_z3(i, e)
                    cs += [zi >= 0, zi < ctrl_z3(n, e)]
                if cs:
                    goals.append((f"VC2: an access of {storage} in bounds",
                                  z3.And(cs)))
            if goals:
                self.check_all([side.dom(st)], goals)

    def vc_calls(self):
        """Every call's callee preconditions (and positive sizes) hold,
        windows stay inside what they view and accesses inside windows,
        arguments have the callee's shapes; and the original's
        preconditions imply the scheduled procedure's."""
        for p in self.s.flat.preds:
            self.check("the scheduled procedure's preconditions follow "
                       "from the original's", [], ctrl_z3(p, self.penv))
        seen = set()
        at = {}          # the conditions at one place, asked together
        for ctx, cond in self.s.flat.asserts:
            place = (tuple(ctx.iters), str(ctx.bounds),
                     tuple(map(str, ctx.guards)))
            key = place + (str(cond), )
            if key in seen:
                continue
            seen.add(key)
            at.setdefault(place, (ctx, []))[1].append(
                (f"VC2: a window, call argument or callee precondition at "
                 f"{_where(ctx)}", _truth(ctrl_z3(cond, self.s.env(ctx)))))
        for ctx, goals in at.values():
            self.check_all([self.s.dom(ctx)], goals)

    def vc_shapes(self):
        """Every data argument has the same extents in both procedures,
        at every size the original admits: a scheduled procedure asking
        for a longer buffer (``x: f32[n + 1]`` for ``x: f32[n]``) refuses
        inputs the original accepts, as a stronger precondition does."""
        for st in self.o.flat.outputs:
            a, b = self.o.flat.shapes[st], self.s.flat.shapes.get(st)
            if b is None or len(a) != len(b):
                raise Failed(f"the shape of {st} differs", {})
            self.check_all([], [
                (f"{st} has the original's extent in dimension {d}",
                 ctrl_z3(x, self.penv) == ctrl_z3(y, self.penv))
                for d, (x, y) in enumerate(zip(a, b))])

    def vc_defined(self):
        for st in self.s.flat.stmts:
            for rd in _reads(st.rhs, []):
                if rd[1].startswith("arg") or rd[1].startswith("cfg:"):
                    continue
                _, none = self.s.sources(st, rd)
                self.check(f"VC2: every read of {rd[1]} has a write before "
                           f"it", [], z3.Not(none))

    def vc_prophecies(self):
        """Check every prophecy; a prophecy that fails is dropped (its
        statement becomes transparent, which is always sound) and the
        rest re-checked, until all that remain hold."""
        while True:
            failed = []
            for t in self.s.flat.stmts:
                if t.sid not in self.s.proph:
                    continue
                try:
                    self._vc3(t)
                except (Failed, Unsupported) as e:
                    failed.append((t.sid, e))
            if not failed:
                return
            for sid, _ in failed:
                del self.s.proph[sid]
            self.dropped.extend(failed)

    def _vc3(self, t):
        s, sigma = self.s.proph[t.sid]
        self.check(f"VC3: the prophecy of scheduled statement "
                   f"{_where(t)} names an instance of the original's",
                   [self.s.dom(t)], self.o.dom(s, sigma))
        lhs = self.s.value(t, t.rhs, self.s.ivars(t))[0]
        rhs = self.o.value(s, s.rhs, sigma)[0]
        ax = self.axioms([lhs, rhs])
        self.check(f"VC3: scheduled statement {_where(t)} computes its "
                   f"prophecy", [self.s.dom(t)] + ax, lhs == rhs)

    def vc_outputs(self):
        stores = [st for st in self.o.flat.shapes
                  if st.startswith("arg") or st.startswith("cfg:")]
        stores += [st for st in self.s.flat.shapes
                   if st.startswith("cfg:") and st not in stores]
        for storage in stores:
            if storage.startswith("cfg:") and self.skip(
                    self.cfg_key(storage)):
                continue
            shape = self.o.flat.shapes.get(storage,
                                           self.s.flat.shapes.get(storage))
            dims = [f"x{k}" for k in range(len(shape))]
            zx = [z3.Int(d) for d in dims]
            env = dict(self.penv, **dict(zip(dims, zx)))
            box = [c for d, n in zip(zx, shape)
                   for c in (d >= 0, d < ctrl_z3(n, env))]
            dom_isl = " and ".join(
                f"0 <= {d} < {isl_expr(n)}" for d, n in zip(dims, shape)) \
                or "1 = 1"
            pieces, none = self.o.poly.last_writers(dims, dom_isl, dims,
                                                    None, storage)
            want = self.o.initial(storage, zx)
            for cond, w, wv in reversed(pieces):
                want = z3.If(cond, self.o.written(w, wv, 0), want)
            # one query per piece of the scheduled side's last writers
            # (isl's pieces are disjoint; the rest is the initial value):
            # small queries instead of one over a chain of them all
            pieces, none = self.s.poly.last_writers(dims, dom_isl, dims,
                                                    None, storage)
            cases = [(cond, self.s.written(w, wv, 0))
                     for cond, w, wv in pieces]
            cases.append((none, self.s.initial(storage, zx)))
            for cond, got in cases:
                ax = self.axioms([want, got])
                self.check(f"VC1: {storage} ends as the original leaves "
                           f"it", box + [cond] + ax, want == got)

    def vc_control_config(self):
        """VC1 for control config fields (global variables of the
        symbolic state, as control trees): each ends with the value the
        original leaves, unless compared modulo it."""
        of, sf = self.o.flat.ctl_final, self.s.flat.ctl_final
        for key in set(of) | set(sf):
            if self.skip(key):
                continue
            name = f"config {key[0].name()}.{key[1]}"
            a, b = of.get(key, "input"), sf.get(key, "input")
            if a is None or b is None:
                raise Unsupported(f"{name}: final value not determined")
            if a == "input" or b == "input":
                if a == b:
                    continue
                raise Failed(f"VC1: {name} ends as the original leaves it "
                             f"(one procedure writes it, the other not)")
            za, zb = ctrl_z3(a, self.penv), ctrl_z3(b, self.penv)
            if z3.is_bool(za) or z3.is_bool(zb):
                za, zb = _truth(za), _truth(zb)
            self.check(f"VC1: {name} ends as the original leaves it", [],
                       za == zb)

    def cfg_key(self, storage):
        for flat in (self.o.flat, self.s.flat):
            k = flat.cfg_keys.get(storage)
            if k is not None:
                return k
        return None

    def vc_races(self):
        check_races(self)


def _collect(t, out, seen):
    todo = [t]
    while todo:
        x = todo.pop()
        if x.get_id() in seen:
            continue
        seen.add(x.get_id())
        if z3.is_app(x):
            d = x.decl()
            if d.name().startswith("V") and d.name()[1:].isdigit() and \
                    d.range() == x.sort() and x.num_args() >= 0 and \
                    d.kind() == z3.Z3_OP_UNINTERPRETED:
                out.append(x)
            todo.extend(x.children())






def _where(st):
    si = st.srcinfo
    return f"at {si.filename}:{si.lineno}" if si else f"#{st.sid}"






def prove(orig, sched, rlimit=RLIMIT, timeout=TIMEOUT_MS,
          skip=lambda key: False):
    """None when every condition holds; else raises ``Failed`` or
    ``Unsupported`` naming the first that did not."""
    p = Prover(orig, sched, rlimit, timeout)
    p.skip = skip
    p.guess()
    p.vc_bounds(p.o)
    p.vc_bounds(p.s)
    p.vc_shapes()
    p.vc_calls()
    p.vc_defined()
    p.vc_races()
    p.vc_prophecies()
    try:
        p.vc_control_config()
        p.vc_outputs()
    except (Failed, Unsupported) as e:
        if p.dropped:
            sid, why = p.dropped[0]
            raise type(e)(f"{e}; first prophecy dropped: {why}") from None
        raise
    return p
