"""The two-valued encoding (§3.10) against brute-force three-valued tables."""
import itertools

import pytest

from exo_hl.core_ir.syms import Sym
from exo_hl.effects import eexpr as E
from exo_hl.effects import smt as S

INTS = (-2, 0, 1, 3)
BOOLS = (False, True)


def tern_input(sort):
    """A ternary input: (d ? x : ⊥) built from two classical variables."""
    d, x = Sym("d"), Sym("x")
    return ("ite", E.var(d, E.BOOL), E.var(x, sort), E.bot(sort)), d, x


def assignments(inputs):
    """All ternary values of the inputs: (env for classical vars, values)."""
    doms = []
    for sort, d, x in inputs:
        vals = INTS if sort == E.INT else BOOLS
        doms.append([(False, vals[0])] + [(True, v) for v in vals])
    for combo in itertools.product(*doms):
        env, tv = {}, []
        for (sort, d, x), (dv, xv) in zip(inputs, combo):
            env[d], env[x] = dv, xv
            tv.append(xv if dv else None)
        yield env, tv


def decode(term_pair, env):
    v, d = term_pair
    dv = S.eval_term(d, env)
    return S.eval_term(v, env) if dv else None


def check_op(build, sorts):
    ins = []
    exprs = []
    for s in sorts:
        e, d, x = tern_input(s)
        ins.append((s, d, x))
        exprs.append(e)
    ee = build(*exprs)
    n = 0
    for env, tv in assignments(ins):
        expect = E.eval3(ee, env)
        got = decode(S.encode(ee), env)
        assert got == expect, (E.to_str(ee), tv, got, expect)
        n += 1
    return n


@pytest.mark.parametrize("o", ["and", "or"])
def test_short_circuit_connectives(o):
    check_op(lambda a, b: ("op", o, a, b), (E.BOOL, E.BOOL))


def test_short_circuit_table():
    # the defining cases of §3.10: F ∧ ⊥ = F, T ∨ ⊥ = T, T ∧ ⊥ = ⊥
    B = E.bot(E.BOOL)
    for ee, want in [(("op", "and", E.FALSE, B), False),
                     (("op", "and", B, E.FALSE), False),
                     (("op", "and", E.TRUE, B), None),
                     (("op", "or", E.TRUE, B), True),
                     (("op", "or", B, E.FALSE), None),
                     (("op", "not", B), None)]:
        assert E.eval3(ee, {}) == want
        assert decode(S.encode(ee), {}) == want


def test_not():
    check_op(lambda a: ("op", "not", a), (E.BOOL, ))


@pytest.mark.parametrize("o", ["+", "-", "*", "<", "<=", ">", ">=", "=="])
def test_int_ops(o):
    check_op(lambda a, b: ("op", o, a, b), (E.INT, E.INT))


@pytest.mark.parametrize("o", ["/", "%"])
@pytest.mark.parametrize("c", [1, 3, 4])
def test_div_mod_by_constant(o, c):
    check_op(lambda a: ("op", o, a, E.const(c)), (E.INT, ))


def test_neg_and_bool_eq():
    check_op(lambda a: ("op", "neg", a), (E.INT, ))
    check_op(lambda a, b: ("op", "==", a, b), (E.BOOL, E.BOOL))


@pytest.mark.parametrize("sort", [E.INT, E.BOOL])
def test_ite(sort):
    check_op(lambda c, t, e: ("ite", c, t, e), (E.BOOL, sort, sort))


@pytest.mark.parametrize("q", ["forall", "exists"])
def test_quantifiers(q):
    k = Sym("k")
    # body over the bound k and a ternary parameter: (k < a) or (k == 2 and b)
    def build(a, b):
        kv = E.var(k)
        body = ("op", "or", ("op", "<", kv, a),
                ("op", "and", ("op", "==", kv, E.const(2)), b))
        return (q, k, body)
    ins = []
    exprs = []
    for s in (E.INT, E.BOOL):
        e, d, x = tern_input(s)
        ins.append((s, d, x))
        exprs.append(e)
    ee = build(*exprs)
    dom = range(-3, 4)
    for env, tv in assignments(ins):
        expect = E.eval3(ee, env, dom)
        v, d = S.encode(ee)
        dv = S.eval_term(d, env, dom)
        got = S.eval_term(v, env, dom) if dv else None
        assert got == expect


def test_collapses():
    for val in (True, False, None):
        ee = E.bot(E.BOOL) if val is None else E.const(val)
        assert S.eval_term(S.collapse_D(ee), {}) == E.D(val)
        assert S.eval_term(S.collapse_M(ee), {}) == E.M(val)


@pytest.mark.parametrize("val", [None, -4, 0, 7, True, False])
def test_encoding_round_trip(val):
    """Val(x, d): encode a ternary value and decode it back."""
    if val is None:
        ee = E.bot(E.INT)
    else:
        ee = E.const(val)
    assert decode(S.encode(ee), {}) == val


def test_smart_constructors_preserve_meaning():
    x, y = Sym("x"), Sym("y")
    X, Y = E.var(x), E.var(y)
    raw = ("op", "and", ("op", "<", X, ("op", "+", Y, E.const(0))), E.TRUE)
    built = E.and_(E.op("<", X, E.op("+", Y, E.const(0))), E.TRUE)
    for xv in INTS:
        for yv in INTS:
            env = {x: xv, y: yv}
            assert E.eval3(raw, env) == E.eval3(built, env)
            assert decode(S.encode(raw), env) == E.eval3(raw, env)


def test_linear_normalisation_decides_trivia():
    i = Sym("i")
    I = E.var(i)
    # i - i == 0 and 2*i == 2*i + 1 are settled without a solver
    assert S.collapse_D(E.op("==", E.op("-", I, I), E.const(0))) is True
    assert S.collapse_M(E.op("==", E.op("*", E.const(2), I),
                             E.op("+", E.op("*", E.const(2), I),
                                  E.const(1)))) is False


def test_ite_of_equal_branches_keeps_a_condition_that_may_be_bot():
    """``ite(c, t, t)`` is ⊥ when ``c`` is, so it folds to ``t`` only when
    ``c`` cannot be ⊥; a ⊥ reaching ``c`` through the condition of an inner
    ``ite`` was missed (``_may_be_bot`` looked at its branches only)."""
    b, bd, bx = tern_input(E.BOOL)          # may be ⊥
    p, q, t = Sym("p"), Sym("q"), Sym("t")
    c = ("ite", b, E.var(p, E.BOOL), E.var(q, E.BOOL))
    T = E.var(t)
    assert E.may_be_bot(c)
    built, raw = E.ite(c, T, T), ("ite", c, T, T)
    for env, _ in assignments([(E.BOOL, bd, bx)]):
        for pv, qv, tv in itertools.product(BOOLS, BOOLS, INTS):
            env.update({p: pv, q: qv, t: tv})
            assert E.eval3(built, env) == E.eval3(raw, env)
            assert decode(S.encode(built), env) == E.eval3(raw, env)
