"""A procedure as a flat list of statement instances over integer domains.

For the size-parametric proof (``parametric``): calls are inlined (an
instruction by its body), windows become index offsets into the buffer
they view, an allocation becomes a storage of its own whose instances are
told apart by the iterators around it, and every ``Assign``/``Reduce``/
``WriteConfig`` becomes an ``FStmt``: its iterators with their bounds, its
guards, its place in execution order (a time vector ``[c0, i0, c1, i1,
...]``, ``If`` branches and calls as one-iteration levels), the location it
writes and its right-hand side as a typed value tree (docs/semantics.md:
the evaluation types are those the interpreter uses).

Control trees: ``('v', name)``, ``('c', n)``, ``(op, a, b)`` for ``+ - *``
and comparisons, ``('/', a, n)``/``('%', a, n)`` flooring by a positive
constant, ``('and'|'or', a, b)``, ``('not', a)``. Size arguments are named
``p<position>`` so two procedures' sizes coincide.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import List

from ..core_ir import datasem as D
from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.types import DATA_TYPES, basetype, is_control, shape
from .symexec import Unsupported

__all__ = ["FStmt", "Flat", "flatten", "reads"]


@dataclass
class FStmt:
    sid: int
    iters: List[str]                 # iterator names, outermost first
    bounds: List[tuple]              # (lo tree, hi tree) per iterator
    guards: List[tuple]              # control trees that hold
    time: List[object]               # ints and iterator names, alternating
    storage: str                     # the location written ...
    idx: List[tuple]                 # ... at these index trees
    rhs: tuple                       # typed value tree, converted to target
    target: object                   # the element type written
    srcinfo: object = None
    par: List[str] = field(default_factory=list)   # par iterators


@dataclass
class Flat:
    params: List[str]
    preds: List[tuple]
    stmts: List[FStmt]
    shapes: dict                     # storage -> [extent trees]
    elem: dict                       # storage -> element type
    outputs: List[str]               # data argument storages
    instance_dims: dict              # alloc storage -> iterators before idx
    asserts: list = field(default_factory=list)
    cfg_keys: dict = field(default_factory=dict)   # storage -> (Config, f)
    #: (FStmt-like context with no write, condition tree): callees'
    #: preconditions and positive sizes at each call
    #: control config fields at the end: (Config, field) -> control tree
    #: (None: not determined by the flattening, e.g. written in a loop)
    ctl_final: dict = field(default_factory=dict)


def _et(t):
    bt = basetype(t)
    return IR.F32 if bt is IR.Num else bt


class _View:
    """A buffer as seen by a name: storage, prefix indices, per-dimension
    map (('pt', tree) or ('iv', lo tree)) onto the storage's dims."""
    __slots__ = ("storage", "prefix", "dims", "elem", "ext", "window")

    def __init__(self, storage, prefix, dims, elem, ext, window=False):
        self.storage, self.prefix, self.dims, self.elem = (
            storage, prefix, dims, elem)
        self.ext = ext            # extent trees of the 'iv' dims, in order
        self.window = window      # a window (its extents are checked)

    def locate(self, idx):
        out, k = list(self.prefix), 0
        for d in self.dims:
            if d[0] == "pt":
                out.append(d[1])
            else:
                if k >= len(idx):
                    raise Unsupported("partial index of a window")
                out.append(_add(d[1], idx[k]))
                k += 1
        if k != len(idx):
            raise Unsupported("index arity")
        return out


def _add(a, b):
    if a == ("c", 0):
        return b
    if b == ("c", 0):
        return a
    return ("+", a, b)


class _Flattener:
    def __init__(self, proc, prefix):
        self.proc = proc
        self.pre = prefix
        self.counter = itertools.count()
        self.stmts = []
        self.shapes, self.elem, self.inst = {}, {}, {}
        self.nalloc = itertools.count()
        self.asserts = []
        self.window_args = set()
        self.cfg_keys = {}
        # control config fields: the global config state of the symbolic
        # heap, followed in program order as control trees over the
        # sizes and iterators; None = not determined here (written in a
        # loop or one branch: later reads are then unsupported)
        self.ctl = {}

    def run(self):
        env = {}
        params, outputs = [], []
        for pos, a in enumerate(self.proc.args):
            if is_control(a.type):
                if a.type is IR.Bool:
                    raise Unsupported("boolean argument")
                env[a.name] = ("v", f"p{pos}")
                params.append(f"p{pos}")
        for pos, a in enumerate(self.proc.args):
            if is_control(a.type):
                continue
            st = f"arg{pos}"
            dims = [self.ctrl(h, env) for h in shape(a.type)]
            self.shapes[st] = dims
            self.elem[st] = _et(a.type)
            if isinstance(a.type, IR.Tensor) and a.type.is_window:
                self.window_args.add(st)
            env[a.name] = _View(st, [], [("iv", ("c", 0))] * len(dims),
                                _et(a.type), list(dims))
            outputs.append(st)
        preds = [self.ctrl(p, env) for p in self.proc.preds]
        self.block(self.proc.body, env, [], [], [], [], [])
        return Flat(params, preds, self.stmts, self.shapes, self.elem,
                    outputs, self.inst, self.asserts, self.cfg_keys,
                    dict(self.ctl))

    # -- statements; ctx: iters, bounds, guards, time prefix, par iters
    def block(self, stmts, env, iters, bounds, guards, time, par, first=0):
        """``first``: the time position of the first statement (an else
        branch's statements come after the then branch's, so that no two
        statements have the same constant time positions: a last writer
        is told by them, ``poly.last_writers``)."""
        env = dict(env)
        for pos, s in enumerate(stmts, first):
            self.stmt(s, env, iters, bounds, guards, time + [pos], par)

    def _level(self):
        return f"{self.pre}{next(self.counter)}"

    def stmt(self, s, env, iters, bounds, guards, time, par):
        self.where = (iters, bounds, guards, s.srcinfo)
        meth = getattr(self, "s_" + type(s).__name__, None)
        if meth is None:
            raise Unsupported(f"statement {type(s).__name__}")
        meth(s, env, iters, bounds, guards, time, par)

    def s_Assign(self, s, env, iters, bounds, guards, time, par):
        view = env[s.name]
        pts = [self.ctrl(i, env) for i in s.idx]
        self.within(view, pts)
        idx = view.locate(pts)
        rhs = s.rhs
        if isinstance(s, IR.Reduce):
            cur = IR.Read(s.name, s.idx, type=s.type, srcinfo=s.srcinfo)
            rhs = IR.BinOp("+", cur, s.rhs, type=s.type,
                           srcinfo=s.srcinfo)
        val = self.stored(rhs, view.elem, env)
        self.emit(iters, bounds, guards, time, par, view.storage, idx,
                  val, view.elem, s.srcinfo)

    s_Reduce = s_Assign

    def s_WriteConfig(self, s, env, iters, bounds, guards, time, par):
        ft = s.config.lookup_type(s.field)
        if ft not in DATA_TYPES:
            self.ctl[(s.config, s.field)] = self.ctrl(s.rhs, env)
            return
        st = f"cfg:{s.config.name()}.{s.field}"
        self.cfg_keys[st] = (s.config, s.field)
        self.elem[st] = _et(ft)
        self.shapes[st] = []
        val = self.stored(s.rhs, _et(ft), env)
        self.emit(iters, bounds, guards, time, par, st, [], val,
                  _et(ft), s.srcinfo)

    def s_Pass(self, s, env, iters, bounds, guards, time, par):
        return None

    def s_If(self, s, env, iters, bounds, guards, time, par):
        c = self.ctrl(s.cond, env)
        v = self._level()
        before, after = dict(self.ctl), []
        for branch, g, k in ((s.body, c, 0), (s.orelse, ("not", c), 1)):
            self.ctl = dict(before)
            self.block(branch, env, iters + [v],
                       bounds + [(("c", k), ("c", k + 1))],
                       guards + [g], time, par, first=k * len(s.body))
            after.append(self.ctl)
        # a field both branches leave alike keeps its tree; the guard is
        # in neither tree, so a field the branches set differently is
        # not determined here
        self.ctl = {key: (after[0].get(key) if after[0].get(key, 0) ==
                          after[1].get(key, 1) else None)
                    for key in set(after[0]) | set(after[1])}

    def s_For(self, s, env, iters, bounds, guards, time, par):
        v = self._level()
        lo, hi = self.ctrl(s.lo, env), self.ctrl(s.hi, env)
        env2 = dict(env)
        env2[s.iter] = ("v", v)
        # a control field the body writes: an iteration may read the
        # previous one's value, and after the loop it is the last
        # iteration's (or the value before, for zero trips): undetermined
        written = _ctl_written(s.body)
        for key in written:
            self.ctl[key] = None
        self.block(s.body, env2, iters + [v], bounds + [(lo, hi)],
                   guards, time, par + ([v] if is_parallel(s.mode)
                                        else []))
        for key in written:
            self.ctl[key] = None

    def s_Alloc(self, s, env, iters, bounds, guards, time, par):
        st = f"{self.pre}alloc{next(self.nalloc)}:{s.name.name}"
        et = _et(s.type)
        dims = ([self.ctrl(h, env) for h in s.type.hi]
                if isinstance(s.type, IR.Tensor) else [])
        # one instance per iteration of the loops around it
        self.inst[st] = list(iters)
        self.shapes[st] = dims
        self.elem[st] = et
        env[s.name] = _View(st, [("v", i) for i in iters],
                            [("iv", ("c", 0))] * len(dims), et,
                            list(dims))
        if not dims:
            # a local scalar starts at zero (docs/semantics.md)
            zero = ("k", D.literal(0, D.domain(et)), D.domain(et))
            self.emit(iters, bounds, guards, time, par, st,
                      env[s.name].prefix, ("conv", D.domain(et), et,
                                           zero), et, None)

    def s_WindowStmt(self, s, env, iters, bounds, guards, time, par):
        env[s.name] = self.view(s.rhs, env)

    def s_Call(self, s, env, iters, bounds, guards, time, par):
        self.call(s, env, iters, bounds, guards, time, par)

    def emit(self, iters, bounds, guards, time, par, st, idx, val, et, si):
        t = []
        for k, v in enumerate(iters):
            t += [time[k], v]
        t.append(time[len(iters)])
        self.stmts.append(FStmt(len(self.stmts), list(iters), list(bounds),
                                list(guards), t, st, list(idx), val, et,
                                si, list(par)))

    def call(self, s, env, iters, bounds, guards, time, par):
        f = s.f
        cenv = {}
        for a, e in zip(f.args, s.args):
            if is_control(a.type):
                cenv[a.name] = self.ctrl(e, env)
            else:
                cenv[a.name] = self.view(e, env)
        for a in f.args:
            if not is_control(a.type):
                want = [self.ctrl(h, cenv) for h in shape(a.type)]
                got = cenv[a.name].ext
                if len(want) != len(got):
                    raise Unsupported("argument rank differs")
                for w_, g_ in zip(want, got):
                    self._assert(("==", w_, g_))
        ctx = FStmt(-1, list(iters), list(bounds), list(guards), [], "",
                    [], ("k", 0, None), None, s.srcinfo)
        for a in f.args:
            if a.type is IR.Size:
                self.asserts.append((ctx, (">=", cenv[a.name], ("c", 1))))
        for p in f.preds:
            self.asserts.append((ctx, self.ctrl(p, cenv)))
        v = self._level()
        self.block(f.body, cenv, iters + [v],
                   bounds + [(("c", 0), ("c", 1))], guards, time, par)

    def view(self, e, env):
        if isinstance(e, IR.Read):
            base = env[e.name]
            if not e.idx:
                return base
            pts = [self.ctrl(i, env) for i in e.idx]
            self.within(base, pts)
            loc = base.locate(pts)
            return _View(base.storage, loc, [], base.elem, [], True)
        if isinstance(e, IR.WindowExpr):
            base = env[e.name]
            acc = []
            for w in e.idx:
                if isinstance(w, IR.Interval):
                    acc.append(("iv", self.ctrl(w.lo, env)))
                else:
                    acc.append(("pt", self.ctrl(w.pt, env)))
            # compose: the window's dims over the base view's dims
            if len(acc) != len(base.ext):
                raise Unsupported("window arity")
            out, ext, k = [], [], 0
            for d in base.dims:
                if d[0] == "pt":
                    out.append(d)
                else:
                    a = acc[k]
                    n = base.ext[k]
                    if a[0] == "iv":
                        w = e.idx[k]
                        hi = self.ctrl(w.hi, env)
                        self._assert(("and", ("<=", ("c", 0), a[1]),
                                      ("and", ("<=", a[1], hi),
                                       ("<=", hi, n))))
                        ext.append(("-", hi, a[1]))
                    else:
                        self._assert(("and", ("<=", ("c", 0), a[1]),
                                      ("<", a[1], n)))
                    k += 1
                    out.append((a[0], _add(d[1], a[1])))
            return _View(base.storage, base.prefix, out, base.elem, ext,
                         True)
        raise Unsupported(f"argument {type(e).__name__}")

    def _assert(self, cond):
        iters, bounds, guards, si = self.where
        ctx = FStmt(-1, list(iters), list(bounds), list(guards), [], "",
                    [], ("k", 0, None), None, si)
        self.asserts.append((ctx, cond))

    def within(self, view, idx):
        """An access through a window stays inside the window."""
        if not view.window:
            return
        for i, n in zip(idx, view.ext):
            self._assert(("and", ("<=", ("c", 0), i), ("<", i, n)))

    # -- control expressions
    def ctrl(self, e, env):
        if isinstance(e, IR.Const):
            if isinstance(e.val, bool):
                return ("c", int(e.val))
            return ("c", int(e.val))
        if isinstance(e, IR.Read) and not e.idx:
            v = env.get(e.name)
            if isinstance(v, tuple):
                return v
            raise Unsupported("a data value in control")
        if isinstance(e, IR.USub):
            return ("-", ("c", 0), self.ctrl(e.arg, env))
        if isinstance(e, IR.Not):
            return ("not", self.ctrl(e.arg, env))
        if isinstance(e, IR.BinOp):
            a, b = self.ctrl(e.lhs, env), self.ctrl(e.rhs, env)
            if e.op in ("/", "%"):
                if b[0] != "c" or b[1] <= 0:
                    raise Unsupported("division by a non-constant")
                return (e.op, a, b[1])
            if e.op == "*" and a[0] != "c" and b[0] != "c":
                raise Unsupported("a product of two variables")
            return (e.op, a, b)
        if isinstance(e, IR.StrideExpr):
            return self.stride(env[e.name], e.dim)
        if isinstance(e, IR.ReadConfig):
            key = (e.config, e.field)
            if key not in self.ctl:
                raise Unsupported("a control config field read before it "
                                  "is written")
            if self.ctl[key] is None:
                raise Unsupported("a control config field read where its "
                                  "value depends on a loop or branch")
            return self.ctl[key]
        raise Unsupported(f"control {type(e).__name__}")

    def stride(self, view, dim):
        """A view's stride in dimension ``dim``: its storage is dense and
        row-major (a window argument's strides are the caller's:
        unsupported)."""
        if view.storage in self.window_args:
            raise Unsupported("the stride of a window argument")
        ivs = [k for k, d in enumerate(view.dims) if d[0] == "iv"]
        if dim >= len(ivs):
            raise Unsupported("stride of a missing dimension")
        out = ("c", 1)
        for n in self.shapes[view.storage][ivs[dim] + 1:]:
            out = n if out == ("c", 1) else ("*", out, n)
        return out

    # -- data expressions (as symexec.dexpr, over trees)
    def _leaf(self, env):
        def leaf(e):
            if isinstance(e, IR.ReadConfig):
                return _et(e.config.lookup_type(e.field))
            return env[e.name].elem
        return leaf

    def stored(self, e, target, env):
        v, t = self.dexpr(e, D.domain(target), env)
        return v if t is target else ("conv", t, target, v)

    def dexpr(self, e, ctx, env):
        leaf = self._leaf(env)
        t = D.eval_type(e, ctx, leaf)
        if isinstance(e, IR.Const):
            return ("k", D.literal(e.val, t), t), t
        if isinstance(e, IR.Read):
            view = env[e.name]
            pts = [self.ctrl(i, env) for i in e.idx]
            self.within(view, pts)
            loc = view.locate(pts)
            return ("rd", view.storage, tuple(loc), view.elem), t
        if isinstance(e, IR.ReadConfig):
            st = f"cfg:{e.config.name()}.{e.field}"
            self.cfg_keys[st] = (e.config, e.field)
            self.elem.setdefault(st, leaf(e))
            self.shapes.setdefault(st, [])
            return ("rd", st, (), leaf(e)), t
        if isinstance(e, IR.USub):
            return ("neg", t, self.operand(e.arg, t, env)), t
        if isinstance(e, IR.BinOp):
            if e.op not in ("+", "-", "*", "/", "%"):
                raise Unsupported(f"data operator {e.op}")
            return ("op", e.op, t, self.operand(e.lhs, t, env),
                    self.operand(e.rhs, t, env)), t
        if isinstance(e, IR.Extern):
            f = e.f
            if f.own_arg_types:
                args = []
                for a in e.args:
                    v, at = self.dexpr(a, D.ext_arg_context(a, leaf), env)
                    args.append(("ext", "#" + type(at).__name__, at, (v, )))
            else:
                args = [self.operand(a, t, env) for a in e.args]
            return ("ext", f.name(), t, tuple(args)), t
        raise Unsupported(f"data expression {type(e).__name__}")

    def operand(self, e, t, env):
        v, te = self.dexpr(e, t, env)
        return v if te is t else ("conv", te, t, v)


def flatten(proc, prefix) -> Flat:
    return _Flattener(proc, prefix).run()



def _ctl_written(stmts, seen=None):
    """The control config fields (Config, field) that ``stmts`` write,
    in callees too."""
    seen = set() if seen is None else seen
    out = set()
    for s in stmts:
        if isinstance(s, IR.WriteConfig):
            if s.config.lookup_type(s.field) not in DATA_TYPES:
                out.add((s.config, s.field))
        elif isinstance(s, IR.Call):
            if id(s.f) not in seen:
                seen.add(id(s.f))
                out |= _ctl_written(s.f.body, seen)
        for attr in ("body", "orelse"):
            sub = getattr(s, attr, None)
            if isinstance(sub, (list, tuple)):
                out |= _ctl_written(sub, seen)
    return out


def reads(tree, out):
    """The ``('rd', ...)`` leaves of a value tree, appended to ``out``."""
    if tree[0] == "rd":
        out.append(tree)
    elif tree[0] in ("op", ):
        reads(tree[3], out)
        reads(tree[4], out)
    elif tree[0] == "neg":
        reads(tree[2], out)
    elif tree[0] == "conv":
        reads(tree[3], out)
    elif tree[0] == "ext":
        for a in tree[3]:
            reads(a, out)
    return out
