"""The reference interpreter: the executable semantics of the IR (docs/api.md §5).

Design: a procedure is compiled once into nested Python closures over a flat
environment (a list; every symbol gets a slot, slot 0 holds the config
state), then run. Compiled code is cached per (procedure, dtypes of its
``R`` parameters), so the element type of every buffer is known when its
accesses are compiled.

Semantics, chosen to agree with the generated C:

- Integer control arithmetic is exact; ``/`` and ``%`` floor.
- Data arithmetic is defined in docs/semantics.md and implemented by
  ``core_ir.datasem`` (the C backend prints the same computation): each
  expression has an evaluation type (32-bit wrapping integers, or the
  widest float involved; literals adopt their context's), integer ``/`` and
  ``%`` truncate and never trap, and every write converts to the target's
  element type (integers wrap; floats saturate into integers, NaN gives 0).
  Integer values are Python ints, float values numpy scalars of their
  precision.
- Tensor allocations are fresh arrays filled with NaN (float types) or 0
  (integer types); reading before writing is the program's bug, and NaN
  makes it show. A local data scalar starts at zero, as the C code
  initialises it.
- ``par`` loops run sequentially, first iteration first, or last first
  when the run's ``ConfigState`` has ``par_order = "reverse"``: a par loop
  whose iterations are independent (what ``parallelize`` proves) gives the
  same results either way, so a run in both orders is an oracle for a race
  the analysis missed (the schedule fuzzer uses it). Calls run the
  callee's body (an ``@instr`` is interpreted by its body, never its C
  template); externs run ``Extern.interpret``.
- With ``race_check = True`` on the run's ``ConfigState``, every ``par``
  loop records the memory locations (element addresses, data scalars,
  config fields) each iteration reads and writes, and two iterations
  touching one location, one of them writing (``+=`` included), raise
  ``RaceError``: the exact oracle, also for races no order would show
  (``core_ir/race_record.py``). It is a separate compilation of the
  procedure: a run without it costs nothing more.
- Config state lives in a ``ConfigState`` (a dict keyed by
  ``(Config, field)``) that persists across the calls of one run. Pass your
  own as ``config_state=`` to start from given values or inspect the state
  afterwards: ``p.interpret(..., config_state=st)``; unset fields read as 0
  (a zero-initialised C context struct). Its values are checked and typed
  at the start of a run by the rule the compiled ``set_config`` follows
  (``config_values``: 300 in an ``i8`` field is refused, 0.1 in an
  ``f32`` one is ``float32(0.1)``).

Why one module of this size: the closure compiler has one case per IR
node, and the cases share the environment layout and the data semantics
helpers; splitting by node kind would scatter that shared state.
"""
from __future__ import annotations

import operator
from typing import Dict

import numpy as np

from ..caches import memo
from . import datasem as D
from . import race_record as RR
from .nodes import IR
from .operators import CONTROL_EVAL, is_parallel
from .syms import Sym
from .call_args import check_call_args
from .typerules import c_precision_problem
from .config_values import normalize_config_state
from .types import (DATA_TYPES, NUMPY_DTYPES, basetype, is_control,
                    is_real_scalar)


class ConfigState(dict):
    """Config field values of one run, keyed by ``(Config, field)``.

    ``st[Cfg.field]`` (a ``ConfigField`` handle) works as a key too.
    """

    #: the order ``par`` loop iterations run in: "forward" or "reverse"
    #: (module docstring); an option of the run, not a config field
    par_order = "forward"
    #: record each par iteration's reads and writes and raise
    #: ``RaceError`` when two iterations conflict (module docstring)
    race_check = False

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.update(*args, **kwargs)

    def update(self, *args, **kwargs):
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    @staticmethod
    def _key(k):
        if hasattr(k, "config") and hasattr(k, "field"):
            return (k.config, k.field)
        return k

    def __getitem__(self, k):
        return dict.__getitem__(self, self._key(k))

    def __setitem__(self, k, v):
        dict.__setitem__(self, self._key(k), v)

    def __contains__(self, k):
        return dict.__contains__(self, self._key(k))

    def get(self, k, default=None):
        return dict.get(self, self._key(k), default)


class InterpreterError(RuntimeError):
    """A run-time failure that static checking should have prevented."""


class RaceError(InterpreterError):
    """Two iterations of a ``par`` loop access one location, at least one
    writing (found by a ``race_check`` run): the message names the loop,
    the location and the two iteration values."""


# ----------------------------------------------------------------------------
# value conversions


#: the ``r_dtypes`` marker of an ``R`` parameter given bf16 data (numpy has
#: no bf16 dtype: bf16 memory is uint16 arrays of its bits)
_BF16 = "bf16"


def _dtype_of(t, r_dtype=None) -> np.dtype:
    bt = basetype(t)
    if bt is IR.Num and r_dtype == _BF16:
        return np.dtype(NUMPY_DTYPES[IR.BF16])
    if bt is IR.Num and r_dtype is not None:
        return np.dtype(r_dtype)
    return np.dtype(NUMPY_DTYPES[bt])


def _is_int_dtype(dt) -> bool:
    return dt.kind in "iu"


_IR_OF_DTYPE = {np.dtype(NUMPY_DTYPES[t]): t for t in DATA_TYPES
                if t is not IR.Num}


def _ir_type(dt):
    """The data type a numpy dtype holds (``R`` buffers: their precision)."""
    return _IR_OF_DTYPE[np.dtype(dt)]


def _neg_index(pname, v):
    return InterpreterError(f"interpreter: negative index {v} in procedure "
                            f"'{pname}'")


_CTRL_OPS = CONTROL_EVAL  # core_ir.operators
_FLOAT_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
              "/": operator.truediv, "%": np.fmod}
_I32_BIAS, _I32_MASK = 1 << 31, (1 << 32) - 1


# ----------------------------------------------------------------------------
# compilation to closures


def _control_config_value(val, name):
    """A control config field holds a 32-bit value: every procedure bounds
    its reads so (``control_ranges``); a wider one is refused at the write
    (the C checks the writes whose value may not fit, ``ValueError``)."""
    def rhs(env):
        v = int(val(env))
        if not -2**31 <= v < 2**31:
            raise ValueError(f"'{name}': a config field was written a "
                             f"value outside the 32-bit range of control "
                             f"values ({v})")
        return v
    return rhs


class _ProcCode:
    """A compiled procedure: slots of its arguments, checks and body."""

    def __init__(self, proc, nslots, arg_slots, arg_dtypes, preds, body):
        self.proc = proc
        self.nslots = nslots
        self.arg_slots = arg_slots
        self.arg_dtypes = arg_dtypes  # per argument: numpy dtype or None
        self.preds = preds            # [(fn, pred expr)]
        self.body = body

    def new_env(self, state, values):
        """A fresh environment holding the argument values (a list)."""
        env = [None] * self.nslots
        env[0] = state
        for k, v in zip(self.arg_slots, values):
            env[k] = v
        return env

    def check_preds(self, env):
        for fn, e in self.preds:
            if not fn(env):
                return e
        return None


@memo(maxsize=256)
def _compiled(proc, r_dtypes: tuple, race: bool = False) -> _ProcCode:
    return _Compiler(proc, dict(r_dtypes), race).compile()


class _Compiler:
    def __init__(self, proc, r_dtypes: Dict[int, str], race=False):
        self.proc = proc
        self.r_dtypes = r_dtypes
        self.race = race    # compile the recording closures (race_check)
        self.slots: Dict[Sym, int] = {}
        self.dtypes: Dict[Sym, np.dtype] = {}  # element dtype of data syms
        self.bf16 = set()   # data syms holding bf16 (their dtype: uint16)

    # -- symbols
    def slot(self, s: Sym) -> int:
        k = self.slots.get(s)
        if k is None:
            k = self.slots[s] = len(self.slots) + 1
        return k

    def use(self, s: Sym) -> int:
        k = self.slots.get(s)
        if k is None:
            raise InterpreterError(
                f"interpreter: symbol '{s.name}' used before it is bound in "
                f"procedure '{self.proc.name}'")
        return k

    def dtype(self, s: Sym) -> np.dtype:
        return self.dtypes[s]

    # -- race_check runs: ``fn`` also records its access (race_record)
    def watch(self, fn, s, idx=None, write=False):
        """``fn`` accessing element ``idx`` (or the scalar) of ``s``."""
        if not self.race:
            return fn
        return RR.watched(fn, self.use(s), idx, (self.proc.name, s.name),
                          write)

    def watch_config(self, fn, cfg, field, write=False):
        if not self.race:
            return fn
        return RR.watched_config(fn, (cfg, field), (
            self.proc.name, f"{cfg.name()}.{field}"), write)

    # -- procedure
    def compile(self) -> _ProcCode:
        p = self.proc
        arg_slots, arg_dtypes = [], []
        for i, a in enumerate(p.args):
            arg_slots.append(self.slot(a.name))
            if is_control(a.type):
                arg_dtypes.append(None)
            else:
                dt = _dtype_of(a.type, self.r_dtypes.get(i))
                self.dtypes[a.name] = dt
                if basetype(a.type) is IR.BF16 or \
                        self.r_dtypes.get(i) == _BF16:
                    self.bf16.add(a.name)
                arg_dtypes.append(dt)
        preds = [(self.expr(e), e) for e in p.preds]
        body = self.block(p.body)
        return _ProcCode(p, len(self.slots) + 1, arg_slots, arg_dtypes, preds,
                         body)

    # -- statements
    def block(self, stmts):
        fns = [f for f in (self.stmt(s) for s in stmts) if f is not None]
        if not fns:
            return lambda env: None
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            f0, f1 = fns

            def run2(env):
                f0(env)
                f1(env)
            return run2
        fns = tuple(fns)

        def run(env):
            for f in fns:
                f(env)
        return run

    def stmt(self, s):
        meth = getattr(self, "s_" + type(s).__name__)
        return meth(s)

    def s_Pass(self, s):
        return None

    def _target(self, s):
        """(slot, dtype, index fn or None) of an Assign/Reduce target."""
        k = self.use(s.name)
        dt = self.dtype(s.name)
        return k, dt, (self.index(s.idx) if s.idx else None)

    def s_Assign(self, s):
        k, dt, idx = self._target(s)
        rhs = self.stored(s.rhs, self.data_type(s.name))
        if idx is None:
            def assign_scalar(env):
                env[k][()] = rhs(env)
            return self.watch(assign_scalar, s.name, None, True)

        def assign(env):
            env[k][idx(env)] = rhs(env)
        return self.watch(assign, s.name, idx, True)

    def s_Reduce(self, s):
        # ``x += e`` is ``x = x + e`` (datasem): one more operation
        k, dt, idx = self._target(s)
        cur = IR.Read(s.name, s.idx, type=s.type, srcinfo=s.srcinfo)
        total = IR.BinOp("+", cur, s.rhs, type=s.type, srcinfo=s.srcinfo)
        rhs = self.stored(total, self.data_type(s.name))
        if idx is None:
            idx = lambda env: ()  # noqa: E731

        def reduce(env):
            env[k][idx(env)] = rhs(env)
        return self.watch(reduce, s.name, idx, True)  # rhs reads: recorded

    def s_WriteConfig(self, s):
        key = (s.config, s.field)
        ft = s.config.lookup_type(s.field)
        if ft in DATA_TYPES:
            rhs = self.stored(s.rhs, ft if ft is IR.BF16
                              else _ir_type(_dtype_of(ft)))
        else:
            val, cast = self.expr(s.rhs), (bool if ft is IR.Bool else int)
            if ft is IR.Bool:
                rhs = lambda env: cast(val(env))  # noqa: E731
            else:
                rhs = _control_config_value(val, self.proc.name)

        def write_config(env):
            env[0][key] = rhs(env)
        return self.watch_config(write_config, s.config, s.field, True)

    def s_If(self, s):
        cond, body = self.expr(s.cond), self.block(s.body)
        orelse = self.block(s.orelse)

        def run_if(env):
            if cond(env):
                body(env)
            else:
                orelse(env)
        return run_if

    def s_For(self, s):
        lo, hi = self.expr(s.lo), self.expr(s.hi)
        k = self.slot(s.iter)
        body = self.block(s.body)

        def run_for(env):
            for v in range(lo(env), hi(env)):
                env[k] = v
                body(env)
        if not is_parallel(s.mode):
            return run_for
        if self.race:
            return RR.par_loop(lo, hi, k, body, (self.proc.name, s.iter.name),
                               RaceError)

        def run_par(env):
            r = range(lo(env), hi(env))
            if getattr(env[0], "par_order", "forward") == "reverse":
                r = reversed(r)
            for v in r:
                env[k] = v
                body(env)
        return run_par

    def s_Alloc(self, s):
        dt = _dtype_of(s.type)
        self.dtypes[s.name] = dt
        k = self.slot(s.name)
        fill = 0 if _is_int_dtype(dt) else np.nan
        if basetype(s.type) is IR.BF16:
            self.bf16.add(s.name)
            fill = 0x7FC0   # a NaN, as for the other floats
        if isinstance(s.type, IR.Tensor):
            dims = [self.expr(h) for h in s.type.hi]

            def alloc(env):
                env[k] = np.full([d(env) for d in dims], fill, dtype=dt)
        else:
            def alloc(env):
                # a local scalar starts at zero, in C too (docs/semantics.md)
                env[k] = np.zeros((), dtype=dt)
        return RR.allocating(alloc, k) if self.race else alloc

    def s_WindowStmt(self, s):
        rhs = self.expr(s.rhs)
        self.dtypes[s.name] = self.dtype(s.rhs.name)
        if s.rhs.name in self.bf16:
            self.bf16.add(s.name)
        k = self.slot(s.name)

        def bind_window(env):
            env[k] = rhs(env)
        return bind_window

    def s_Call(self, s):
        f = s.f
        getters, r_dtypes = [], []
        for i, (a, e) in enumerate(zip(f.args, s.args)):
            if is_control(a.type):
                getters.append(self.expr(e))
                continue
            # a procedure's R is f32 here as in C (an instruction's body is
            # generic): run at another precision, its R locals would still
            # be f32, and rewrites proven for R = f32 would change results
            why = None if f.instr else c_precision_problem(f, a, e)
            if why:
                raise InterpreterError(f"{why} (C refuses the call too)")
            getters.append(self.ref(e))
            if basetype(a.type) is IR.Num:
                r_dtypes.append((i, _BF16 if e.name in self.bf16
                                 else self.dtype(e.name).str))
        code = _compiled(f, tuple(r_dtypes), self.race)
        si = s.srcinfo
        sizes = [(i, a.name.name) for i, a in enumerate(f.args)
                 if a.type is IR.Size]

        def call(env):
            args = [g(env) for g in getters]
            for i, nm in sizes:
                if args[i] < 1:
                    where = f"{si}: " if si is not None and si.lineno else ""
                    raise InterpreterError(
                        f"{where}size argument '{nm}' = {args[i]} of "
                        f"'{f.name}' is not positive at a call in "
                        f"'{self.proc.name}'")
            cenv = code.new_env(env[0], args)
            bad = code.check_preds(cenv)
            if bad is not None:
                from .printer import expr_to_str
                where = f"{si}: " if si is not None and si.lineno else ""
                raise InterpreterError(
                    f"{where}precondition 'assert {expr_to_str(bad)}' of "
                    f"'{f.name}' fails at a call in '{self.proc.name}'")
            code.body(cenv)
        return call

    # -- expressions
    def index(self, idx):
        """A function env -> numpy index for a tuple of index expressions.

        numpy rejects indices past the end but would silently wrap negative
        ones, so those are checked here (a cheap guard against IR bugs).
        """
        if all(isinstance(i, IR.Read) and not i.idx for i in idx):
            get = operator.itemgetter(*[self.use(i.name) for i in idx])
        else:
            fns = [self.expr(i) for i in idx]
            if len(fns) == 1:
                get = fns[0]
            elif len(fns) == 2:
                f0, f1 = fns
                get = lambda env: (f0(env), f1(env))  # noqa: E731
            else:
                get = lambda env: tuple(f(env) for f in fns)  # noqa: E731
        pname = self.proc.name
        if len(idx) == 1:
            def checked1(env):
                v = get(env)
                if v < 0:
                    raise _neg_index(pname, v)
                return v
            return checked1

        def checked(env):
            t = get(env)
            if min(t) < 0:
                raise _neg_index(pname, t)
            return t
        return checked

    def ref(self, e):
        """A buffer, window or scalar location passed by reference."""
        if isinstance(e, IR.WindowExpr):
            return self.expr(e)
        if isinstance(e, IR.Read):
            k = self.use(e.name)
            if not e.idx:
                return lambda env: env[k]
            # an element passed as a scalar: a 0-d view of it
            fns = [self.expr(i) for i in e.idx]
            return lambda env: env[k][tuple(
                slice(v, v + 1) for v in (f(env) for f in fns))].reshape(())
        raise InterpreterError(f"interpreter: cannot pass {e!r} by reference")

    def expr(self, e):
        return getattr(self, "e_" + type(e).__name__)(e)

    def e_Const(self, e):
        v = e.val
        return lambda env: v

    def e_Read(self, e):
        k = self.use(e.name)
        if not e.idx:
            if e.name not in self.dtypes:  # a control value
                return operator.itemgetter(k)
            if not isinstance(e.type, IR.type) or e.type not in DATA_TYPES:
                return operator.itemgetter(k)  # a whole buffer
            if e.name in self.bf16:
                fn = lambda env: D.bf16_bits_to_f32(env[k][()])[()]  # noqa
            elif _is_int_dtype(self.dtype(e.name)):
                fn = lambda env: int(env[k][()])  # noqa: E731
            else:
                fn = lambda env: env[k][()]  # noqa: E731
            return self.watch(fn, e.name)
        idx = self.index(e.idx)
        if e.name in self.bf16:
            fn = lambda env: D.bf16_bits_to_f32(env[k][idx(env)])[()]  # noqa
        elif _is_int_dtype(self.dtype(e.name)):
            fn = lambda env: int(env[k][idx(env)])  # noqa: E731
        else:
            fn = lambda env: env[k][idx(env)]  # noqa: E731
        return self.watch(fn, e.name, idx)

    def e_USub(self, e):
        a = self.expr(e.arg)
        return lambda env: -a(env)

    def e_Not(self, e):
        a = self.expr(e.arg)
        return lambda env: not a(env)

    def e_BinOp(self, e):
        lhs, rhs = self.expr(e.lhs), self.expr(e.rhs)
        if e.op == "and":
            return lambda env: lhs(env) and rhs(env)
        if e.op == "or":
            return lambda env: lhs(env) or rhs(env)
        op = _CTRL_OPS[e.op]
        return lambda env: op(lhs(env), rhs(env))

    # -- data expressions (docs/semantics.md, core_ir/datasem.py)
    def leaf(self, e):
        """The data type of a data read (``R`` buffers: their precision)."""
        if isinstance(e, IR.ReadConfig):
            ft = e.config.lookup_type(e.field)
            return ft if ft is IR.BF16 else _ir_type(_dtype_of(ft))
        return self.data_type(e.name)

    def data_type(self, s):
        """The data type held by the buffer ``s``."""
        return IR.BF16 if s in self.bf16 else _ir_type(self.dtype(s))

    def stored(self, e, target):
        """env -> the value of data expression ``e`` converted for a
        location of data type ``target`` (for a bf16: its bits, as bf16
        memory and config state hold them)."""
        fn, t = self.dexpr(e, D.domain(target))
        if target is IR.BF16:
            bits = D.f32_to_bf16_bits
            conv = D.convert
            return lambda env: bits(conv(fn(env), t, IR.F32))[()]
        if t is target:
            return fn
        conv = D.convert
        return lambda env: conv(fn(env), t, target)

    def dexpr(self, e, ctx):
        """(env -> value, evaluation type) of data expression ``e`` in
        context ``ctx`` (an evaluation type)."""
        t = D.eval_type(e, ctx, self.leaf)
        if isinstance(e, IR.Const):
            v = D.literal(e.val, t)
            return (lambda env: v), t
        if isinstance(e, IR.Read):
            k = self.use(e.name)
            idx = self.index(e.idx) if e.idx else (lambda env: ())
            if e.name in self.bf16:
                val = D.bf16_bits_to_f32
                fn = lambda env: val(env[k][idx(env)])[()]  # noqa: E731
            elif t is IR.I32:
                fn = lambda env: int(env[k][idx(env)])  # noqa: E731
            else:
                fn = lambda env: env[k][idx(env)]  # noqa: E731
            return self.watch(fn, e.name, idx), t
        if isinstance(e, IR.ReadConfig):
            key, zero = (e.config, e.field), D.literal(0, t)
            if e.config.lookup_type(e.field) is IR.BF16:
                val = D.bf16_bits_to_f32
                fn = lambda env: val(env[0].get(key, 0))[()]  # noqa: E731
            elif t is IR.I32:
                fn = lambda env: int(env[0].get(key, zero))  # noqa: E731
            else:
                fn = lambda env: env[0].get(key, zero)  # noqa: E731
            return self.watch_config(fn, e.config, e.field), t
        if isinstance(e, IR.USub):
            a = self.operand(e.arg, t)
            if t is IR.I32:
                def neg_int(env):
                    return ((_I32_BIAS - a(env)) & _I32_MASK) - _I32_BIAS
                return neg_int, t
            return (lambda env: -a(env)), t
        if isinstance(e, IR.BinOp):
            lhs, rhs = self.operand(e.lhs, t), self.operand(e.rhs, t)
            if t is not IR.I32:
                op = _FLOAT_OPS[e.op]
                return (lambda env: op(lhs(env), rhs(env))), t
            if e.op in ("/", "%"):
                op, binop = e.op, D.binop
                return (lambda env: binop(op, lhs(env), rhs(env), t)), t
            op = {"+": operator.add, "-": operator.sub,
                  "*": operator.mul}[e.op]

            def int_op(env):
                v = op(lhs(env), rhs(env))
                return ((v + _I32_BIAS) & _I32_MASK) - _I32_BIAS
            return int_op, t
        if isinstance(e, IR.Extern):
            f = e.f
            if f.own_arg_types:
                args = [self.dexpr(a, D.ext_arg_context(a, self.leaf))[0]
                        for a in e.args]
            else:
                args = [self.operand(a, t) for a in e.args]
            res = D.from_extern
            return (lambda env: res(f.interpret([a(env) for a in args]),
                                    t)), t
        raise InterpreterError(f"interpreter: {type(e).__name__} is not a "
                               f"data expression")

    def operand(self, e, t):
        """env -> the value of ``e`` (in context ``t``) converted to the
        evaluation type ``t`` of the operation it is an operand of."""
        fn, te = self.dexpr(e, t)
        if te is t:
            return fn
        conv = D.convert
        return lambda env: conv(fn(env), te, t)

    def e_WindowExpr(self, e):
        k = self.use(e.name)
        parts = []
        for w in e.idx:
            if isinstance(w, IR.Interval):
                parts.append((True, self.expr(w.lo), self.expr(w.hi)))
            else:
                parts.append((False, self.expr(w.pt), None))
        name = e.name.name

        def window(env):
            a = env[k]
            sl = []
            for d, (is_iv, lo, hi) in enumerate(parts):
                n = a.shape[d]
                if is_iv:
                    l, h = lo(env), hi(env)
                    if not 0 <= l <= h <= n:
                        raise InterpreterError(
                            f"interpreter: window {name}[..{l}:{h}..] out of "
                            f"bounds (dim {d} has size {n})")
                    sl.append(slice(l, h))
                else:
                    p = lo(env)
                    if not 0 <= p < n:
                        raise InterpreterError(
                            f"interpreter: window point {p} of {name} out of "
                            f"bounds (dim {d} has size {n})")
                    sl.append(p)
            return a[tuple(sl)]
        return window

    def e_StrideExpr(self, e):
        k, d = self.use(e.name), e.dim
        return lambda env: env[k].strides[d] // env[k].itemsize

    def e_ReadConfig(self, e):
        key = (e.config, e.field)
        ft = e.config.lookup_type(e.field)
        zero = (_dtype_of(ft).type(0) if ft in DATA_TYPES
                else (False if ft is IR.Bool else 0))
        if ft is IR.BF16:
            val = D.bf16_bits_to_f32
            fn = lambda env: val(env[0].get(key, zero))[()]  # noqa: E731
        else:
            fn = lambda env: env[0].get(key, zero)  # noqa: E731
        return self.watch_config(fn, e.config, e.field)


# ----------------------------------------------------------------------------
# entry point


def run_interpreter(proc_ir, args=(), kwargs=None, config_state=None):
    """Run ``proc_ir`` on numpy arrays / Python scalars, updating in place.

    ``args``/``kwargs`` follow the procedure's signature and are checked
    exactly as the compiled callable checks them (``call_args``). A
    ``config_state`` keyword (in ``kwargs`` too, unless the procedure has an
    argument of that name) supplies the ``ConfigState`` to use. Returns None.
    """
    kwargs = dict(kwargs or {})
    names = [a.name.name for a in proc_ir.args]
    if "config_state" in kwargs and "config_state" not in names:
        config_state = kwargs.pop("config_state")
    if config_state is None:
        config_state = ConfigState()
    elif not isinstance(config_state, dict):
        raise TypeError("config_state must be a ConfigState (or dict)")
    normalize_config_state(config_state)    # values set from Python, typed

    def read_config(cfg, field):
        return config_state.get((cfg, field), 0)

    checked = check_call_args(proc_ir, args, kwargs, read_config=read_config)
    # R parameters run in the precision of R (float32)
    r_dtypes = tuple((i, np.dtype(NUMPY_DTYPES[IR.Num]).str)
                     for i, a in enumerate(proc_ir.args)
                     if not is_control(a.type) and basetype(a.type) is IR.Num)
    race = bool(getattr(config_state, "race_check", False))
    code = _compiled(proc_ir, r_dtypes, race)
    values = [v.reshape(()) if is_real_scalar(a.type) else v
              for a, v in zip(proc_ir.args, checked.values)]
    env = code.new_env(RR.RaceRun(config_state) if race else config_state,
                       values)
    with np.errstate(all="ignore"):
        code.body(env)
    return None
