"""Control arithmetic stays inside the 64 bits of the generated C.

The effect analysis reasons on unbounded integers; the C computes control
expressions in ``int_fast32_t`` (64 bits on x86-64), where an intermediate
value outside that range is signed overflow: undefined behaviour, in
practice a wrapped index (``A[(i * 3074457345618258603) % 4]`` was proven
in bounds and wrote ``A[-3]``). Every control expression is bounded by
interval arithmetic before any proof relies on it:

- control arguments are 32-bit values (checked at every call,
  ``core_ir.call_args``), sizes at least 1; so are config fields and the
  values of ``stride``;
- a loop iterator lies between the extremes of its bounds;
- ``+ - *`` (by constants: control expressions are quasi-affine), floor
  ``/`` and ``%`` by positive constants, comparisons and boolean operators
  follow their operands' intervals.

An expression whose interval may leave the 64-bit range is a
``BoundsError`` naming it, at decoration time and after every rewrite. The
same walk keeps rewrites' results quasi-affine, as the frontend keeps
written code (``ExoTypeError``).

A statement's verdict is a function of the statement and of the intervals
of the names it mentions where it stands (an iterator's interval holds
inside its loop only), so the statements that passed are remembered under
that pair (``_PASSED``): after a rewrite only the statements it built, or
whose enclosing loops' bounds changed, are walked again.
"""
from __future__ import annotations

from collections import OrderedDict

from ..caches import container
from . import types as T
from .blockinfo import stmt_info
from .nodes import IR
from .printer import expr_to_str
from .traversal import children
from .operators import const_int
from ..errors import BoundsError, ExoTypeError, located

I64 = (-2**63, 2**63 - 1)
I32 = (-2**31, 2**31 - 1)
SIZE = (1, 2**31 - 1)
BOOL = (0, 1)

#: (statement, intervals of the names it mentions) of the statements that
#: passed; oldest first
_PASSED: "OrderedDict[tuple, None]" = container(
    "exo_hl.core_ir.control_ranges.passed", OrderedDict())
_PASSED_LIMIT = 1 << 16

_UNBOUND = object()


def check_control_ranges(proc_ir) -> None:
    """Raise ``BoundsError`` at the first control expression of
    ``proc_ir`` that may overflow 64 bits."""
    r = _Ranges(proc_ir, _arg_env(proc_ir))
    for a in proc_ir.args:
        r.type_(a.type, a.srcinfo)
    for p in proc_ir.preds:
        r.tree(p, None)
    r.stmts(proc_ir.body)


def wide_config_writes(proc_ir) -> frozenset:
    """The control config writes of ``proc_ir`` whose value may leave
    the 32-bit range (the statements: equal ones anywhere count alike). Reads of a config
    field are bounded as 32-bit values (``rng``), by every procedure,
    whoever wrote the field: the generated C checks these writes when it
    runs and fails the call (as ``interpret()`` checks every write), where
    a static refusal would refuse every counter ``Cfg.k = Cfg.k + 1``.
    ``proc_ir`` passed ``check_control_ranges``."""
    r = _WriteRanges(proc_ir, _arg_env(proc_ir))
    r.stmts(proc_ir.body)
    return frozenset(r.wide)


def _arg_env(proc_ir) -> dict:
    env = {}
    for a in proc_ir.args:
        if a.type is IR.Size:
            env[a.name] = SIZE
        elif a.type is IR.Bool:
            env[a.name] = BOOL
        elif T.is_control(a.type):
            env[a.name] = I32
    return env


class _Ranges:
    def __init__(self, proc_ir, env):
        self.proc = proc_ir
        self.env = env

    def stmts(self, body):
        env = self.env
        for s in body:
            names = stmt_info(s).names
            key = (s, tuple(sorted((n, r) for n, r in env.items()
                                   if n in names)))
            if key in _PASSED:
                _PASSED.move_to_end(key)
                continue
            self.stmt(s)
            _PASSED[key] = None
            if len(_PASSED) > _PASSED_LIMIT:
                _PASSED.popitem(last=False)

    def stmt(self, s):
        if isinstance(s, IR.For):
            lo = self.tree(s.lo, s)
            hi = self.tree(s.hi, s)
            outer = self.env.get(s.iter, _UNBOUND)
            self.env[s.iter] = (lo[0], max(lo[0], hi[1] - 1))
            self.stmts(s.body)
            if outer is _UNBOUND:       # the iterator is unbound after
                del self.env[s.iter]
            else:
                self.env[s.iter] = outer
        elif isinstance(s, IR.If):
            self.tree(s.cond, s)
            self.stmts(s.body)
            self.stmts(s.orelse)
        else:
            if isinstance(s, IR.Alloc):
                self.type_(s.type, s.srcinfo)
            for n in children(s):
                self.exprs(n, s)
            if isinstance(s, IR.Call) and s.f.instr is None:
                self.callee(s)

    def callee(self, s):
        """A callee was checked alone with its control arguments 32-bit
        (``check_control_ranges``), but a call may pass a wider value
        (``n * 4``): then its body is walked again with the intervals
        this call passes (its C computes with them: ``k * 2**31`` in the
        callee overflowed for ``k = n * 4``)."""
        env, wide = {}, []
        for a, e in zip(s.f.args, s.args):
            if T.is_control(a.type) and a.type is not IR.Bool:
                r = self.tree(e, s)
                own = SIZE if a.type is IR.Size else I32
                if r[0] < own[0] or r[1] > own[1]:
                    wide.append(f"'{expr_to_str(e)}' as '{a.name}'")
                env[a.name] = (min(r[0], own[0]), max(r[1], own[1]))
            elif a.type is IR.Bool:
                env[a.name] = BOOL
        if not wide:
            return
        inner = _Ranges(s.f, env)
        try:
            for a in s.f.args:
                inner.type_(a.type, a.srcinfo)
            inner.stmts(s.f.body)
        except BoundsError as err:
            raise BoundsError(located(
                f"the call passes {', '.join(wide)}, which may not fit 32 "
                f"bits, and with it a control expression of '{s.f.name}' "
                f"may overflow the 64-bit integers of the generated C: "
                f"{str(err).splitlines()[0]}", s.srcinfo,
                self.proc.name)) from None

    def exprs(self, n, s):
        """``tree`` of every control expression in ``n`` (in pre-order, as
        ``walk`` gives them), except the operands ``rng`` already went
        through for an enclosing one: the same intervals in the same
        environment, so the same verdict (an expression nested d deep was
        bounded d times)."""
        if isinstance(n, IR.expr) and T.is_control(n.type):
            self.tree(n, s)
            self.covered(n, s)
            return
        for c in children(n):
            self.exprs(c, s)

    def covered(self, n, s):
        """``n`` went through ``rng``: so did the operands of ``+ - * / %``,
        comparisons, ``and``/``or``, ``-`` and ``not`` (``rng`` recurses into
        those), but not what is below other nodes (indices of a read)."""
        t = type(n)
        if t is IR.BinOp:
            self.covered(n.lhs, s)
            self.covered(n.rhs, s)
        elif t is IR.USub or t is IR.Not:
            self.covered(n.arg, s)
        elif t is IR.Const or (t is IR.Read and not n.idx):
            return      # (no node below)
        else:
            for c in children(n):
                self.exprs(c, s)

    def type_(self, t, srcinfo):
        for h in getattr(t, "hi", ()):
            self.tree(h, None, srcinfo)

    def tree(self, e, stmt, srcinfo=None):
        self.where = (stmt, srcinfo)
        return self.rng(e)

    def rng(self, e):
        if isinstance(e, IR.Const):
            v = int(e.val)
            return self.fit(e, (v, v))
        if isinstance(e, IR.Read):
            return self.env.get(e.name, I32)
        if isinstance(e, IR.ReadConfig):
            return BOOL if e.type is IR.Bool else I32
        if isinstance(e, IR.StrideExpr):
            return (0, I32[1])
        if isinstance(e, IR.Not):
            self.rng(e.arg)
            return BOOL
        if isinstance(e, IR.USub):
            lo, hi = self.rng(e.arg)
            return self.fit(e, (-hi, -lo))
        if isinstance(e, IR.BinOp):
            a, b = self.rng(e.lhs), self.rng(e.rhs)
            op = e.op
            self.quasi_affine(e)
            if op == "+":
                return self.fit(e, (a[0] + b[0], a[1] + b[1]))
            if op == "-":
                return self.fit(e, (a[0] - b[1], a[1] - b[0]))
            if op == "*":
                ps = [x * y for x in a for y in b]
                return self.fit(e, (min(ps), max(ps)))
            if op in ("/", "%"):
                if b[0] <= 0:       # the frontend allows positive constants
                    return I64
                if op == "%":
                    return (0, b[1] - 1)
                return (min(a[0] // b[0], a[0] // b[1]),
                        max(a[1] // b[0], a[1] // b[1]))
            return BOOL             # comparisons, and, or
        return I64                  # (no other control expressions)

    def quasi_affine(self, e):
        """The frontend's rule for control arithmetic (``*`` by a constant,
        ``/`` and ``%`` by a positive one), for what a rewrite built: a
        replaced operand (``rewrite_expr``, ``bind_config``) could break
        it, and the printed procedure would not parse back."""
        op = e.op
        if op == "*" and const_int(e.lhs) is None \
                and const_int(e.rhs) is None:
            why = "'*' needs a constant operand"
        elif op in ("/", "%") and (const_int(e.rhs) or 0) <= 0:
            why = f"'{op}' needs a positive constant divisor"
        else:
            return
        stmt, srcinfo = self.where
        where = getattr(stmt, "srcinfo", None) or srcinfo or e.srcinfo
        raise ExoTypeError(located(
            f"control expression '{expr_to_str(e)}' is not quasi-affine: "
            f"{why}", where, self.proc.name))

    def fit(self, e, r):
        if I64[0] <= r[0] and r[1] <= I64[1]:
            return r
        stmt, srcinfo = self.where
        where = getattr(stmt, "srcinfo", None) or srcinfo or e.srcinfo
        raise BoundsError(located(
            f"the control expression '{expr_to_str(e)}' may overflow the "
            f"64-bit integers of the generated C (its value may reach "
            f"{r[0] if r[0] < I64[0] else r[1]}; control arguments are "
            f"32-bit values)", where, self.proc.name))


class _WriteRanges(_Ranges):
    """The same walk, uncached (it records), noting the control config
    writes whose value may leave 32 bits (``wide_config_writes``)."""

    def __init__(self, proc_ir, env):
        super().__init__(proc_ir, env)
        self.wide = set()

    def stmts(self, body):
        for s in body:
            self.stmt(s)

    def stmt(self, s):
        super().stmt(s)
        if isinstance(s, IR.WriteConfig):
            t = s.config.lookup_type(s.field)
            if T.is_control(t) and t is not IR.Bool:
                lo, hi = self.tree(s.rhs, s)
                if lo < I32[0] or hi > I32[1]:
                    self.wide.add(s)

    def callee(self, s):
        pass            # checked by check_control_ranges already
