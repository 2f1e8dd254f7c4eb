"""Symbolic execution of a procedure at concrete sizes.

Control values (sizes, indices, loop counters) are concrete integers; data
values are terms (``terms.Terms``) over the inputs' initial values. The
run mirrors the reference interpreter's semantics (docs/semantics.md,
``core_ir/interpret.py``) case by case, so buffers end up holding the exact
value trees the procedure computes. Calls run the callee's body (an
instruction by its body). ``par`` loops are checked for races on the way:
an element written in one iteration and read or written in another.
Anything outside this fragment (a branch on a data value, a control config
field never set) raises ``Unsupported``: the verdict is then ``unknown``.
"""
from __future__ import annotations

import numpy as np

from ..core_ir import datasem as D
from ..core_ir.nodes import IR
from ..core_ir.operators import CONTROL_EVAL, is_parallel
from ..core_ir.types import DATA_TYPES, basetype, is_control, shape

__all__ = ["Unsupported", "ProgramError", "Race", "SymExec",
           "fresh_inputs"]


class Unsupported(Exception):
    """The procedure leaves the fragment the validator can execute."""


class ProgramError(Exception):
    """The procedure fails at these inputs (index out of bounds, a callee's
    precondition false)."""


class Race(ProgramError):
    """Two iterations of a ``par`` loop touch one element, one writing."""


def _elem_type(t):
    bt = basetype(t)
    return IR.F32 if bt is IR.Num else bt


def fresh_inputs(terms, proc, sizes):
    """Symbolic argument values: ``sizes`` (name -> int) for control
    arguments, for data arguments object arrays of input terms named by the
    argument's position (so two procedures' inputs coincide)."""
    vals, types = [], []
    env = {}
    for pos, a in enumerate(proc.args):
        if is_control(a.type):
            v = sizes[a.name.name]
            env[a.name] = v
            vals.append(v)
            types.append(None)
            continue
        et = _elem_type(a.type)
        dims = [_ctrl_const(h, env) for h in shape(a.type)]
        arr = np.empty(dims, dtype=object)
        for idx in np.ndindex(*dims):
            arr[idx] = terms.input(f"arg{pos}", idx, et)
        vals.append(arr)
        types.append(et)
    return vals, types


def _ctrl_const(e, env):
    return SymExec._ctrl_static(e, env)


class _ParFrame:
    __slots__ = ("it", "w", "r", "keep", "loop")

    def __init__(self, loop):
        self.loop, self.it = loop, None
        self.w, self.r, self.keep = {}, {}, []


class SymExec:
    """One symbolic run; ``config`` is the config state (a dict keyed by
    ``(Config, field)``), shared with the caller and updated in place."""

    def __init__(self, terms, config):
        self.t = terms
        self.config = config
        self.par = []
        self.steps = 0
        self.max_steps = 5_000_000

    # -- entry
    def run(self, proc, values, types):
        env, ety = {}, {}
        for a, v, et in zip(proc.args, values, types):
            env[a.name] = v
            if et is not None:
                ety[a.name] = et
        self._check_preds(proc, env, ety)
        self.block(proc.body, env, ety)

    def _check_preds(self, proc, env, ety):
        for p in proc.preds:
            if not self.ctrl(p, env, ety):
                raise ProgramError(f"precondition of '{proc.name}' fails")

    # -- statements
    def block(self, stmts, env, ety):
        for s in stmts:
            self.stmt(s, env, ety)

    def stmt(self, s, env, ety):
        self.steps += 1
        if self.steps > self.max_steps:
            raise Unsupported("too many statement instances at these sizes")
        meth = getattr(self, "s_" + type(s).__name__, None)
        if meth is None:
            raise Unsupported(f"statement {type(s).__name__}")
        meth(s, env, ety)

    def s_Assign(self, s, env, ety):
        arr, et = env[s.name], ety[s.name]
        idx = tuple(self.ctrl(i, env, ety) for i in s.idx)
        self._inb(arr, idx, s.name)
        rhs = s.rhs
        if isinstance(s, IR.Reduce):
            cur = IR.Read(s.name, s.idx, type=s.type, srcinfo=s.srcinfo)
            rhs = IR.BinOp("+", cur, s.rhs, type=s.type,
                           srcinfo=s.srcinfo)
        val = self.stored(rhs, et, env, ety)
        self._touch(arr, idx, write=True)
        arr[idx] = val

    s_Reduce = s_Assign

    def s_WriteConfig(self, s, env, ety):
        key = (s.config, s.field)
        ft = s.config.lookup_type(s.field)
        if ft in DATA_TYPES:
            val = self.stored(s.rhs, _elem_type(ft), env, ety)
        else:
            val = self.ctrl(s.rhs, env, ety)
            val = bool(val) if ft is IR.Bool else int(val)
        self._touch_cfg(key, write=True)
        self.config[key] = val

    def s_Pass(self, s, env, ety):
        return None

    def s_If(self, s, env, ety):
        if self.ctrl(s.cond, env, ety):
            self.block(s.body, env, ety)
        else:
            self.block(s.orelse, env, ety)

    def s_For(self, s, env, ety):
        self.loop(s, env, ety)

    def s_Alloc(self, s, env, ety):
        et = _elem_type(s.type)
        ety[s.name] = et
        if isinstance(s.type, IR.Tensor):
            dims = [self.ctrl(h, env, ety) for h in s.type.hi]
            arr = np.empty(dims, dtype=object)
            tag = f"{s.name.name}@{self.steps}"
            for idx in np.ndindex(*dims):
                arr[idx] = self.t.undef(tag, idx, et)
        else:
            arr = np.empty((), dtype=object)
            arr[()] = self.t.const(D.literal(0, D.domain(et)), et)
        for f in self.par:
            f.keep.append(arr)
        env[s.name] = arr

    def s_WindowStmt(self, s, env, ety):
        env[s.name] = self.ref(s.rhs, env, ety)
        ety[s.name] = ety[s.rhs.name]

    def s_Call(self, s, env, ety):
        self.call(s, env, ety)

    def loop(self, s, env, ety):
        lo, hi = self.ctrl(s.lo, env, ety), self.ctrl(s.hi, env, ety)
        par = is_parallel(s.mode)
        if par:
            frame = _ParFrame(s)
            self.par.append(frame)
        try:
            for v in range(lo, hi):
                if par:
                    frame.it = v
                env[s.iter] = v
                self.block(s.body, env, ety)
        finally:
            if par:
                self.par.pop()

    def call(self, s, env, ety):
        f = s.f
        cenv, cety = {}, {}
        for a, e in zip(f.args, s.args):
            if is_control(a.type):
                cenv[a.name] = self.ctrl(e, env, ety)
                if a.type is IR.Size and cenv[a.name] < 1:
                    raise ProgramError(f"size argument of '{f.name}' < 1")
                continue
            cenv[a.name] = self.ref(e, env, ety)
            cety[a.name] = ety[e.name]
            want = shape(a.type)
            got = cenv[a.name].shape
            if len(want) != len(got) or any(
                    self.ctrl(h, cenv, cety) != g for h, g in zip(want, got)):
                raise ProgramError(f"argument shape mismatch calling "
                                   f"'{f.name}'")
        self._check_preds(f, cenv, cety)
        self.block(f.body, cenv, cety)

    # -- locations
    @staticmethod
    def _inb(arr, idx, name):
        if len(idx) != arr.ndim or any(not 0 <= i < n
                                       for i, n in zip(idx, arr.shape)):
            raise ProgramError(f"index {list(idx)} of '{name.name}' out of "
                               f"bounds {list(arr.shape)}")

    def _touch(self, arr, idx, write):
        if not self.par:
            return
        addr = arr.__array_interface__["data"][0] + sum(
            i * s for i, s in zip(idx, arr.strides))
        self._record(addr, write)

    def _touch_cfg(self, key, write):
        if self.par:
            self._record(("cfg", key), write)

    def _record(self, addr, write):
        for f in self.par:
            it = f.it
            w = f.w.get(addr)
            if w is not None and w != it:
                raise Race(f"race in the par loop over '{f.loop.iter.name}': "
                           f"iterations "
                           f"{w} and {it} touch one location, one writing")
            if write:
                rs = f.r.get(addr)
                if rs and (len(rs) > 1 or it not in rs):
                    other = next(x for x in rs if x != it)
                    raise Race(f"race in the par loop over "
                               f"'{f.loop.iter.name}': "
                               f"iteration {it} writes what iteration "
                               f"{other} reads")
                f.w[addr] = it
            else:
                f.r.setdefault(addr, set()).add(it)

    def ref(self, e, env, ety):
        """A buffer, window (a numpy view) or element passed by reference."""
        if isinstance(e, IR.Read):
            arr = env[e.name]
            if not e.idx:
                return arr
            idx = tuple(self.ctrl(i, env, ety) for i in e.idx)
            self._inb(arr, idx, e.name)
            return arr[tuple(slice(i, i + 1) for i in idx)].reshape(())
        if isinstance(e, IR.WindowExpr):
            arr = env[e.name]
            sl = []
            for d, w in enumerate(e.idx):
                n = arr.shape[d]
                if isinstance(w, IR.Interval):
                    lo = self.ctrl(w.lo, env, ety)
                    hi = self.ctrl(w.hi, env, ety)
                    if not 0 <= lo <= hi <= n:
                        raise ProgramError(f"window of '{e.name.name}' out "
                                           f"of bounds")
                    sl.append(slice(lo, hi))
                else:
                    p = self.ctrl(w.pt, env, ety)
                    if not 0 <= p < n:
                        raise ProgramError(f"window point of "
                                           f"'{e.name.name}' out of bounds")
                    sl.append(p)
            view = arr[tuple(sl)]
            if not isinstance(view, np.ndarray):   # every coordinate a point
                view = arr[tuple(slice(p, p + 1) for p in sl)].reshape(())
            return view
        raise Unsupported(f"cannot pass {type(e).__name__} by reference")

    # -- control expressions
    @staticmethod
    def _ctrl_static(e, env):
        if isinstance(e, IR.Const):
            return e.val
        if isinstance(e, IR.Read) and not e.idx:
            return env[e.name]
        if isinstance(e, IR.BinOp):
            return CONTROL_EVAL[e.op](SymExec._ctrl_static(e.lhs, env),
                                      SymExec._ctrl_static(e.rhs, env))
        if isinstance(e, IR.USub):
            return -SymExec._ctrl_static(e.arg, env)
        raise Unsupported(f"size expression {type(e).__name__}")

    def ctrl(self, e, env, ety):
        if isinstance(e, IR.Const):
            return e.val
        if isinstance(e, IR.Read):
            if e.name in ety:
                raise Unsupported("control flow or index depends on a data "
                                  "value")
            return env[e.name]
        if isinstance(e, IR.BinOp):
            if e.op == "and":
                return self.ctrl(e.lhs, env, ety) and self.ctrl(e.rhs, env,
                                                                ety)
            if e.op == "or":
                return self.ctrl(e.lhs, env, ety) or self.ctrl(e.rhs, env,
                                                               ety)
            try:
                return CONTROL_EVAL[e.op](self.ctrl(e.lhs, env, ety),
                                          self.ctrl(e.rhs, env, ety))
            except ZeroDivisionError:
                raise ProgramError("division by zero in a control "
                                   "expression") from None
        if isinstance(e, IR.USub):
            return -self.ctrl(e.arg, env, ety)
        if isinstance(e, IR.Not):
            return not self.ctrl(e.arg, env, ety)
        if isinstance(e, IR.StrideExpr):
            arr = env[e.name]
            return arr.strides[e.dim] // arr.itemsize
        if isinstance(e, IR.ReadConfig):
            key = (e.config, e.field)
            if key not in self.config:
                raise Unsupported(f"control config field "
                                  f"{e.config.name()}.{e.field} read before "
                                  f"it is set")
            self._touch_cfg(key, write=False)
            v = self.config[key]
            if not isinstance(v, (int, bool)):
                raise Unsupported("control value from a data config field")
            return v
        raise Unsupported(f"control expression {type(e).__name__}")

    # -- data expressions (datasem, as the interpreter evaluates them)
    def _leaf(self, ety):
        def leaf(e):
            if isinstance(e, IR.ReadConfig):
                return _elem_type(e.config.lookup_type(e.field))
            return ety[e.name]
        return leaf

    def stored(self, e, target, env, ety):
        v, t = self.dexpr(e, D.domain(target), env, ety)
        return self.t.convert(v, t, target)

    def dexpr(self, e, ctx, env, ety):
        leaf = self._leaf(ety)
        t = D.eval_type(e, ctx, leaf)
        T = self.t
        if isinstance(e, IR.Const):
            return T.const(D.literal(e.val, t), t), t
        if isinstance(e, IR.Read):
            arr = env[e.name]
            idx = tuple(self.ctrl(i, env, ety) for i in e.idx)
            self._inb(arr, idx, e.name)
            self._touch(arr, idx, write=False)
            return arr[idx], t
        if isinstance(e, IR.ReadConfig):
            key = (e.config, e.field)
            self._touch_cfg(key, write=False)
            if key in self.config:
                return self.config[key], t
            return T.config(e.config, e.field, leaf(e)), t
        if isinstance(e, IR.USub):
            return T.neg(t, self.operand(e.arg, t, env, ety)), t
        if isinstance(e, IR.BinOp):
            if e.op not in ("+", "-", "*", "/", "%"):
                raise Unsupported(f"data operator {e.op}")
            a = self.operand(e.lhs, t, env, ety)
            b = self.operand(e.rhs, t, env, ety)
            return T.binop(e.op, t, a, b), t
        if isinstance(e, IR.Extern):
            f = e.f
            if f.own_arg_types:
                args = [self.dexpr(a, D.ext_arg_context(a, leaf), env, ety)
                        for a in e.args]
                args = [T.extern("#" + _tn(at), at, [v]) for v, at in args]
            else:
                args = [self.operand(a, t, env, ety) for a in e.args]
            return T.extern(f.name(), t, args), t
        raise Unsupported(f"data expression {type(e).__name__}")

    def operand(self, e, t, env, ety):
        v, te = self.dexpr(e, t, env, ety)
        return self.t.convert(v, te, t)


def _tn(t):
    return type(t).__name__
