"""Structural unification of a sub-procedure body with a caller block.

The sub-procedure's parameters are the *unknowns*; the block's free symbols
are *known*; symbols bound in both (loop iterators, allocations, window
statements) are identified as they are met. Statements and data expressions
must match exactly (same node kinds, operators, element types, configs,
callees); integer control expressions only produce linear equations
(``solve.Equation``), solved afterwards. Window arguments add a categorical
choice per buffer parameter: which dimensions of the caller's buffer are
slices (the others are points). The matcher records accesses to buffer
parameters without committing to a choice; ``constraints_for`` turns them
into equations once a choice is fixed.

Errors are ``UnifyError`` whose message names the part of the body that did
not match in the user's terms (``its statement 'dst[i] += src[i]':
expected an accumulation 'dst[...] += ...', found an assignment
'res[...] = ...'``); ``UnifyError.progress`` says how far the match got.

Why one module of this size: structural matching has one case per IR
node kind, all threading the same binding state; the equation solving
it feeds is separate (``solve.py``).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ..core_ir import types as T
from ..core_ir.nodes import IR, same_constant
from ..core_ir.printer import expr_to_str, stmt_to_str
from ..core_ir.simplify import affine_form
from ..core_ir.syms import Sym
from ..core_ir.traversal import bound_syms, subst, walk
from .solve import Equation, Lin


class UnifyError(Exception):
    """The sub-procedure body does not match the block (message says why).
    ``first``: the first reason alone (when the message lists several);
    ``progress``: how far the match got (set by ``unify``), to rank the
    instructions that failed by nearness."""

    def __init__(self, msg, first=None):
        super().__init__(msg)
        self.first = first or msg
        self.progress = 0


# ---------------------------------------------------------------------------
# descriptions for messages

def describe_stmt(s) -> str:
    if isinstance(s, IR.Assign):
        return f"an assignment '{s.name.name}[...] = ...'"
    if isinstance(s, IR.Reduce):
        return f"an accumulation '{s.name.name}[...] += ...'"
    if isinstance(s, IR.WriteConfig):
        return f"a config write to '{s.config.name()}.{s.field}'" \
            if callable(getattr(s.config, "name", None)) \
            else f"a config write to '{getattr(s.config, 'name', s.config)}.{s.field}'"
    if isinstance(s, IR.Pass):
        return "a pass"
    if isinstance(s, IR.If):
        return "an if"
    if isinstance(s, IR.For):
        return f"a loop over '{s.iter.name}'"
    if isinstance(s, IR.Alloc):
        return f"an allocation of '{s.name.name}'"
    if isinstance(s, IR.Call):
        return f"a call to '{s.f.name}'"
    if isinstance(s, IR.WindowStmt):
        return f"a window statement '{s.name.name}'"
    return type(s).__name__


def _e(e) -> str:
    try:
        return expr_to_str(e)
    except Exception:
        return repr(e)


def _acc(sym, idx) -> str:
    """An access as written: ``y[i, 16 * jo + ji]`` (``y`` for a scalar)."""
    if not idx:
        return sym.name
    return f"{sym.name}[{', '.join(_e(i) for i in idx)}]"


def _s(s) -> str:
    try:
        return stmt_to_str(s).strip().splitlines()[0]
    except Exception:
        return repr(s)


class Loc:
    """Where in the sub_proc body we are, for messages in the user's terms:
    the instruction's statement being matched (``its 'dst[i] += src[i]'``),
    not a path of statement numbers."""

    def __init__(self, steps=()):
        self.steps = steps  # ((index, owner description, stmt or None), ...)

    def at(self, i, owner=None, stmt=None):
        return Loc(self.steps + ((i, owner, stmt), ))

    def __str__(self):
        if not self.steps:
            return "its body"
        stmt = self.steps[-1][2]
        if stmt is None:
            return "its body"
        if isinstance(stmt, IR.For):
            return f"its loop 'for {stmt.iter.name} in ...'"
        return f"its statement '{_s(stmt)}'"


# ---------------------------------------------------------------------------
# the matcher

class Access:
    """An access of buffer parameter ``param`` to be unified once a window
    choice is fixed. ``kind`` is 'point' (idx: exprs) or 'window' (idx:
    w_access tuples, None for the whole buffer)."""

    __slots__ = ("param", "kind", "cidx", "kidx", "desc")

    def __init__(self, param, kind, cidx, kidx, desc):
        self.param, self.kind, self.cidx, self.kidx, self.desc = \
            param, kind, cidx, kidx, desc


class Matcher:
    """One unification problem: ``sub`` (an IR.Proc) against ``block``.

    ``scope`` maps the caller's symbols visible at the block to their types
    (``{Sym: type}``); it covers every buffer a parameter may bind."""

    def __init__(self, sub, block, scope):
        self.sub = sub
        self.block = tuple(block)
        self.scope = dict(scope)
        self.params = {a.name: a for a in sub.args}
        self.ctrl = [a.name for a in sub.args if T.is_control(a.type)
                     and T.is_int_control(a.type)]
        self.ren: Dict[Sym, Sym] = {}       # callee bound sym -> caller sym
        self.bufs: Dict[Sym, Sym] = {}      # buffer/scalar param -> caller sym
        self.exprs: Dict[Sym, object] = {}  # bool/stride param -> caller expr
        self.eqs: List[Equation] = []
        self.accesses: List[Access] = []
        self.strides: List[tuple] = []      # (param, dim, caller sym, dim, desc)
        self.block_bound = set(bound_syms(self.block))
        self.atoms: List[object] = []       # known atoms, first-seen order
        self.progress = 0                   # nodes met (how far it got)
        self._atom_set = set()

    # -- entry -----------------------------------------------------------
    def run(self):
        body = self.sub.body
        if len(body) != len(self.block):
            raise UnifyError(
                f"its body has {len(body)} statement(s), the code to "
                f"replace {len(self.block)}")
        self.stmts(body, self.block, Loc())
        for a in self.sub.args:
            if not T.is_control(a.type) and a.name not in self.bufs:
                raise UnifyError(
                    f"parameter '{a.name.name}' is not used by the sub_proc "
                    "body, so no argument can be inferred for it")
            if a.type in (IR.Bool, IR.Stride) and a.name not in self.exprs:
                raise UnifyError(
                    f"parameter '{a.name.name}' is not used by the sub_proc "
                    "body, so no argument can be inferred for it")
        return self

    # -- statements --------------------------------------------------------
    def stmts(self, cs, ks, loc, owner=None):
        if len(cs) != len(ks):
            raise UnifyError(
                f"{loc}: it has {len(cs)} statement(s) in "
                f"{owner or 'this block'}, yours {len(ks)}")
        for i, (c, k) in enumerate(zip(cs, ks)):
            self.stmt(c, k, loc.at(i, owner, c))

    def mismatch(self, loc, c, k, why=None):
        msg = f"{loc}: expected {describe_stmt(c)}, found {describe_stmt(k)}"
        if why:
            msg = f"{loc}: {why}"
        msg += f"\n    instruction: {_s(c)}\n    yours:       {_s(k)}"
        return UnifyError(msg)

    def stmt(self, c, k, loc):
        if type(c) is not type(k):
            raise self.mismatch(loc, c, k)
        self.progress += 1
        if isinstance(c, (IR.Assign, IR.Reduce)):
            self.elem_type(c.type, k.type, loc, f"'{c.name.name}'")
            self.access(c.name, c.idx, k.name, k.idx, loc, c, k)
            self.expr(c.rhs, k.rhs, loc)
        elif isinstance(c, IR.WriteConfig):
            if c.config is not k.config or c.field != k.field:
                raise self.mismatch(loc, c, k)
            self.expr(c.rhs, k.rhs, loc)
        elif isinstance(c, IR.Pass):
            pass
        elif isinstance(c, IR.If):
            self.ctrl_expr(c.cond, k.cond, loc)
            self.stmts(c.body, k.body, loc, "the body of that if")
            self.stmts(c.orelse, k.orelse, loc, "the else branch of that if")
        elif isinstance(c, IR.For):
            if c.mode is not k.mode:
                raise self.mismatch(loc, c, k, "loop kinds differ (seq/par)")
            self.int_eq(c.lo, k.lo, loc, "the lower bound of the loop")
            self.int_eq(c.hi, k.hi, loc, "the upper bound of the loop")
            self.ren[c.iter] = k.iter
            self.stmts(c.body, k.body, loc,
                       f"the body of loop '{c.iter.name}'")
        elif isinstance(c, IR.Alloc):
            if c.mem is not k.mem:
                raise self.mismatch(loc, c, k, (
                    f"allocation '{c.name.name}' is in memory "
                    f"{c.mem.__name__}, the block's '{k.name.name}' in "
                    f"{k.mem.__name__}"))
            # an R parameter takes the precision of the buffer passed, an R
            # allocation does not: it is f32 (docs/semantics.md)
            self.type_(c.type, k.type, loc, f"allocation '{c.name.name}'",
                       local=True)
            self.ren[c.name] = k.name
        elif isinstance(c, IR.Call):
            if c.f is not k.f and c.f != k.f:
                raise self.mismatch(loc, c, k)
            for fa, ca, ka in zip(c.f.args, c.args, k.args):
                self.call_arg(fa, ca, ka, loc)
        elif isinstance(c, IR.WindowStmt):
            self.window(c.rhs, k.rhs, loc)
            self.ren[c.name] = k.name
        else:  # pragma: no cover - grammar is closed
            raise self.mismatch(loc, c, k)

    def type_(self, ct, kt, loc, what, local=False):
        if isinstance(ct, IR.Tensor) != isinstance(kt, IR.Tensor):
            raise UnifyError(f"{loc}: {what} has a different type")
        if isinstance(ct, IR.Tensor):
            if len(ct.hi) != len(kt.hi):
                raise UnifyError(f"{loc}: {what} has {len(ct.hi)} "
                                 f"dimensions, the block's {len(kt.hi)}")
            self.elem_type(ct.type, kt.type, loc, what, local)
            for d, (a, b) in enumerate(zip(ct.hi, kt.hi)):
                self.int_eq(a, b, loc, f"size {d} of {what}")
        else:
            self.elem_type(ct, kt, loc, what, local)

    def elem_type(self, ct, kt, loc, what, local=False):
        """``local``: the types of an allocation of the sub_proc, where
        ``R`` means f32 and matches only f32 (elsewhere it matches any
        data type: it takes the precision of the buffer passed)."""
        ct, kt = T.basetype(ct), T.basetype(kt)
        name = T.type_name(ct)
        if ct is IR.Num and local:
            ct, name = IR.F32, "R (f32 in an allocation)"
        if ct is IR.Num or ct == kt:
            return
        raise UnifyError(
            f"{loc}: element types differ for {what}: it has "
            f"{name}, yours {T.type_name(kt)}")

    # -- names -----------------------------------------------------------
    def bind(self, param, ksym, loc):
        if ksym in self.block_bound:
            raise UnifyError(
                f"{loc}: '{ksym.name}' is bound inside the block, but the "
                f"sub_proc receives it as parameter '{param.name}'")
        if ksym not in self.scope:
            raise UnifyError(f"{loc}: '{ksym.name}' is not visible at the "
                             "block")
        old = self.bufs.get(param)
        if old is not None and old is not ksym:
            raise UnifyError(
                f"{loc}: parameter '{param.name}' would stand for both "
                f"'{old.name}' and '{ksym.name}'")
        pt = self.params[param].type
        kt = self.scope[ksym]
        if T.is_real_scalar(pt) != T.is_real_scalar(T.as_tensor(kt)):
            raise UnifyError(
                f"{loc}: parameter '{param.name}' is a "
                f"{'scalar' if T.is_real_scalar(pt) else 'buffer'}, but "
                f"'{ksym.name}' is not")
        if not T.is_real_scalar(pt) and len(T.shape(kt)) < len(T.shape(pt)):
            raise UnifyError(
                f"{loc}: parameter '{param.name}' has {len(T.shape(pt))} "
                f"dimensions, more than '{ksym.name}' "
                f"({len(T.shape(kt))})")
        self.elem_type(T.basetype(pt), T.basetype(kt), loc,
                       f"parameter '{param.name}'")
        self.bufs[param] = ksym

    def access(self, csym, cidx, ksym, kidx, loc, cnode, knode):
        what = _acc(csym, cidx)
        kwhat = _acc(ksym, kidx)
        if csym in self.params:
            self.bind(csym, ksym, loc)
            if cidx or T.is_tensor_or_window(self.params[csym].type):
                self.accesses.append(Access(
                    csym, "point", tuple(cidx), tuple(kidx),
                    f"{loc}: the access '{what}' cannot be matched with "
                    f"'{kwhat}'"))
            elif kidx:
                raise UnifyError(f"{loc}: scalar '{csym.name}' cannot match "
                                 f"'{kwhat}'")
            return
        if self.ren.get(csym) is not ksym:
            raise UnifyError(
                f"{loc}: '{what}' and '{kwhat}' access different buffers")
        if len(cidx) != len(kidx):
            raise UnifyError(f"{loc}: '{what}' and '{kwhat}' differ in rank")
        for d, (a, b) in enumerate(zip(cidx, kidx)):
            self.int_eq(a, b, loc, f"index {d} of '{what}' vs '{kwhat}'")

    # -- expressions -------------------------------------------------------
    def expr(self, c, k, loc):
        if T.is_control(c.type):
            return self.ctrl_expr(c, k, loc)
        if type(c) is not type(k):
            raise UnifyError(f"{loc}: expected an expression like "
                             f"'{_e(c)}', found '{_e(k)}'")
        self.progress += 1
        if T.is_real_scalar(c.type) or T.is_real_scalar(k.type):
            self.elem_type(c.type, k.type, loc, f"'{_e(c)}'")
        if isinstance(c, IR.Read):
            self.access(c.name, c.idx, k.name, k.idx, loc, c, k)
        elif isinstance(c, IR.Const):
            if not same_constant(c.val, k.val):
                raise UnifyError(f"{loc}: constant {_e(c)} vs {_e(k)}")
        elif isinstance(c, IR.USub):
            self.expr(c.arg, k.arg, loc)
        elif isinstance(c, IR.BinOp):
            if c.op != k.op:
                raise UnifyError(f"{loc}: operator '{c.op}' in '{_e(c)}' vs "
                                 f"'{k.op}' in '{_e(k)}'")
            self.expr(c.lhs, k.lhs, loc)
            self.expr(c.rhs, k.rhs, loc)
        elif isinstance(c, IR.Extern):
            if c.f is not k.f or len(c.args) != len(k.args):
                raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
            for a, b in zip(c.args, k.args):
                self.expr(a, b, loc)
        elif isinstance(c, IR.ReadConfig):
            if c.config is not k.config or c.field != k.field:
                raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
        elif isinstance(c, IR.WindowExpr):
            self.window(c, k, loc)
        else:
            raise UnifyError(f"{loc}: cannot match '{_e(c)}' with '{_e(k)}'")

    def ctrl_expr(self, c, k, loc):
        if T.is_int_control(c.type):
            if not T.is_int_control(k.type):
                raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
            return self.int_eq(c, k, loc, f"'{_e(c)}' vs '{_e(k)}'")
        if isinstance(c, IR.Read) and not c.idx and c.name in self.params:
            return self.bind_expr(c.name, k, loc)
        if type(c) is not type(k) or c.type != k.type:
            raise UnifyError(f"{loc}: expected a condition like '{_e(c)}', "
                             f"found '{_e(k)}'")
        if isinstance(c, IR.Const):
            if not same_constant(c.val, k.val):
                raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
        elif isinstance(c, IR.BinOp):
            if c.op != k.op:
                raise UnifyError(f"{loc}: operator '{c.op}' in '{_e(c)}' vs "
                                 f"'{k.op}' in '{_e(k)}'")
            self.expr(c.lhs, k.lhs, loc)
            self.expr(c.rhs, k.rhs, loc)
        elif isinstance(c, (IR.Not, IR.USub)):
            self.expr(c.arg, k.arg, loc)
        elif isinstance(c, IR.ReadConfig):
            if c.config is not k.config or c.field != k.field:
                raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
        elif isinstance(c, IR.StrideExpr):
            if c.name in self.params:
                self.bind(c.name, k.name, loc)
                self.strides.append((c.name, c.dim, k.name, k.dim,
                                     f"{loc}: '{_e(c)}' vs '{_e(k)}'"))
            elif self.ren.get(c.name) is not k.name or c.dim != k.dim:
                raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
        elif isinstance(c, IR.Extern):
            if c.f is not k.f or len(c.args) != len(k.args):
                raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
            for a, b in zip(c.args, k.args):
                self.expr(a, b, loc)
        else:
            raise UnifyError(f"{loc}: cannot match '{_e(c)}' with '{_e(k)}'")

    def bind_expr(self, param, k, loc):
        """A bool/stride parameter stands for a caller expression evaluated
        at the call: it may only read the block's free control values."""
        for n in walk(k):
            if isinstance(n, (IR.Read, IR.StrideExpr, IR.WindowExpr)) and \
                    n.name in self.block_bound:
                raise UnifyError(
                    f"{loc}: parameter '{param.name}' would stand for "
                    f"'{_e(k)}', which uses '{n.name.name}' bound inside the "
                    "block")
            if isinstance(n, IR.ReadConfig):
                raise UnifyError(
                    f"{loc}: parameter '{param.name}' would stand for "
                    f"'{_e(k)}', which reads configuration state")
        old = self.exprs.get(param)
        if old is not None and old != k:
            raise UnifyError(
                f"{loc}: parameter '{param.name}' would stand for both "
                f"'{_e(old)}' and '{_e(k)}'")
        self.exprs[param] = k

    # -- windows and call arguments -----------------------------------------
    def call_arg(self, fa, c, k, loc):
        if T.is_control(fa.type):
            return self.ctrl_expr(c, k, loc)
        if T.is_real_scalar(fa.type):
            return self.expr(c, k, loc)
        self.window(c, k, loc)

    @staticmethod
    def _win(e):
        """(sym, accesses or None for the whole buffer)."""
        if isinstance(e, IR.WindowExpr):
            return e.name, tuple(e.idx)
        if isinstance(e, IR.Read) and not e.idx:
            return e.name, None
        return None, None

    def window(self, c, k, loc):
        csym, cacc = self._win(c)
        ksym, kacc = self._win(k)
        if csym is None or ksym is None:
            raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
        if csym in self.params:
            self.bind(csym, ksym, loc)
            self.accesses.append(Access(
                csym, "window", cacc, self._full(kacc, ksym, k), (
                    f"{loc}: the window '{_e(c)}' cannot be matched with "
                    f"'{_e(k)}'")))
            return
        if self.ren.get(csym) is not ksym:
            raise UnifyError(f"{loc}: '{_e(c)}' and '{_e(k)}' use different "
                             "buffers")
        if (cacc is None) != (kacc is None) or \
                (cacc is not None and len(cacc) != len(kacc)):
            raise UnifyError(f"{loc}: '{_e(c)}' vs '{_e(k)}'")
        for d, (a, b) in enumerate(zip(cacc or (), kacc or ())):
            if type(a) is not type(b):
                raise UnifyError(f"{loc}: dimension {d} of '{_e(c)}' vs "
                                 f"'{_e(k)}'")
            what = f"dimension {d} of '{_e(c)}' vs '{_e(k)}'"
            if isinstance(a, IR.Point):
                self.int_eq(a.pt, b.pt, loc, what)
            else:
                self.int_eq(a.lo, b.lo, loc, what)
                self.int_eq(a.hi, b.hi, loc, what)

    def _full(self, acc, sym, e):
        """Whole-buffer use as explicit intervals over its extents."""
        if acc is not None:
            return acc
        t = e.type if T.is_tensor_or_window(e.type) else self.scope.get(sym)
        return tuple(IR.Interval(IR.Const(0, type=IR.Int, srcinfo=e.srcinfo),
                                 h, srcinfo=e.srcinfo) for h in T.shape(t))

    # -- integer equations -------------------------------------------------
    def int_eq(self, c, k, loc, what):
        lin = self.lin_callee(c, loc) - self.lin_caller(k)
        self.eqs.append(Equation(lin, f"{loc}: {what}"))

    def lin_callee(self, e, loc) -> Lin:
        """Affine form of a sub_proc control expression: parameters become
        unknowns, bound symbols are renamed to the caller's."""
        e = subst(e, dict(self.ren)) if self.ren else e
        terms, const = affine_form(e)
        unk, var = {}, {}
        for atom, c in terms.items():
            if isinstance(atom, IR.Read) and not atom.idx and \
                    atom.name in self.params:
                key = ("arg", atom.name)
                unk[key] = unk.get(key, 0) + c
                continue
            for n in walk(atom):
                if isinstance(n, (IR.Read, IR.StrideExpr)) and \
                        n.name in self.params:
                    raise UnifyError(
                        f"{loc}: '{_e(atom)}' uses parameter "
                        f"'{n.name.name}' non-linearly; only affine uses "
                        "of parameters can be inferred")
            var[atom] = var.get(atom, 0) + c
        return Lin(unk, var, const)

    def lin_caller(self, e) -> Lin:
        terms, const = affine_form(e)
        for atom in terms:
            self.note_atom(atom)
        return Lin({}, dict(terms), const)

    def note_atom(self, atom):
        """Record a caller atom usable in inferred arguments: it must only
        read values fixed for the whole block (free control symbols)."""
        if atom in self._atom_set:
            return
        for n in walk(atom):
            if isinstance(n, (IR.ReadConfig, IR.StrideExpr)):
                return
            if isinstance(n, IR.Read) and (n.name in self.block_bound or
                                           n.idx):
                return
        self._atom_set.add(atom)
        self.atoms.append(atom)


# ---------------------------------------------------------------------------
# window choices

def choices_for(m: Matcher, param) -> List[Optional[Tuple[int, ...]]]:
    """The caller dimensions that may be slices for buffer ``param``, in the
    order tried: trailing (contiguous) dimensions first. A dense tensor
    parameter takes the whole buffer: the only choice is all dimensions."""
    import itertools
    pt = m.params[param].type
    kt = m.scope[m.bufs[param]]
    r, k = len(T.shape(kt)), len(T.shape(pt))
    if T.is_real_scalar(pt):
        return [None]
    if not pt.is_window:
        return [tuple(range(r))] if r == k else []
    return list(reversed(list(itertools.combinations(range(r), k))))


def off(param, d):
    """The unknown offset of ``param``'s window in caller dimension ``d``."""
    return ("win", param, d)


class ChoiceFailed(Exception):
    pass


def constraints_for(m: Matcher, choice: Dict) -> List[Equation]:
    """Equations of every recorded access under a window ``choice``
    ({param: tuple of slice dimensions}); raises ChoiceFailed(desc) when the
    choice cannot fit an access at all."""
    eqs = []

    def unk(p, d):
        return Lin({off(p, d): 1})

    for a in m.accesses:
        if a.param not in choice or choice[a.param] is None:
            continue
        dims = choice[a.param]
        pt = m.params[a.param].type
        kidx = a.kidx
        if a.kind == "point":
            if len(kidx) != len(T.shape(m.scope[m.bufs[a.param]])):
                raise ChoiceFailed(a.desc)
            for d, f in enumerate(kidx):
                if d in dims:
                    e = m.lin_callee(a.cidx[dims.index(d)], a.desc) + unk(a.param, d)
                else:
                    e = unk(a.param, d)
                eqs.append(Equation(e - m.lin_caller(f), a.desc))
            continue
        cacc = a.cidx
        if cacc is None:
            cacc = tuple(IR.Interval(IR.Const(0, type=IR.Int, srcinfo=None), h,
                                     srcinfo=None) for h in pt.hi)
        if len(kidx) != len(T.shape(m.scope[m.bufs[a.param]])):
            raise ChoiceFailed(a.desc)
        for d, w in enumerate(kidx):
            if d not in dims:
                if not isinstance(w, IR.Point):
                    raise ChoiceFailed(a.desc + f" (dimension {d} of the "
                                       "block's window is a slice)")
                eqs.append(Equation(unk(a.param, d) - m.lin_caller(w.pt),
                                    a.desc))
                continue
            cw = cacc[dims.index(d)]
            if type(cw) is not type(w):
                raise ChoiceFailed(a.desc)
            if isinstance(w, IR.Point):
                eqs.append(Equation(m.lin_callee(cw.pt, a.desc) + unk(a.param, d)
                                    - m.lin_caller(w.pt), a.desc))
            else:
                eqs.append(Equation(m.lin_callee(cw.lo, a.desc) + unk(a.param, d)
                                    - m.lin_caller(w.lo), a.desc))
                eqs.append(Equation(m.lin_callee(cw.hi, a.desc) + unk(a.param, d)
                                    - m.lin_caller(w.hi), a.desc))
    for (p, dim, ksym, kdim, desc) in m.strides:
        dims = choice.get(p)
        if dims is None or m.bufs.get(p) is not ksym or dims[dim] != kdim:
            raise ChoiceFailed(desc)
    # dense tensor parameters: the whole buffer, exactly
    for p, ksym in m.bufs.items():
        pt = m.params[p].type
        if isinstance(pt, IR.Tensor) and not pt.is_window:
            kt = m.scope[ksym]
            for d, (ph, kh) in enumerate(zip(pt.hi, T.shape(kt))):
                desc = (f"parameter '{p.name}' is a dense tensor: dimension "
                        f"{d} must be the whole of '{ksym.name}'")
                eqs.append(Equation(unk(p, d), desc))
                eqs.append(Equation(m.lin_callee(ph, desc) - m.lin_caller(kh),
                                    desc))
    return eqs


__all__ = ["UnifyError", "Matcher", "choices_for", "constraints_for",
           "ChoiceFailed", "off", "describe_stmt"]
