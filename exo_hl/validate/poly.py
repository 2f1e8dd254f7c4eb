"""Integer sets with isl: domains, last writers (lexmax), emptiness.

Statement domains, access relations and execution order are written in
isl's syntax from ``flatten`` trees; the last write before a read is
isl's parametric lexicographic maximum over the writers' time vectors
(Feautrier's dataflow analysis, as Clément and Cohen use it). Results come
back as pieces (a condition and integer expressions) translated to Z3.
"""
from __future__ import annotations

from fractions import Fraction
from math import lcm

import islpy as isl
import z3

from .symexec import Unsupported

__all__ = ["isl_expr", "isl_cond", "domain_constraints", "Poly"]

_CMP = {"<", "<=", ">", ">=", "=="}


def isl_expr(t):
    k = t[0]
    if k == "v":
        return t[1]
    if k == "c":
        return str(t[1])
    if k in ("+", "-", "*"):
        return f"({isl_expr(t[1])} {k} {isl_expr(t[2])})"
    if k == "/":
        return f"floor(({isl_expr(t[1])})/{t[2]})"
    if k == "%":
        return f"(({isl_expr(t[1])}) mod {t[2]})"
    raise Unsupported(f"'{k}' in an index or bound")


def isl_cond(t, neg=False):
    k = t[0]
    if k == "not":
        return isl_cond(t[1], not neg)
    if k in ("and", "or"):
        op = {"and": "or", "or": "and"}[k] if neg else k
        return f"(({isl_cond(t[1], neg)}) {op} ({isl_cond(t[2], neg)}))"
    if k in _CMP or k == "!=":
        a, b = isl_expr(t[1]), isl_expr(t[2])
        if neg:
            k = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=",
                 "!=": "=="}[k]
        if k == "==":
            return f"{a} = {b}"
        if k == "!=":
            return f"({a} < {b} or {a} > {b})"
        return f"{a} {k} {b}"
    if k == "c":
        return "1 = 1" if bool(t[1]) != neg else "1 = 0"
    raise Unsupported(f"condition '{k}'")


def domain_constraints(st, rename=None):
    """isl constraints of an FStmt's domain (iterators renamed by
    ``rename``: name -> text)."""
    r = rename or {}

    def sub(text_tree):
        return _rename(text_tree, r)
    parts = []
    for v, (lo, hi) in zip(st.iters, st.bounds):
        vv = r.get(v, v)
        parts.append(f"{isl_expr(sub(lo))} <= {vv} < {isl_expr(sub(hi))}")
    for g in st.guards:
        parts.append(isl_cond(sub(g)))
    return " and ".join(parts) if parts else "1 = 1"


def _rename(t, r):
    if not r:
        return t
    if t[0] == "v":
        return ("v", r.get(t[1], t[1]))
    if t[0] == "c":
        return t
    return (t[0], ) + tuple(_rename(x, r) if isinstance(x, tuple) else x
                            for x in t[1:])


def lex_lt(a, b):
    """isl text: vector a (texts) lexicographically before b.

    Positions where both are integer constants are decided here (a time
    vector's even positions are constants), so the disjunction has one
    alternative per position that is not: isl parses a disjunction into
    its disjunctive normal form, and constant alternatives made that the
    bulk of the validation time."""
    alts, eqs = [], []
    for x, y in zip(a, b):
        if _is_int(x) and _is_int(y):
            if int(x) < int(y):
                alts.append(" and ".join(eqs) or "1 = 1")
                break
            if int(x) > int(y):
                break
            continue
        alts.append(" and ".join(eqs + [f"{x} < {y}"]))
        eqs.append(f"{x} = {y}")
    if not alts:
        return "1 = 0"
    return " or ".join(f"({x})" for x in alts)


def _is_int(x):
    return isinstance(x, str) and x.lstrip("-").isdigit()


class Poly:
    """isl over one procedure's flat statements, with parameters
    ``params`` constrained by ``context`` (isl text)."""

    def __init__(self, flat, params, context):
        self.flat = flat
        self.params = params
        self.context = context
        self.L = max([len(s.time) for s in flat.stmts] + [1])
        self.ctx = isl.Context()
        self._ctx_set = None
        self._wmaps = {}
        self.zparams = {p: z3.Int(p) for p in params}

    def _p(self):
        return "[" + ", ".join(self.params) + "]"

    def _time(self, st, names):
        """isl texts of st's time vector padded to L, iterators renamed."""
        out = []
        for x in st.time:
            out.append(names.get(x, x) if isinstance(x, str) else str(x))
        return out + ["0"] * (self.L - len(out))

    def _writes(self, w):
        """isl map from ``w``'s time vectors to the locations it writes
        (parsed once per statement)."""
        got = self._wmaps.get(w.sid)
        if got is None:
            T = [f"T{k}" for k in range(self.L)]
            names = {v: T[2 * k + 1] for k, v in enumerate(w.iters)}
            tw = self._time(w, names)
            xs = [f"x{k}" for k in range(len(w.idx))]
            cons = [domain_constraints(w, names)]
            cons += [f"{T[j]} = {tw[j]}" for j in range(self.L)
                     if j % 2 == 0 or j >= len(w.time)]
            cons += [f"{x} = {isl_expr(_rename(i, names))}"
                     for x, i in zip(xs, w.idx)]
            got = isl.Map.read_from_str(
                self.ctx, f"{self._p()} -> {{ [{', '.join(T)}] -> "
                f"[{', '.join(xs)}] : "
                + " and ".join(f"({c})" for c in cons) + " }"
            ).intersect_params(self.context_set())
            self._wmaps[w.sid] = got
        return got

    def context_set(self):
        """The parameters' context as an isl set (parsed once)."""
        if self._ctx_set is None:
            self._ctx_set = isl.Set.read_from_str(
                self.ctx, f"{self._p()} -> {{ : {self.context} }}")
        return self._ctx_set

    def is_empty(self, dims, cond):
        s = isl.Set.read_from_str(
            self.ctx, f"{self._p()} -> {{ [{', '.join(dims)}] : "
            f"({cond}) and ({self.context}) }}")
        return s.is_empty()

    def last_writers(self, dims, dom, loc, before, storage):
        """Pieces (z3 condition over dims+params, writer FStmt, z3 writer
        iteration values) of the last write of ``storage`` at ``loc``
        (isl texts over dims) before time ``before`` (texts, or None:
        the end), for the points of ``dom`` (isl text); and the z3
        condition under which no write precedes."""
        T = [f"T{k}" for k in range(self.L)]
        maps = None
        domset = isl.Set.read_from_str(
            self.ctx, f"{self._p()} -> {{ [{', '.join(dims)}] : ({dom}) }}"
        ).intersect_params(self.context_set())
        xs = [f"x{k}" for k in range(len(loc))]
        locmap = isl.Map.read_from_str(
            self.ctx, f"{self._p()} -> {{ [{', '.join(dims)}] -> "
            f"[{', '.join(xs)}] : "
            + (" and ".join(f"{x} = {e}" for x, e in zip(xs, loc)) or "1 = 1")
            + " }").intersect_domain(domset)
        for w in self.flat.stmts:
            if w.storage != storage:
                continue
            if len(w.idx) != len(loc):
                raise Unsupported("access arity differs")
            m = locmap.apply_range(self._writes(w).reverse())
            if before is not None:
                names = {v: T[2 * k + 1] for k, v in enumerate(w.iters)}
                m = m.intersect(isl.Map.read_from_str(
                    self.ctx, f"{self._p()} -> {{ [{', '.join(dims)}] -> "
                    f"[{', '.join(T)}] : "
                    f"{lex_lt(self._time(w, names), before)} }}"))
            # each writer's own last instance, then the latest of those:
            # many small problems instead of one over a union of them all
            if m.is_empty():
                continue
            mx = m.lexmax_pw_multi_aff()
            maps = mx if maps is None else maps.union_lexmax(mx)
        zd = [z3.Int(d) for d in dims]
        if maps is None:
            return [], self.set_z3(domset, zd)
        pw = maps
        pieces = []

        def piece(s, ma):
            vals = [self.aff_z3(ma.get_aff(k), zd)
                    for k in range(ma.dim(isl.dim_type.out))]
            statics = [z3.simplify(vals[j]) for j in range(0, self.L, 2)]
            if not all(z3.is_int_value(x) for x in statics):
                raise Unsupported("a writer not fixed on a piece")
            key = [x.as_long() for x in statics]
            # the constant time positions name the writer: exactly one
            # statement (flatten gives every statement its own; two with
            # the same would make the piece's value the wrong one's)
            named = [w for w in self.flat.stmts if w.storage == storage
                     and list(w.time[0::2]) + [0] * (
                         len(key) - len(w.time[0::2])) == key]
            if len(named) != 1:
                raise Unsupported(f"a last-writer piece names "
                                  f"{len(named)} statements")
            w = named[0]
            wv = [vals[2 * k + 1] for k in range(len(w.iters))]
            pieces.append((self.set_z3(s, zd), w, wv))
        got = []
        pw.foreach_piece(lambda s_, ma: got.append((s_, ma)))
        for s_, ma in got:
            piece(s_, ma)
        none = domset.subtract(pw.domain())
        return pieces, self.set_z3(none, zd)

    # -- isl -> z3
    def aff_z3(self, aff, zd):
        num, den = self._aff_parts(aff, zd)
        return num if den == 1 else num / den

    def _aff_parts(self, aff, zd):
        """(z3 integer numerator, positive denominator) of an aff."""
        terms = []
        coefs = []
        c = _frac(aff.get_constant_val())
        for k in range(aff.dim(isl.dim_type.in_)):
            coefs.append((_frac(aff.get_coefficient_val(isl.dim_type.in_, k)),
                          zd[k]))
        for k in range(aff.dim(isl.dim_type.param)):
            name = aff.get_dim_name(isl.dim_type.param, k)
            coefs.append((_frac(aff.get_coefficient_val(
                isl.dim_type.param, k)), self.zparams[name]))
        for k in range(aff.dim(isl.dim_type.div)):
            cf = _frac(aff.get_coefficient_val(isl.dim_type.div, k))
            if cf:
                coefs.append((cf, self._floor(aff.get_div(k), zd)))
        den = lcm(c.denominator, *[f.denominator for f, _ in coefs])
        total = z3.IntVal(int(c * den))
        for f, x in coefs:
            if f:
                terms.append(int(f * den) * x)
        for t in terms:
            total = total + t
        return total, den

    def _floor(self, aff, zd):
        num, den = self._aff_parts(aff, zd)
        return num if den == 1 else num / den   # z3: floor for den > 0

    def set_z3(self, s, zd):
        s = s.compute_divs() if hasattr(s, "compute_divs") else s
        alts = []
        for b in s.get_basic_sets():
            cs = []
            for c in b.get_constraints():
                e = self._constraint_z3(c, zd)
                cs.append(e == 0 if c.is_equality() else e >= 0)
            alts.append(z3.And(cs) if cs else z3.BoolVal(True))
        return z3.Or(alts) if alts else z3.BoolVal(False)

    def _constraint_z3(self, c, zd):
        ls = c.get_local_space()
        c0 = _frac(c.get_constant_val())
        coefs = []
        for k in range(c.dim(isl.dim_type.set)):
            coefs.append((_frac(c.get_coefficient_val(isl.dim_type.set, k)),
                          zd[k]))
        for k in range(c.dim(isl.dim_type.param)):
            name = c.get_dim_name(isl.dim_type.param, k)
            coefs.append((_frac(c.get_coefficient_val(isl.dim_type.param, k)),
                          self.zparams[name]))
        for k in range(c.dim(isl.dim_type.div)):
            cf = _frac(c.get_coefficient_val(isl.dim_type.div, k))
            if cf:
                d = ls.get_div(k)
                coefs.append((cf, self._floor(d, zd)))
        den = lcm(c0.denominator, *[f.denominator for f, _ in coefs])
        total = z3.IntVal(int(c0 * den))
        for f, x in coefs:
            if f:
                total = total + int(f * den) * x
        return total


def _frac(v):
    return Fraction(str(v))
