"""Effects (Def. 3.6), their extraction from IR (§3.13), location sets
(Def. 3.5, §3.12) and the location functions Rd_G ... RW (Def. 3.7).

Effects and location sets are tagged tuples (immutable, hashable):

  effect : ('seq', (a...)) | ('guard', ee, a) | ('loop', key, a)
         | ('gread', GVar) | ('gwrite', GVar)
         | ('gwrite', GVar, value_ee, current_ee)   (control fields: the
           value written and the field's value before the write; see
           ``noop_refine``)
         | ('read', buf, idx) | ('write', buf, idx) | ('reduce', buf, idx)
         | ('alloc', buf)                      ('seq', ()) is ∅
  locset : ('empty',) | ('pt', name, idx) | ('union', (L...))
         | ('bigcup', key, L) | ('inter', L, L) | ('diff', L, L)
         | ('filter', ee, L)
    a point's idx is a tuple of ee, or None for "every location of name"
    (used for A, the allocated buffers).

Names: buffer Syms for the heap (windows already mapped onto the buffer they
view), GVar for config fields. Aliasing assumption (documented contract):
distinct tensor/window ARGUMENTS of one procedure never alias, so different
names are different memory; two windows of the same buffer resolve to that
buffer and are compared index-wise.

Extraction is memoised on the (immutable, hashable) IR node, so unchanged
subtrees are never re-analysed. Buffers allocated inside a block are
invisible after it: their accesses are dropped from the block's effect (the
``- A(a1)`` of Def. 3.7, applied at the end of the allocation's scope).

Why one module of this size: effects, location sets and the location
functions are one algebra over the same tagged tuples; each function is
short and reads best next to the definitions it folds over.
"""
from __future__ import annotations


from ..caches import memo
from ..core_ir import types as T
from ..core_ir.nodes import IR
from . import eexpr as E
from .lift import (BufSub, call_ctrl_env, identity_map, lift, valg,
                   valg_at_iter, valg_block, window_map, env_compose)

EMPTY = ("seq", ())


def seq(*effs):
    out = []
    for a in effs:
        if a[0] == "seq":
            out.extend(a[1])
        else:
            out.append(a)
    if len(out) == 1:
        return out[0]
    return ("seq", tuple(out))


def guard(c, a):
    if a == EMPTY or E.is_const(c, True):
        return a
    if E.is_const(c, False):
        return EMPTY
    return ("guard", c, a)


def loop(k, a):
    if a == EMPTY:
        return a
    return ("loop", k, a)


# ---------------------------------------------------------------------------
# substitution over effects


def eff_subst(a, env, sub=None):
    """Apply a variable environment (ee) and a buffer substitution."""
    if not env and not sub:
        return a
    if sub:
        senv = sub.stride_env()
        if senv:
            env = {**senv, **(env or {})}
    return _esub(a, env or {}, sub)


def _esub(a, env, sub):
    tag = a[0]
    if tag == "seq":
        return seq(*(_esub(x, env, sub) for x in a[1]))
    if tag == "guard":
        return guard(E.subst(a[1], env), _esub(a[2], env, sub))
    if tag == "loop":
        inner = {k: v for k, v in env.items() if k != a[1]}
        return loop(a[1], _esub(a[2], inner, sub))
    if tag in ("read", "write", "reduce"):
        idx = tuple(E.subst(i, env) for i in a[2])
        name = a[1]
        if sub:
            name, idx = sub.access(name, idx)
        return (tag, name, idx)
    if tag == "alloc" and sub:
        return ("alloc", sub.access(a[1], ())[0])
    if tag == "gwrite" and len(a) == 4:
        return (tag, a[1], E.subst(a[2], env), E.subst(a[3], env))
    return a


def eff_filter_names(a, names):
    """Drop every access/alloc of the given buffers."""
    if not names:
        return a
    tag = a[0]
    if tag == "seq":
        return seq(*(eff_filter_names(x, names) for x in a[1]))
    if tag == "guard":
        return guard(a[1], eff_filter_names(a[2], names))
    if tag == "loop":
        return loop(a[1], eff_filter_names(a[2], names))
    if tag in ("read", "write", "reduce", "alloc") and a[1] in names:
        return EMPTY
    return a


def eff_names(a, out=None):
    """Buffer/global names an effect touches."""
    if out is None:
        out = set()
    tag = a[0]
    if tag == "seq":
        for x in a[1]:
            eff_names(x, out)
    elif tag in ("guard", "loop"):
        eff_names(a[2], out)
    else:
        out.add(a[1])
    return out


# ---------------------------------------------------------------------------
# §3.13 extraction


def eff_expr(e):
    """Eff_e: the read effects of evaluating an expression."""
    return _eff_expr(e)


@memo(maxsize=65536)
def _eff_expr(e):
    if isinstance(e, IR.Read):
        parts = [_eff_expr(i) for i in e.idx]
        if e.idx or (not T.is_control(e.type)
                     and not T.is_tensor_or_window(e.type)):
            parts.append(("read", e.name, tuple(lift(i) for i in e.idx)))
        return seq(*parts)
    if isinstance(e, IR.ReadConfig):
        return ("gread", E.GVar(e.config, e.field))
    if isinstance(e, IR.WindowExpr):
        parts = []
        for w in e.idx:
            if isinstance(w, IR.Interval):
                parts += [_eff_expr(w.lo), _eff_expr(w.hi)]
            else:
                parts.append(_eff_expr(w.pt))
        return seq(*parts)
    if isinstance(e, (IR.USub, IR.Not)):
        return _eff_expr(e.arg)
    if isinstance(e, IR.BinOp):
        return seq(_eff_expr(e.lhs), _eff_expr(e.rhs))
    if isinstance(e, IR.Extern):
        return seq(*(_eff_expr(x) for x in e.args))
    return EMPTY


def ring_reduce(s) -> bool:
    """``s`` (a reduction) adds in a way reductions of one location may be
    reordered: into a float location (re-association rounds differently,
    which reordering reductions is allowed to do), or integer arithmetic
    wrapped into an integer location (exact modulo 2**bits). A float value
    added into an integer location is truncated and saturated after every
    step (docs/semantics.md, Reductions): reordering changes the result."""
    from ..core_ir import datasem as D
    t = T.basetype(s.type)
    if not D.is_int(t):
        return True
    return not D.is_float(D.own_type(s.rhs))


def write_kinds(s) -> tuple:
    """How an assignment or reduction ``s`` uses its location, as the
    effect analysis sees it: ``("write",)``, ``("reduce",)``, or for a
    reduction that truncates (``ring_reduce`` false) ``("read", "write")``:
    such steps do not commute with each other."""
    if isinstance(s, IR.Assign):
        return ("write", )
    return ("reduce", ) if ring_reduce(s) else ("read", "write")


def truncating_reduce(stmts, names=None):
    """The first reduction in ``stmts`` (nested ones included) that
    truncates (``ring_reduce`` false), into one of ``names`` if given;
    ``None`` if there is none."""
    from ..core_ir.traversal import walk_stmts
    return next((s for s in walk_stmts(stmts) if isinstance(s, IR.Reduce)
                 and (names is None or s.name in names)
                 and not ring_reduce(s)), None)


def eff_stmt(s):
    """Eff of one statement (raw names; see ``eff_block`` for scoping)."""
    return _eff_stmt(s)


@memo(maxsize=65536)
def _eff_stmt(s):
    if isinstance(s, (IR.Assign, IR.Reduce)):
        rd = seq(_eff_expr(s.rhs), *(_eff_expr(i) for i in s.idx))
        idx = tuple(lift(i) for i in s.idx)
        # a truncating ``x += f`` is a read of x then a write (write_kinds)
        return seq(rd, *((k, s.name, idx) for k in write_kinds(s)))
    if isinstance(s, IR.WriteConfig):
        return seq(_eff_expr(s.rhs), _gwrite_leaf(s))
    if isinstance(s, IR.If):
        c = lift(s.cond)
        return seq(_eff_expr(s.cond), guard(c, eff_block(s.body)),
                   guard(E.not_(c), eff_block(s.orelse)))
    if isinstance(s, IR.For):
        lo, hi = lift(s.lo), lift(s.hi)
        body = eff_block(s.body)
        G = valg_at_iter(s.iter, lo, valg_block(s.body))
        if G:
            body = eff_subst(body, G)
        bds = bounds(s.iter, lo, hi)
        return seq(_eff_expr(s.lo), _eff_expr(s.hi),
                   loop(s.iter, guard(bds, body)))
    if isinstance(s, IR.Alloc):
        # the sizes are evaluated here, once (the strides keep their
        # values): what they read is read by the allocation
        sizes = s.type.hi if isinstance(s.type, IR.Tensor) else ()
        return seq(*(_eff_expr(h) for h in sizes), ("alloc", s.name))
    if isinstance(s, IR.Call):
        return eff_call(s)
    if isinstance(s, IR.WindowStmt):
        return _eff_expr(s.rhs)
    return EMPTY


def _gwrite_leaf(s):
    """A config write's effect leaf. Control-typed fields carry the written
    value and the field's value right before the write (both effect
    expressions, substituted along with the rest of the effect) so that
    ``noop_refine`` can recognise writes of the value already there."""
    g = E.GVar(s.config, s.field)
    t = s.config.lookup_type(s.field)
    if not T.is_control(t):
        return ("gwrite", g)
    return ("gwrite", g, lift(s.rhs), E.var(g, E.BOOL if t is IR.Bool
                                            else E.INT))


def noop_refine(a):
    """Eff of ``x := v`` read as Eff of ``if x != v: x := v``.

    The two statements are equivalent in every state, so either effect is a
    sound abstraction of the write; this one reads x and writes it only when
    the value may change. Commutes uses it: a config write of the value the
    field provably already holds (e.g. the same loop-invariant value written
    in every iteration, seen from a later iteration through the iteration's
    PreValG) then commutes with reads of the field. Shadows must not use it
    for the shadowing side: the plain write definitely determines x.
    """
    tag = a[0]
    if tag == "seq":
        return seq(*(noop_refine(x) for x in a[1]))
    if tag == "guard":
        return guard(a[1], noop_refine(a[2]))
    if tag == "loop":
        return loop(a[1], noop_refine(a[2]))
    if tag == "gwrite" and len(a) == 4:
        g, v, cur = a[1], a[2], a[3]
        return seq(("gread", g), guard(E.not_(E.eq(cur, v)), ("gwrite", g)))
    return a


def bounds(it, lo, hi):
    x = E.var(it)
    return E.and_(E.op("<=", lo, x), E.op("<", x, hi))


@memo(maxsize=4096)
def proc_body_eff(p):
    """Effect of a procedure body, preconditions' config reads included."""
    reads = []
    for pr in p.preds:
        reads.append(_eff_expr(pr))
    return seq(*reads, eff_block(p.body))


def eff_call(s):
    """Callee body effect with arguments substituted (§3.13 + calls)."""
    f = s.f
    body = proc_body_eff(f)
    env = call_ctrl_env(s)
    sub = BufSub()
    arg_reads = []
    for fa, a in zip(f.args, s.args):
        if T.is_control(fa.type):
            arg_reads.append(_eff_expr(a))
            continue
        if isinstance(a, IR.WindowExpr):
            n, m = window_map(a)
            sub = sub.bind(fa.name, n, m)
            arg_reads.append(_eff_expr(a))
        elif isinstance(a, IR.Read):
            nd = len(T.shape(a.type)) if T.is_tensor_or_window(a.type) else 0
            sub = sub.bind(fa.name, a.name, identity_map(nd))
    return seq(*arg_reads, eff_subst(body, env, sub))


def eff_block(stmts, sub=None):
    """Eff of a sequence: Eff(s1) ; ValG(s1)(Eff(s2)) ..., windows resolved,
    block-local allocations dropped at the end of the block."""
    return _eff_block(tuple(stmts), sub)


def at_point(a, env, sub):
    """Effect ``a`` (in terms of the state at a point) in entry terms:
    ``env`` (the config values there) first, then the window bindings
    ``sub`` in scope there, whose offsets are in entry terms already. The
    other order would evaluate a window's offsets with the config values
    of the point of use."""
    if env:
        a = eff_subst(a, env)
    if sub:
        a = eff_subst(a, None, sub)
    return a



@memo(maxsize=16384)
def _eff_block(stmts, sub):
    parts = []
    gamma = {}
    local = set()
    sub = sub or BufSub()
    for s in stmts:
        if isinstance(s, IR.WindowStmt):
            # a window statement reads what its offsets read (config
            # fields), here: moving it past a write of one, or running it
            # again after one, changes the window
            parts.append(at_point(eff_stmt(s), gamma, sub))
            n, m = window_map(s.rhs)
            if sub:
                m = tuple((k, E.subst(v, sub.stride_env())) for k, v in m)
            if gamma:
                # the offsets are evaluated here, once: in block-start
                # terms with the config values of this point, not those
                # where the window is used (``w = x[Cfg.a:...]; Cfg.a =
                # 2; y = w[0]`` reads x[old Cfg.a])
                m = tuple((k, E.subst(v, gamma)) for k, v in m)
            sub = sub.bind(s.name, n, m)
            local.add(s.name)
            continue
        # config values first (the statement's own expressions), then the
        # windows, whose offsets are already in block-start terms
        parts.append(at_point(eff_stmt(s), gamma, sub))
        if isinstance(s, IR.Alloc):
            local.add(s.name)
        g = valg(s)
        if g:
            if sub:
                g = {k: E.subst(v, sub.stride_env()) for k, v in g.items()}
            gamma = env_compose(gamma, g)
    return eff_filter_names(seq(*parts), local)




# ---------------------------------------------------------------------------
# location sets


LEMPTY = ("empty", )


def lunion(*ls):
    out = []
    for l in ls:
        if l[0] == "empty":
            continue
        if l[0] == "union":
            out.extend(l[1])
        else:
            out.append(l)
    if not out:
        return LEMPTY
    if len(out) == 1:
        return out[0]
    return ("union", tuple(out))


def ldiff(a, b):
    if a[0] == "empty" or b[0] == "empty":
        return a
    return ("diff", a, b)


def linter(a, b):
    if a[0] == "empty" or b[0] == "empty":
        return LEMPTY
    return ("inter", a, b)


def lfilter(c, l):
    if l[0] == "empty" or E.is_const(c, True):
        return l
    if E.is_const(c, False):
        return LEMPTY
    return ("filter", c, l)


def lbigcup(k, l):
    if l[0] == "empty":
        return l
    return ("bigcup", k, l)


_LEAF = {"Rd_G": "gread", "Wr_G": "gwrite", "Rd_H": "read", "Wr_H": "write",
         "R+_H": "reduce"}


def A(a):
    tag = a[0]
    if tag == "alloc":
        return ("pt", a[1], None)
    if tag == "seq":
        return lunion(*(A(x) for x in a[1]))
    return LEMPTY


def _locs(fn, a):
    tag = a[0]
    if tag == "guard":
        return lfilter(a[1], _locs(fn, a[2]))
    if tag == "loop":
        return lbigcup(a[1], _locs(fn, a[2]))
    if tag == "seq":
        xs = a[1]
        if not xs:
            return LEMPTY
        if len(xs) == 1:
            return _locs(fn, xs[0])
        first, rest = xs[0], ("seq", xs[1:])
        l1 = _locs(fn, first)
        l2 = _locs(fn, rest)
        if fn == "Rd_G":
            l2 = ldiff(ldiff(l2, _locs("Wr_G", first)), A(first))
        elif fn == "Rd_H":
            l2 = ldiff(ldiff(l2, _locs("Wr_H", first)), A(first))
        else:
            l2 = ldiff(l2, A(first))
        return lunion(l1, l2)
    if tag == _LEAF[fn]:
        return ("pt", a[1], a[2] if tag not in ("gread", "gwrite") else ())
    return LEMPTY


def Rd_G(a):
    return _locs("Rd_G", a)


def Wr_G(a):
    return _locs("Wr_G", a)


def Rd_H(a):
    return _locs("Rd_H", a)


def Wr_H(a):
    return _locs("Wr_H", a)


def Rp_H(a):
    """R+_H: reduced heap locations."""
    return _locs("R+_H", a)


def Rd(a):
    return lunion(Rd_G(a), Rd_H(a))


def Wr(a):
    return lunion(Wr_G(a), Wr_H(a))


def Rp(a):
    """R+ = R+_H - Wr_H."""
    return ldiff(Rp_H(a), Wr_H(a))


def All(a):
    return lunion(Rd(a), Wr(a), Rp_H(a))


def Mod(a):
    return lunion(Wr(a), Rp_H(a))


def RW(a):
    return lunion(Rd(a), Wr(a))


# ---------------------------------------------------------------------------
# §3.12 membership / emptiness (the specification form, with quantifiers)


def member(name, idx, l):
    """xs ∈ L as a ternary effect expression."""
    tag = l[0]
    if tag == "empty":
        return E.FALSE
    if tag == "pt":
        if l[1] != name:
            return E.FALSE
        if l[2] is None:
            return E.TRUE
        return E.ands(E.eq(a, b) for a, b in zip(idx, l[2]))
    if tag == "union":
        return E.ors(member(name, idx, x) for x in l[1])
    if tag == "bigcup":
        return E.exists(l[1], member(name, idx, l[2]))
    if tag == "inter":
        return E.and_(member(name, idx, l[1]), member(name, idx, l[2]))
    if tag == "diff":
        return E.and_(member(name, idx, l[1]),
                      E.not_(member(name, idx, l[2])))
    if tag == "filter":
        return E.and_(l[1], member(name, idx, l[2]))
    raise ValueError(tag)


def names_of(l, out=None):
    """(name, arity) pairs that may occur in a location set."""
    if out is None:
        out = {}
    tag = l[0]
    if tag == "pt":
        if l[2] is not None or l[1] not in out:
            out[l[1]] = None if l[2] is None else len(l[2])
    elif tag == "union":
        for x in l[1]:
            names_of(x, out)
    elif tag in ("bigcup", "filter"):
        names_of(l[2], out)
    elif tag in ("inter", "diff"):
        names_of(l[1], out)
        names_of(l[2], out)
    return out


def is_empty(l, fresh):
    """(L = ∅) = ∀xs. xs ∉ L, as a ternary effect expression.

    The quantifier over names is expanded over the finitely many names that
    occur in L; ``fresh(n)`` supplies n fresh index keys.
    """
    out = E.TRUE
    for name, n in names_of(l).items():
        ks = fresh(n or 0)
        body = E.not_(member(name, tuple(E.var(k) for k in ks), l))
        for k in reversed(ks):
            body = E.forall(k, body)
        out = E.and_(out, body)
    return out


# ---------------------------------------------------------------------------
# flattening into terms (what the checks query)


#: longest spelling of one index in a failure reason (``E.to_str``)
_INDEX_TEXT_LIMIT = 200


class Term:
    """⋃_{bvars} filter(cond, {name, idx}) - minus...  (minus: location sets
    whose free variables may include bvars)."""

    __slots__ = ("name", "idx", "cond", "bvars", "minus")

    def __init__(self, name, idx, cond, bvars, minus):
        self.name = name
        self.idx = idx
        self.cond = cond
        self.bvars = bvars
        self.minus = minus

    def __repr__(self):
        ix = "" if not self.idx else "[" + ", ".join(
            E.to_str(i, _INDEX_TEXT_LIMIT) for i in self.idx) + "]"
        return f"{getattr(self.name, 'name', self.name)}{ix}"


def flatten(l):
    tag = l[0]
    if tag == "empty":
        return []
    if tag == "pt":
        return [Term(l[1], l[2], E.TRUE, (), ())]
    if tag == "union":
        out = []
        for x in l[1]:
            out.extend(flatten(x))
        return out
    if tag == "bigcup":
        return [Term(t.name, t.idx, t.cond, (l[1], ) + t.bvars, t.minus)
                for t in flatten(l[2])]
    if tag == "filter":
        return [Term(t.name, t.idx, E.and_(l[1], t.cond), t.bvars, t.minus)
                for t in flatten(l[2])]
    if tag == "diff":
        return [Term(t.name, t.idx, t.cond, t.bvars, t.minus + (l[2], ))
                for t in flatten(l[1])]
    if tag == "inter":
        out = []
        for t1 in flatten(l[1]):
            for t2 in flatten(l[2]):
                if t1.name != t2.name:
                    continue
                t2 = rename_term(t2)
                c = E.and_(t1.cond, t2.cond)
                if t1.idx is not None and t2.idx is not None:
                    c = E.and_(c, E.ands(E.eq(a, b)
                                         for a, b in zip(t1.idx, t2.idx)))
                idx = t1.idx if t1.idx is not None else t2.idx
                out.append(Term(t1.name, idx, c, t1.bvars + t2.bvars,
                                t1.minus + t2.minus))
        return out
    raise ValueError(tag)


def locset_subst(l, env):
    tag = l[0]
    if tag == "empty":
        return l
    if tag == "pt":
        if l[2] is None:
            return l
        return ("pt", l[1], tuple(E.subst(i, env) for i in l[2]))
    if tag == "union":
        return ("union", tuple(locset_subst(x, env) for x in l[1]))
    if tag == "bigcup":
        inner = {k: v for k, v in env.items() if k != l[1]}
        return ("bigcup", l[1], locset_subst(l[2], inner))
    if tag == "filter":
        return ("filter", E.subst(l[1], env), locset_subst(l[2], env))
    return (tag, locset_subst(l[1], env), locset_subst(l[2], env))


class SideRenamer:
    """``rename_term`` for the terms of one side of a satisfiability query
    whose terms' bound variables are left free (``mem_term(free=True)``)
    and joined by ∨: a bound variable gets one fresh variable for all the
    terms of the side, and terms under the same binders share their
    renamed sub-expressions. ∃ distributes over ∨, so sharing the fresh
    variables between those terms is sound; formulas of two sides (each
    with its own renamer) stay apart. The shared sub-expressions let an
    ``smt.encode`` memo encode each once instead of once per term (the
    terms of a loop body share the conditions of its loops). The caller
    holds the terms while the renamer lives (``E.subst``'s ``seen``)."""

    __slots__ = ("_vars", "_seen")

    def __init__(self):
        self._vars = {}
        self._seen = {}

    def __call__(self, t):
        if not t.bvars:
            return t
        from ..core_ir.syms import Sym
        ren = {}
        nb = []
        for b in t.bvars:
            v = self._vars.get(b)
            if v is None:
                nk = b.copy() if isinstance(b, Sym) else Sym(str(b))
                v = self._vars[b] = E.var(nk)
            ren[b] = v
            nb.append(v[1])
        seen = self._seen.setdefault(t.bvars, {})
        idx = None if t.idx is None else tuple(E.subst(i, ren, seen)
                                               for i in t.idx)
        return Term(t.name, idx, E.subst(t.cond, ren, seen), tuple(nb),
                    tuple(locset_subst(m, ren) for m in t.minus))


def rename_term(t, fresh_of=None):
    """A copy of a term with fresh bound variables."""
    if not t.bvars:
        return t
    from ..core_ir.syms import Sym
    ren = {}
    nb = []
    for b in t.bvars:
        nk = b.copy() if isinstance(b, Sym) else Sym(str(b))
        ren[b] = E.var(nk)
        nb.append(nk)
    idx = None if t.idx is None else tuple(E.subst(i, ren) for i in t.idx)
    return Term(t.name, idx, E.subst(t.cond, ren), tuple(nb),
                tuple(locset_subst(m, ren) for m in t.minus))
