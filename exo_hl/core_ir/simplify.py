"""Normalization of integer control expressions (index arithmetic).

Every rewrite that builds index expressions (``16 * io + ii``) passes them
through here, and ``p.simplify()`` applies it to a whole procedure, so that
printed programs read like hand-written code.

The method: an integer control expression is read as an *affine form*
``sum(coeff * atom) + const`` where atoms are variables or opaque
sub-expressions (``e / c``, ``e % c``, strides, config reads, products of
variables). The form is rebuilt in a canonical order: variables by binding
order (``Sym`` id, so outer loops and arguments come first), positive terms
before negative ones, the constant last.

Division and modulo (floor semantics, Python's ``//`` and ``%``) by a
positive constant ``c`` use only rules that are exact for every integer:

* ``(c*Q + R) / c == Q + R / c`` and ``(c*Q + R) % c == R % c``;
* ``(x / a) / b == x / (a*b)`` for ``a, b > 0``;
* ``R / c == m`` and ``R % c == R - c*m`` when the known range of ``R``
  lies within ``[c*m, c*m + c - 1]``.

Ranges come from an *environment* ``{Sym: (lo, hi)}`` (inclusive bounds,
``None`` when unknown) built from loop bounds, size positivity and simple
preconditions. Without a known range nothing range-dependent is rewritten.
Data expressions are never folded (float semantics); only the index
expressions inside them are normalized.

Why one module of this size: affine forms, their canonical rebuild and
the range facts that drive division/modulo folding are one normaliser;
the pieces are only meaningful together.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from . import operators as OPS
from .nodes import IR
from .syms import Sym
from .types import basetype

#: integer control types whose expressions are normalized as affine forms
INT_TYPES = (IR.Int, IR.Index, IR.Size)
_CMP = OPS.CMP_OPS      # core_ir.operators
_FLIP = OPS.FLIP

Range = Tuple[Optional[int], Optional[int]]
Env = Dict[Sym, Range]


# ----------------------------------------------------------------------
# small constructors
def _const(v, srcinfo=None, typ=None):
    if isinstance(v, bool):
        return IR.Const(v, type=IR.Bool, srcinfo=srcinfo)
    return IR.Const(v, type=typ or IR.Int, srcinfo=srcinfo)


def _binop(op, lhs, rhs, typ, srcinfo):
    return IR.BinOp(op, lhs, rhs, type=typ, srcinfo=srcinfo)


def _is_int_expr(e) -> bool:
    return isinstance(e, IR.expr) and e.type in INT_TYPES


def _int_const(e):
    """The value of an integer literal, else None (bools are not ints here)."""
    if (isinstance(e, IR.Const) and isinstance(e.val, int)
            and not isinstance(e.val, bool)):
        return e.val
    return None


# ----------------------------------------------------------------------
# affine forms: (terms: {atom expr: int coeff}, const: int)
def _add(a, b, scale=1):
    terms = dict(a[0])
    for atom, c in b[0].items():
        v = terms.get(atom, 0) + scale * c
        if v:
            terms[atom] = v
        else:
            terms.pop(atom, None)
    return terms, a[1] + scale * b[1]


def _scale(a, k):
    if k == 0:
        return {}, 0
    return {atom: c * k for atom, c in a[0].items()}, a[1] * k


def _sym_ids(e):
    from .traversal import walk
    ids = [n.name.id for n in walk(e) if isinstance(n, IR.Read)]
    return min(ids) if ids else float("inf")


_OP_ORDER = {"*": 0, "/": 1, "%": 2}


def _atom_key(item):
    atom = item[0]
    if isinstance(atom, IR.Read) and not atom.idx:
        return (0, atom.name.id, 0, "")
    return (1, _sym_ids(atom), _OP_ORDER.get(getattr(atom, "op", None), 3),
            repr(atom))


class _Simplifier:
    def __init__(self, env: Optional[Env]):
        self.env = dict(env or {})

    # -- ranges ---------------------------------------------------------
    def atom_range(self, atom) -> Range:
        if isinstance(atom, IR.Read) and not atom.idx:
            return self.env.get(atom.name, (None, None))
        if isinstance(atom, IR.BinOp) and atom.op in ("/", "%"):
            c = _int_const(atom.rhs)
            if c is not None and c > 0:
                lo, hi = self.form_range(self.lin(atom.lhs))
                if atom.op == "/":
                    return (None if lo is None else lo // c,
                            None if hi is None else hi // c)
                if lo is not None and hi is not None and lo // c == hi // c:
                    return (lo % c, hi % c)
                return (0, c - 1)
        return (None, None)

    def form_range(self, form) -> Range:
        terms, k = form
        lo = hi = k
        for atom, c in terms.items():
            alo, ahi = self.atom_range(atom)
            if c < 0:
                alo, ahi = ahi, alo
            lo = None if lo is None or alo is None else lo + c * alo
            hi = None if hi is None or ahi is None else hi + c * ahi
        return lo, hi

    # -- linearization --------------------------------------------------
    def lin(self, e):
        """The affine form of an integer control expression."""
        return self._recombine(self._lin(e))

    def _recombine(self, form):
        """``c*k*(x / c) + k*(x % c)`` is exactly ``k*x``."""
        terms, k = form
        mods = [a for a in terms if isinstance(a, IR.BinOp) and a.op == "%"]
        for m in mods:
            c = _int_const(m.rhs)
            co = terms.get(m)
            if c is None or co is None:
                continue
            for d in list(terms):
                if (isinstance(d, IR.BinOp) and d.op == "/" and d.lhs == m.lhs
                        and _int_const(d.rhs) == c and terms[d] == c * co):
                    rest = {a: v for a, v in terms.items() if a not in (m, d)}
                    return self._recombine(
                        _add((rest, k), _scale(self._lin(m.lhs), co)))
        return form

    def _lin(self, e):
        v = _int_const(e)
        if v is not None:
            return {}, v
        if isinstance(e, IR.BinOp) and _is_int_expr(e.lhs) and _is_int_expr(e.rhs):
            if e.op in ("+", "-"):
                return _add(self.lin(e.lhs), self.lin(e.rhs),
                            1 if e.op == "+" else -1)
            if e.op == "*":
                a, b = self.lin(e.lhs), self.lin(e.rhs)
                if not a[0]:
                    return _scale(b, a[1])
                if not b[0]:
                    return _scale(a, b[1])
                return self._atom(_binop("*", self.build(a, e), self.build(b, e),
                                         e.type, e.srcinfo))
            if e.op in ("/", "%"):
                a, b = self.lin(e.lhs), self.lin(e.rhs)
                if not b[0] and b[1] > 0:
                    if e.op == "/":
                        return self._div(a, b[1], e)
                    return self._mod(a, b[1], e)
                return self._atom(_binop(e.op, self.build(a, e),
                                         self.build(b, e), e.type, e.srcinfo))
        if isinstance(e, IR.USub) and _is_int_expr(e.arg):
            return _scale(self.lin(e.arg), -1)
        return self._atom(self._children(e))

    @staticmethod
    def _atom(a):
        v = _int_const(a)
        if v is not None:
            return {}, v
        return {a: 1}, 0

    def _div(self, form, c, proto):
        terms, k = form
        if c == 1:
            return form
        q = {a: co // c for a, co in terms.items() if co % c == 0}
        r = {a: co for a, co in terms.items() if co % c != 0}
        qk, rk = (k // c, 0) if k % c == 0 else (0, k)
        if not r and rk == 0:
            return q, qk
        # (x / a + k) / c == (x + a*k) / (a*c)
        if len(r) == 1:
            (atom, co), = r.items()
            d = _int_const(atom.rhs) if isinstance(atom, IR.BinOp) else None
            if d is not None and d > 0 and co == 1 and atom.op == "/":
                inner = _add(self.lin(atom.lhs), ({}, d * rk))
                res = self._div(inner, d * c, proto)
                return _add((q, qk), res)
        lo, hi = self.form_range((r, rk))
        if lo is not None and hi is not None and lo // c == hi // c:
            return q, qk + lo // c
        if rk:
            # moving the whole constant may make the quotient constant
            lo2, hi2 = self.form_range((r, k % c))
            if lo2 is not None and hi2 is not None and lo2 // c == hi2 // c:
                return q, k // c + lo2 // c
        atom = _binop("/", self.build((r, rk), proto), _const(c, proto.srcinfo),
                      proto.type, proto.srcinfo)
        return _add((q, qk), ({atom: 1}, 0))

    def _mod(self, form, c, proto):
        terms, k = form
        if c == 1:
            return {}, 0
        r = {a: co for a, co in terms.items() if co % c != 0}
        rk = k if -c < k < c else k % c
        if not r:
            return {}, rk % c
        lo, hi = self.form_range((r, rk))
        if lo is not None and hi is not None and lo // c == hi // c:
            return r, rk - c * (lo // c)
        atom = _binop("%", self.build((r, rk), proto), _const(c, proto.srcinfo),
                      proto.type, proto.srcinfo)
        return {atom: 1}, 0

    # -- rebuilding -----------------------------------------------------
    def build(self, form, proto):
        """The canonical expression of an affine form."""
        terms, k = form
        typ, si = proto.type, proto.srcinfo
        if typ not in INT_TYPES:
            typ = IR.Index
        items = sorted(terms.items(), key=_atom_key)

        def term(a, c):
            return a if c == 1 else _binop("*", _const(c, si), a, typ, si)

        acc = None
        for a, c in items:
            if c > 0:
                t = term(a, c)
                acc = t if acc is None else _binop("+", acc, t, typ, si)
        negs = [(a, -c) for a, c in items if c < 0]
        if acc is None and negs and k > 0:
            acc, k = _const(k, si), 0
        for a, c in negs:
            t = term(a, c)
            if acc is None:
                acc = IR.USub(t, type=typ, srcinfo=si)
            else:
                acc = _binop("-", acc, t, typ, si)
        if acc is None:
            return _const(k, si)
        if k > 0:
            acc = _binop("+", acc, _const(k, si), typ, si)
        elif k < 0:
            acc = _binop("-", acc, _const(-k, si), typ, si)
        return acc

    # -- comparisons and booleans ---------------------------------------
    def compare(self, e):
        a, b = self.lin(e.lhs), self.lin(e.rhs)
        d = _add(a, b, -1)
        lo, hi = self.form_range(d)
        verdict = _decide(e.op, lo, hi)
        if verdict is not None:
            return _const(verdict, e.srcinfo)
        # cancel terms common to both sides (same sign), then constants
        ta, tb = dict(a[0]), dict(b[0])
        for atom in set(ta) & set(tb):
            x, y = ta[atom], tb[atom]
            if (x > 0) == (y > 0):
                m = min(abs(x), abs(y)) * (1 if x > 0 else -1)
                ta[atom] -= m
                tb[atom] -= m
                if not ta[atom]:
                    del ta[atom]
                if not tb[atom]:
                    del tb[atom]
        ka, kb = a[1], b[1]
        if ka and kb and (ka > 0) == (kb > 0):
            m = min(abs(ka), abs(kb)) * (1 if ka > 0 else -1)
            ka, kb = ka - m, kb - m
        return e.update(lhs=self.build((ta, ka), e.lhs),
                        rhs=self.build((tb, kb), e.rhs))

    def boolean(self, e):
        if isinstance(e, IR.Not):
            arg = self.expr(e.arg)
            if isinstance(arg, IR.Const) and isinstance(arg.val, bool):
                return _const(not arg.val, e.srcinfo)
            if isinstance(arg, IR.Not):
                return arg.arg
            return e.update(arg=arg)
        lhs, rhs = self.expr(e.lhs), self.expr(e.rhs)
        absorbing = e.op == "or"  # True absorbs 'or', False absorbs 'and'
        for x, y in ((lhs, rhs), (rhs, lhs)):
            if isinstance(x, IR.Const) and isinstance(x.val, bool):
                if x.val == absorbing:
                    return _const(absorbing, e.srcinfo)
                return y
        return e.update(lhs=lhs, rhs=rhs)

    # -- generic walk ---------------------------------------------------
    def expr(self, e):
        if _is_int_expr(e):
            return self.build(self.lin(e), e)
        if isinstance(e, IR.BinOp) and e.op in _CMP and \
                _is_int_expr(e.lhs) and _is_int_expr(e.rhs):
            return self.compare(e)
        if isinstance(e, IR.BinOp) and e.op in OPS.BOOL_OPS:
            return self.boolean(e)
        if isinstance(e, IR.Not):
            return self.boolean(e)
        return self._children(e)

    def _children(self, e):
        if isinstance(e, IR.Read):
            if e.idx:
                return e.update(idx=tuple(self.expr(i) for i in e.idx))
            return e
        if isinstance(e, IR.BinOp):
            return e.update(lhs=self.expr(e.lhs), rhs=self.expr(e.rhs))
        if isinstance(e, (IR.USub, IR.Not)):
            return e.update(arg=self.expr(e.arg))
        if isinstance(e, IR.Extern):
            return e.update(args=tuple(self.expr(a) for a in e.args))
        if isinstance(e, IR.WindowExpr):
            return self.window(e)
        return e

    def window(self, e):
        idx = tuple(self.w_access(w) for w in e.idx)
        t = e.type
        if isinstance(t, IR.WindowType):
            # extents in the range-free normal form every window gets
            return make_window(e.name, self.type_(t.src_type), idx,
                               e.srcinfo)
        return e.update(idx=idx, type=t)

    def w_access(self, w):
        if isinstance(w, IR.Interval):
            return w.update(lo=self.expr(w.lo), hi=self.expr(w.hi))
        return w.update(pt=self.expr(w.pt))

    # -- statements -----------------------------------------------------
    def type_(self, t):
        if isinstance(t, IR.Tensor):
            return t.update(hi=tuple(self.expr(h) for h in t.hi))
        return t

    def stmt(self, s):
        if isinstance(s, (IR.Assign, IR.Reduce)):
            return s.update(idx=tuple(self.expr(i) for i in s.idx),
                            rhs=self.expr(s.rhs))
        if isinstance(s, (IR.WriteConfig, IR.WindowStmt)):
            return s.update(rhs=self.expr(s.rhs))
        if isinstance(s, IR.If):
            return s.update(cond=self.expr(s.cond), body=self.stmts(s.body),
                            orelse=self.stmts(s.orelse))
        if isinstance(s, IR.For):
            lo, hi = self.expr(s.lo), self.expr(s.hi)
            inner = _Simplifier(with_loop(self.env, s.iter, lo, hi, self))
            return s.update(lo=lo, hi=hi, body=inner.stmts(s.body))
        if isinstance(s, IR.Call):
            return s.update(args=tuple(self.expr(a) for a in s.args))
        if isinstance(s, IR.Alloc):
            return s.update(type=self.type_(s.type))
        return s

    def stmts(self, ss):
        return tuple(self.stmt(s) for s in ss)


def _decide(op, lo, hi):
    """The truth of ``d op 0`` for every d in [lo, hi], or None."""
    if op == "<":
        return True if hi is not None and hi < 0 else \
            False if lo is not None and lo >= 0 else None
    if op == "<=":
        return True if hi is not None and hi <= 0 else \
            False if lo is not None and lo > 0 else None
    if op == ">":
        return True if lo is not None and lo > 0 else \
            False if hi is not None and hi <= 0 else None
    if op == ">=":
        return True if lo is not None and lo >= 0 else \
            False if hi is not None and hi < 0 else None
    if op == "==":
        if lo is not None and lo == hi:
            return lo == 0
        if (lo is not None and lo > 0) or (hi is not None and hi < 0):
            return False
    return None


# ----------------------------------------------------------------------
# environments of known ranges
def _meet(a: Range, b: Range) -> Range:
    lo = a[0] if b[0] is None else b[0] if a[0] is None else max(a[0], b[0])
    hi = a[1] if b[1] is None else b[1] if a[1] is None else min(a[1], b[1])
    return lo, hi


def with_loop(env: Env, it: Sym, lo, hi, _s=None) -> Env:
    """``env`` extended with ``lo <= it < hi`` (as far as it is known)."""
    s = _s or _Simplifier(env)
    lo_r = s.form_range(s.lin(lo)) if _is_int_expr(lo) else (None, None)
    hi_r = s.form_range(s.lin(hi)) if _is_int_expr(hi) else (None, None)
    out = dict(env)
    out[it] = (lo_r[0], None if hi_r[1] is None else hi_r[1] - 1)
    return out


def proc_env(proc) -> Env:
    """Ranges known from a procedure's signature and preconditions.

    Sizes are strictly positive; preconditions of the form ``x < c``,
    ``x <= c``, ``x == c`` (either side, joined by ``and``) bound ``x``.
    """
    env = args_env(proc)
    for p in proc.preds:
        env = with_pred(env, p)
    return env


def args_env(proc) -> Env:
    """Ranges known from the argument types alone (sizes are positive)."""
    return {a.name: (1, None) for a in proc.args if a.type is IR.Size}


def with_pred(env: Env, pred) -> Env:
    """``env`` extended with what the boolean ``pred`` says about single
    variables (``x < c``, ``x == c``, ... joined by ``and``)."""
    env = dict(env)
    preds = [pred]
    while preds:
        p = preds.pop()
        if isinstance(p, IR.BinOp) and p.op == "and":
            preds += [p.lhs, p.rhs]
            continue
        if not (isinstance(p, IR.BinOp) and p.op in _CMP):
            continue
        op, x, c = p.op, p.lhs, _int_const(p.rhs)
        if c is None:
            op, x, c = _FLIP[p.op], p.rhs, _int_const(p.lhs)
        if c is None or not (isinstance(x, IR.Read) and not x.idx):
            continue
        bound = {"<": (None, c - 1), "<=": (None, c), ">": (c + 1, None),
                 ">=": (c, None), "==": (c, c)}[op]
        env[x.name] = _meet(env.get(x.name, (None, None)), bound)
    return env


def env_at(proc, path) -> Env:
    """Known ranges at a statement path (see ``exo_hl.cursors``): the
    procedure's ranges plus those of every enclosing loop."""
    s = _Simplifier(proc_env(proc))
    node = proc
    for field, i in tuple(path)[:-1]:
        node = getattr(node, field)[i]
        if isinstance(node, IR.For):
            s = _Simplifier(with_loop(s.env, node.iter, node.lo, node.hi, s))
    return s.env


# ----------------------------------------------------------------------
# public entry points
def window_extent(lo, hi, srcinfo=None):
    """``hi - lo`` in normal form (valid for all values of the variables):
    the extent a window type records."""
    e = IR.BinOp("-", hi, lo, type=IR.Index, srcinfo=srcinfo)
    return simplify_expr(e)


def make_window(buf, buf_type, idx, srcinfo=None):
    """``buf[idx]`` as a typed ``WindowExpr``; ``idx`` holds ``Interval`` and
    ``Point`` accesses, one per dimension of ``buf_type``. The one place
    window types are computed, so a printed procedure reparses to the
    identical IR."""
    his = tuple(window_extent(w.lo, w.hi, w.srcinfo or srcinfo)
                for w in idx if isinstance(w, IR.Interval))
    as_t = IR.Tensor(his, True, basetype(buf_type))
    wt = IR.WindowType(buf_type, as_t, buf, tuple(idx))
    return IR.WindowExpr(buf, tuple(idx), type=wt, srcinfo=srcinfo)


def simplify_expr(e, env: Optional[Env] = None):
    """The normalized form of an expression under known ranges ``env``."""
    return _Simplifier(env).expr(e)


def simplify_stmts(stmts, env: Optional[Env] = None):
    """Normalize every expression in a block; loop bounds extend ``env``."""
    return _Simplifier(env).stmts(tuple(stmts))


def simplify_preds(proc):
    """The preconditions of ``proc``, each normalized with only the facts
    that hold *before* it is checked (argument types and the earlier
    preconditions), never with itself: a precondition is the caller's
    contract, and simplifying it under its own assumption would turn it
    into ``True`` and stop rejecting the calls that violate it."""
    env = args_env(proc)
    out = []
    for p in proc.preds:
        out.append(_Simplifier(env).expr(p))
        env = with_pred(env, p)
    return tuple(out)


def simplify_proc(proc):
    """Normalize a whole ``IR.Proc`` (body, preconditions and arg types)."""
    s = _Simplifier(proc_env(proc))
    args = tuple(a.update(type=s.type_(a.type)) for a in proc.args)
    return proc.update(args=args, preds=simplify_preds(proc),
                       body=s.stmts(proc.body))


def expr_range(e, env: Optional[Env] = None) -> Range:
    """Inclusive bounds ``(lo, hi)`` of an integer expression (None: unknown)."""
    s = _Simplifier(env)
    return s.form_range(s.lin(e))


def const_value(e, env: Optional[Env] = None):
    """The integer/bool value an expression simplifies to, else None."""
    r = simplify_expr(e, env)
    return r.val if isinstance(r, IR.Const) else None


def affine_form(e, env: Optional[Env] = None):
    """``({atom: coeff}, const)`` of an integer expression, for rewrites
    that reason about coefficients (e.g. split/divisibility checks)."""
    return _Simplifier(env).lin(e)


__all__ = ["simplify_expr", "simplify_stmts", "simplify_proc", "expr_range",
           "const_value", "affine_form", "proc_env", "args_env", "with_pred",
           "simplify_preds", "env_at", "with_loop",
           "INT_TYPES"]
