"""Differential test of the effect-expression layer on random raw trees.

Random ternary expressions (int/bool variables, constants, ⊥, ternary
inputs ``d ? x : ⊥``, + - * neg, / and % by constants including zero and
negative ones and by non-constants, comparisons, and/or/not, ite, forall/
exists over a key that may also be free) are checked on assignments of
their free variables:

  (a) ``eval3`` of the raw tree equals ``eval3`` of the tree rebuilt with
      the smart constructors (every folding keeps the three-valued value);
  (b) the two-valued encoding of both decodes to the same value, except
      that the encoding may make ⊥ a / or % whose divisor is not a positive
      constant (sound: it proves less);
  (c) ``collapse_M`` / ``collapse_D`` evaluate to M / D of the value (with
      the same one-sided allowance);
  (d) linear-form operations agree with integer arithmetic (floor / and %),
      ``solve_for`` and ``tsubst`` with substitution, and ``checks.prove``
      answers OK only for quantifier-free implications that hold on a box.
Quantifiers range over ``range(-3, 4)`` in both ``eval3`` and ``eval_term``.
"""
import itertools
import random

from exo_hl.core_ir.syms import Sym
from exo_hl.effects import checks as C
from exo_hl.effects import eexpr as E
from exo_hl.effects import smt as S

INT, BOOL = E.INT, E.BOOL
X, Y, K = Sym("x"), Sym("y"), Sym("k")
P = Sym("p")
DA, XA = Sym("da"), Sym("xa")   # ternary int input
DB, XB = Sym("db"), Sym("xb")   # ternary bool input
TA = ("ite", E.var(DA, BOOL), E.var(XA, INT), E.bot(INT))
TB = ("ite", E.var(DB, BOOL), E.var(XB, BOOL), E.bot(BOOL))
DOM = range(-3, 4)
QKEYS = (K, X)
EXPR_CASES, LIN_CASES, PROVE_CASES = 4000, 300, 600
BOOLS = (False, True)

def gen_int(r, d, bound):
    if d <= 0 or r.random() < 0.25:
        c = r.random()
        if c < 0.5: return E.var(r.choice((X, Y) + tuple(bound)), INT)
        if c < 0.8: return E.const(r.randint(-3, 3))
        if c < 0.85: return E.bot(INT)
        return TA
    c = r.random()
    if c < 0.45:
        o = r.choice("+-*")
        return ("op", o, gen_int(r, d-1, bound), gen_int(r, d-1, bound))
    if c < 0.65:
        o = r.choice("/%")
        if r.random() < 0.75:
            den = E.const(r.choice((-3, -2, -1, 0, 1, 2, 3, 4)))
        else:
            den = gen_int(r, d-1, bound)
        return ("op", o, gen_int(r, d-1, bound), den)
    if c < 0.75:
        return ("op", "neg", gen_int(r, d-1, bound))
    t = gen_int(r, d-1, bound)
    return ("ite", gen_bool(r, d-1, bound), t, t if r.random() < 0.4 else gen_int(r, d-1, bound))

def gen_bool(r, d, bound, quant=True):
    if d <= 0 or r.random() < 0.2:
        c = r.random()
        if c < 0.5: return E.var(P, BOOL)
        if c < 0.8: return E.const(r.random() < 0.5)
        if c < 0.85: return E.bot(BOOL)
        return TB
    c = r.random()
    if c < 0.35:
        o = r.choice(["<", "<=", ">", ">=", "==", "=="])
        a = gen_int(r, d-1, bound)
        return ("op", o, a, a if r.random() < 0.2 else gen_int(r, d-1, bound))
    if c < 0.4:
        return ("op", "==", gen_bool(r, d-1, bound, quant), gen_bool(r, d-1, bound, quant))
    if c < 0.65:
        a = gen_bool(r, d-1, bound, quant)
        return ("op", r.choice(("and", "or")), a, a if r.random() < 0.25 else gen_bool(r, d-1, bound, quant))
    if c < 0.72:
        return ("op", "not", gen_bool(r, d-1, bound, quant))
    if c < 0.82:
        t = gen_bool(r, d-1, bound, quant)
        return ("ite", gen_bool(r, d-1, bound, quant), t, t if r.random() < 0.4 else gen_bool(r, d-1, bound, quant))
    if quant:
        k = r.choice(QKEYS)
        return (r.choice(("forall", "exists")), k, gen_bool(r, d-1, bound | {k}, quant))
    return ("op", "<", gen_int(r, d-1, bound), gen_int(r, d-1, bound))

def rebuild(e):
    t = e[0]
    if t in ("var", "const", "bot"): return e
    if t == "ite": return E.ite(rebuild(e[1]), rebuild(e[2]), rebuild(e[3]))
    if t == "forall": return E.forall(e[1], rebuild(e[2]))
    if t == "exists": return E.exists(e[1], rebuild(e[2]))
    if len(e) == 3: return E.op(e[1], rebuild(e[2]))
    return E.op(e[1], rebuild(e[2]), rebuild(e[3]))

def envs(r, n):
    allv = list(itertools.product((-2, 0, 1, 3), (-1, 0, 2), BOOLS, BOOLS, (-2, 0, 2), BOOLS, BOOLS))
    out = []
    for x, y, p, da, xa, db, xb in (allv if n is None else r.sample(allv, n)):
        out.append({X: x, Y: y, P: p, DA: da, XA: xa, DB: db, XB: xb, K: 0})
    return out


def imprecise(e):
    """has / or % whose divisor is not a positive constant (SMT makes it ⊥)"""
    t = e[0]
    if t in ("var", "const", "bot"): return False
    if t == "op" and e[1] in "/%" and len(e) == 4:
        if not (e[3][0] == "const" and e[3][1] > 0) : return True
    parts = e[1:] if t == "ite" else e[2:]
    return any(imprecise(x) for x in parts if isinstance(x, tuple))

def decode(pair, env):
    v, d = pair
    return S.eval_term(v, env, DOM) if S.eval_term(d, env, DOM) else None

stats = {}

def check(e, env_list):
    errs = []
    rb = rebuild(e)
    enc = S.encode(e)
    encr = S.encode(rb)
    sort = E.sort_of(e)
    imp = imprecise(e)
    cm = cd = None
    if sort == BOOL:
        cm, cd = S.collapse_M(e), S.collapse_D(e)
    for env in env_list:
        v = E.eval3(e, env, DOM)
        vr = E.eval3(rb, env, DOM)
        if v != vr or type(v) != type(vr):
            errs.append(("a:rebuild", env, v, vr))
        g = decode(enc, env)
        if g != v:
            if not (g is None and v is not None and imp):
                errs.append(("b:encode", env, v, g))
        gr = decode(encr, env)
        if gr != vr:
            if not (gr is None and vr is not None and imprecise(rb)):
                errs.append(("b:encode-rebuilt", env, vr, gr))
        if sort == BOOL:
            m = S.eval_term(cm, env, DOM)
            dd = S.eval_term(cd, env, DOM)
            if m != E.M(v) and not (imp and m and not E.M(v)):
                errs.append(("c:M", env, v, m))
            if dd != E.D(v) and not (imp and not dd and E.D(v)):
                errs.append(("c:D", env, v, dd))
    return errs
def gen_lin(r, d):
    out = S.lconst(r.randint(-7, 7))
    for _ in range(r.randint(0, 3)):
        c = r.choice((-6, -4, -3, -2, -1, 1, 2, 3, 4, 6))
        if d > 0 and r.random() < 0.3:
            inner = gen_lin(r, d - 1)
            k = r.choice((1, 2, 3, 4, 6))
            at = S.ldiv(inner, k) if r.random() < 0.5 else S.lmod(inner, k)
        else:
            at = S.lvar(r.choice((X, Y)))
        out = S.ladd(out, S.lscale(at, c))
    return out

LENVS = [{X: x, Y: y} for x in range(-7, 8) for y in range(-7, 8)]

def ev(t, env): return S.eval_term(t, env)

def lin_case(r, errs):
    a, b = gen_lin(r, 2), gen_lin(r, 2)
    c = r.choice((1, 2, 3, 4, 5, 6, -1, -2, -3))
    sb = r.choice((1, -1, 2, -3))
    k = r.randint(-3, 3)
    # the reference of each constructor, from the values of a and b (each
    # evaluated once per environment)
    ops = {
        "ldiv": (S.ldiv(a, c), lambda va, vb: va // c),
        "lmod": (S.lmod(a, c), lambda va, vb: va % c),
        "ladd": (S.ladd(a, b, sb), lambda va, vb: va + sb * vb),
        "lscale": (S.lscale(a, k), lambda va, vb: k * va),
        "lmul": (S.lmul(a, b), lambda va, vb: va * vb),
        "ble0": (S.ble0(a), lambda va, vb: va <= 0),
        "beq0": (S.beq0(a), lambda va, vb: va == 0),
        "bnot_le0": (S.bnot(S.ble0(a)), lambda va, vb: not va <= 0),
    }
    for o in ("<", "<=", ">", ">=", "=="):
        f = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "==": int.__eq__}[o]
        ops["bcmp" + o] = (S.bcmp(o, a, b), lambda va, vb, f=f: f(va, vb))
    sol = S.solve_for(X, a)
    tsub = S.tsubst(S.ble0(b), {X: a})
    for env in LENVS:
        va, vb = ev(a, env), ev(b, env)
        for name, (t, f) in ops.items():
            try:
                g = ev(t, env)
            except ZeroDivisionError:
                g = "ZDE"
            want = f(va, vb)
            if g != want:
                errs.append((name, a, b, c, sb, k, env, g, want))
        if sol is not None:
            if (va == 0) != (env[X] == ev(sol, env)):
                errs.append(("solve_for", a, env, sol))
        if ev(tsub, env) != (ev(b, {**env, X: va}) <= 0):
            errs.append(("tsubst", a, b, env))
    return errs


PENVS = [{X: x, Y: y, P: p, DA: da, XA: xa, DB: db, XB: xb, K: 0}
         for x, y, p, da, xa, db, xb in itertools.product(
             range(-4, 5), range(-4, 5), BOOLS, BOOLS, (-2, 0, 3), BOOLS,
             BOOLS)
         if (da or xa == -2) and (db or not xb)]


def prove_case(r):
    """A quantifier-free prove(pred, hyps) that says OK must hold on PENVS."""
    pred = gen_bool(r, r.randint(1, 4), frozenset(), False)
    hyps = [gen_bool(r, r.randint(1, 3), frozenset(), False)
            for _ in range(r.randint(0, 2))]
    if r.random() < 0.5:
        pred, hyps = rebuild(pred), [rebuild(h) for h in hyps]
    if not C.prove(pred, hyps).ok:
        return []
    for env in PENVS:
        if (all(E.M(E.eval3(h, env)) for h in hyps)
                and not E.D(E.eval3(pred, env))):
            return [("prove", E.to_str(pred), [E.to_str(h) for h in hyps],
                     env)]
    return []


def _expr(r):
    d = r.randint(1, 5)
    if r.random() < 0.7:
        return gen_bool(r, d, frozenset())
    return gen_int(r, d, frozenset())


def test_constructors_encoding_collapse():
    for s in range(EXPR_CASES):
        r = random.Random(s)
        e = _expr(r)
        errs = check(e, envs(r, 12))
        assert not errs, (s, E.to_str(e), errs[0])


def test_linear_forms():
    for s in range(LIN_CASES):
        errs = lin_case(random.Random(10_000 + s), [])
        assert not errs, (s, errs[0])


def test_prove_quantifier_free():
    for s in range(PROVE_CASES):
        errs = prove_case(random.Random(20_000 + s))
        assert not errs, (s, errs[0])


def test_regressions_found_by_this_tester():
    x, y = X, Y
    # ite whose condition divides by zero: ⊥, not the common branch
    raw = ("ite", ("op", "<", ("op", "/", E.var(y), E.const(0)), E.var(x)),
           E.TRUE, E.TRUE)
    assert not check(raw, envs(random.Random(0), None))
