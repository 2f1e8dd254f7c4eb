"""Lift (Def. 3.20), window maps, and global dataflow ValG (Def. 3.21, §3.11).

Names are lifted raw: a window statement's name or a callee's parameter stays
as it is, and ``BufSub`` later maps it onto the buffer it views (the same
substitution serves window statements and call arguments). A window map is a
tuple with one entry per dimension of the underlying buffer:
``('pt', ee)`` (a fixed coordinate) or ``('iv', lo_ee)`` (the next window
coordinate, offset by lo).

Environments (EffEnv) are dicts {GVar: ee}; absent keys map x to x.
"""
from __future__ import annotations


from ..caches import memo
from ..core_ir import operators as OPS
from ..core_ir import types as T
from ..core_ir.nodes import IR
from . import eexpr as E

_BINOPS = OPS.ARITH_OPS | OPS.CMP_OPS | OPS.BOOL_OPS
_BOOL_VALUED = OPS.CMP_OPS | OPS.BOOL_OPS


def ctrl_sort(t):
    return E.BOOL if t is IR.Bool else E.INT


def lift(e):
    """Control expression -> effect expression (data parts become ⊥)."""
    return _lift(e)


@memo(maxsize=65536)
def _lift(e):
    if isinstance(e, IR.Read):
        if e.idx or not T.is_control(e.type):
            return E.bot(E.INT)
        return E.var(e.name, ctrl_sort(e.type))
    if isinstance(e, IR.Const):
        if isinstance(e.val, bool):
            return E.const(e.val)
        if isinstance(e.val, int):
            return E.const(e.val)
        return E.bot(E.INT)
    if isinstance(e, IR.USub):
        return E.op("neg", _lift(e.arg))
    if isinstance(e, IR.Not):
        return E.not_(_lift(e.arg))
    if isinstance(e, IR.BinOp):
        if e.op not in _BINOPS:
            return E.bot(E.BOOL if e.type is IR.Bool else E.INT)
        if not T.is_control(e.type) and e.op not in _BOOL_VALUED:
            return E.bot(E.INT)
        return E.op(e.op, _lift(e.lhs), _lift(e.rhs))
    if isinstance(e, IR.StrideExpr):
        return E.var(E.StrideVar(e.name, e.dim), E.INT)
    if isinstance(e, IR.ReadConfig):
        return E.var(E.GVar(e.config, e.field), ctrl_sort(e.type))
    return E.bot(E.BOOL if getattr(e, "type", None) is IR.Bool else E.INT)


def window_map(w):
    """(name, map) of a WindowExpr, relative to ``w.name``."""
    m = []
    for a in w.idx:
        if isinstance(a, IR.Interval):
            m.append(("iv", lift(a.lo)))
        else:
            m.append(("pt", lift(a.pt)))
    return w.name, tuple(m)


def identity_map(ndim):
    return tuple(("iv", E.const(0)) for _ in range(ndim))


def apply_map(wmap, idx):
    """Coordinates in the underlying buffer of window coordinates ``idx``."""
    out = []
    it = iter(idx)
    for kind, v in wmap:
        if kind == "pt":
            out.append(v)
        else:
            out.append(E.op("+", v, next(it)))
    return tuple(out)


def compose_map(outer, inner):
    """``inner`` is a map relative to a window whose own map is ``outer``."""
    out = []
    it = iter(inner)
    for kind, v in outer:
        if kind == "pt":
            out.append((kind, v))
        else:
            k2, v2 = next(it)
            out.append((k2, E.op("+", v, v2)))
    return tuple(out)


def map_subst(wmap, env):
    return tuple((k, E.subst(v, env)) for k, v in wmap)


class BufSub:
    """Maps raw buffer names onto (underlying buffer, window map).

    Immutable; ``bind`` returns an extended copy, composing through existing
    bindings so chains of windows resolve to the real buffer.
    """

    __slots__ = ("m", "_strides")

    def __init__(self, m=None):
        self.m = dict(m or {})
        self._strides = None

    def __bool__(self):
        return bool(self.m)

    def __hash__(self):
        return hash(frozenset(self.m.items()))

    def __eq__(self, other):
        return isinstance(other, BufSub) and self.m == other.m

    def resolve(self, name, wmap):
        """(base, map) of a window ``wmap`` relative to ``name``."""
        hit = self.m.get(name)
        if hit is None:
            return name, wmap
        base, outer = hit
        return base, compose_map(outer, wmap)

    def bind(self, name, base, wmap):
        b, m = self.resolve(base, wmap)
        new = dict(self.m)
        new[name] = (b, m)
        return BufSub(new)

    def access(self, name, idx):
        hit = self.m.get(name)
        if hit is None:
            return name, idx
        base, wmap = hit
        return base, apply_map(wmap, idx)

    def stride_env(self):
        """stride(w, d) -> stride(base, dim of the d-th interval)."""
        if self._strides is None:
            env = {}
            for name, (base, wmap) in self.m.items():
                d = 0
                for j, (k, _) in enumerate(wmap):
                    if k == "iv":
                        env[E.StrideVar(name, d)] = E.var(E.StrideVar(base, j))
                        d += 1
            self._strides = env
        return self._strides


# ---------------------------------------------------------------------------
# environments


def env_apply(env, e):
    return E.subst(e, env) if env else e


def env_compose(g1, g2):
    """(g1 · g2) x = g1(g2(x)): run g1's statement first, then g2's."""
    if not g1:
        return dict(g2)
    if not g2:
        return dict(g1)
    out = dict(g1)
    for k, v in g2.items():
        out[k] = E.subst(v, g1)
    return out


def _gvar_ee(k):
    return E.var(k, ctrl_sort(k.config.lookup_type(k.field)))


def _drop_identity(env):
    return {k: v for k, v in env.items() if v != _gvar_ee(k)}


def valg_block(stmts):
    """ValG of a statement sequence (a tuple)."""
    return _valg_block(tuple(stmts))


@memo(maxsize=16384)
def _valg_block(stmts):
    env = {}
    sub = BufSub()
    for s in stmts:
        if isinstance(s, IR.WindowStmt):
            n, m = window_map(s.rhs)
            sub = sub.bind(s.name, n, m)
            continue
        g = valg(s)
        if g and sub:
            senv = sub.stride_env()
            g = {k: E.subst(v, senv) for k, v in g.items()}
        env = env_compose(env, g)
    return _drop_identity(env)


def valg(s):
    """ValG of one statement: {GVar: value after s, in terms of state before}."""
    return _valg(s)


@memo(maxsize=16384)
def _valg(s):
    if isinstance(s, IR.WriteConfig):
        return {E.GVar(s.config, s.field): lift(s.rhs)}
    if isinstance(s, IR.If):
        gb = valg_block(s.body)
        go = valg_block(s.orelse)
        if not gb and not go:
            return {}
        c = lift(s.cond)
        out = {}
        for k in list(gb) + [k for k in go if k not in gb]:
            out[k] = E.ite(c, gb.get(k, _gvar_ee(k)), go.get(k, _gvar_ee(k)))
        return _drop_identity(out)
    if isinstance(s, IR.For):
        return valg_loop(s.iter, lift(s.lo), lift(s.hi), valg_block(s.body))
    if isinstance(s, IR.Call):
        g = valg_block(s.f.body)
        if not g:
            return {}
        env = call_ctrl_env(s)
        return {k: E.subst(v, env) for k, v in g.items()}
    return {}


def valg_loop(it, lo, hi, G):
    """ValG of ``for it in lo..hi`` with body dataflow ``G``.

    Rules, per global x with body value gx (state at iteration start):
      * gx free of every global the body writes (it may name ``it``: each
        iteration writes a value of its own, whatever the state): the last
        iteration's value, x -> (lo < hi) ? gx[it := hi - 1] : x. Exact,
        including the zero-iteration case (then x keeps its value before).
        E.g. ``for i in seq(0, n): C.c = i`` leaves ``n > 0 ? n - 1 : C.c``,
        not ⊥ (a later ``y[C.c % 8]`` was unprovable).
      * gx = c ? v : x with c, v free of ``it`` and the body-written globals:
        x -> (lo < hi and c) ? v : x (the same guarded write every time).
      * gx = c ? v : x with v free of ``it`` and the body-written globals, c
        free of the body-written globals: x -> (∃it. lo <= it < hi and c) ?
        v : x (whichever iterations write, they write v).
      * otherwise the paper's rule: x -> fix ? x : ⊥ with
        fix = ∀it. (lo <= it < hi ⇒ gx == x).
    """
    if not G:
        return {}
    W = set(G) | {it}
    out = {}
    runs = E.op("<", lo, hi)
    Wg = set(G)
    for x, gx in G.items():
        xv = _gvar_ee(x)
        if gx == xv:
            continue
        fk = E.free_keys(gx)
        if not (fk & Wg):
            last = E.subst(gx, {it: E.op("-", hi, E.const(1))}) \
                if it in fk else gx
            out[x] = E.ite(runs, last, xv)
            continue
        bd = E.and_(E.op("<=", lo, E.var(it)), E.op("<", E.var(it), hi))
        if gx[0] == "ite" and gx[3] == xv and not (
                (E.free_keys(gx[1]) | E.free_keys(gx[2])) & W):
            out[x] = E.ite(E.and_(runs, gx[1]), gx[2], xv)
            continue
        if gx[0] == "ite" and gx[3] == xv and not (
                E.free_keys(gx[2]) & W or E.free_keys(gx[1]) & Wg):
            out[x] = E.ite(E.exists(it, E.and_(bd, gx[1])), gx[2], xv)
            continue
        fix = E.forall(it, E.implies(bd, E.eq(gx, xv)))
        out[x] = E.ite(fix, xv, E.bot(xv[2]))
    return _drop_identity(out)


def valg_at_iter(it, lo, G):
    """Global values at the start of iteration ``it`` (>= lo) of a loop whose
    body has dataflow ``G``: the loop ``lo..it`` run so far (hi := it).

    This, not the post-loop ValG, is what the body's effect and the context
    analyses must see: e.g. a body ending in ``Cfg.x = 5`` sees the entry
    value of Cfg.x in its first iteration and 5 afterwards.
    """
    if not G:
        return {}
    it2 = it.copy()
    ren = {it: E.var(it2)}
    Gr = {k: E.subst(v, ren) for k, v in G.items()}
    return valg_loop(it2, lo, E.var(it), Gr)


def call_ctrl_env(s):
    """Callee control parameter -> lifted caller argument."""
    env = {}
    for fa, a in zip(s.f.args, s.args):
        if T.is_control(fa.type):
            env[fa.name] = lift(a)
    return env
