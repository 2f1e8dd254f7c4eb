"""ite(c, t, t) folds to t only when c cannot be ⊥, and c is ⊥ not only
through a ⊥ leaf: a / or % by zero (a zero constant, or a divisor that may
be zero) is ⊥ too (``eval3``)."""
from exo_hl.core_ir.syms import Sym
from exo_hl.effects import eexpr as E
from exo_hl.effects import smt as S


def _check(raw, envs, smt_exact=True):
    # the encoding makes / and % by a non-constant ⊥ (sound, imprecise)
    built = E.ite(*raw[1:])
    for env in envs:
        want = E.eval3(raw, env)
        assert E.eval3(built, env) == want, (E.to_str(built), env, want)
        v, d = S.encode(built)
        got = S.eval_term(v, env) if S.eval_term(d, env) else None
        assert got == want or (got is None and not smt_exact), (
            E.to_str(built), env, got, want)


def test_ite_same_branches_condition_divides_by_zero_constant():
    x, y = Sym("x"), Sym("y")
    # (True if (y / 0) < x else True) is ⊥ everywhere, not True
    c = E.op("<", E.op("/", E.var(y), E.const(0)), E.var(x))
    raw = ("ite", c, E.TRUE, E.TRUE)
    assert E.ite(*raw[1:]) != E.TRUE
    _check(raw, [{x: a, y: b} for a in (-1, 0, 2) for b in (-2, 0, 3)])


def test_ite_same_branches_condition_divides_by_variable():
    x, y = Sym("x"), Sym("y")
    # (x if (x % y) < 1 else x) is ⊥ where y == 0
    c = E.op("<", E.op("%", E.var(x), E.var(y)), E.const(1))
    raw = ("ite", c, E.var(x), E.var(x))
    assert E.eval3(raw, {x: 1, y: 0}) is None
    _check(raw, [{x: a, y: b} for a in (-1, 0, 2) for b in (-2, 0, 3)],
           smt_exact=False)


def test_ite_same_branches_still_folds_for_nonzero_divisor():
    x = Sym("x")
    for k in (2, -3):
        c = E.op("<", E.op("/", E.var(x), E.const(k)), E.const(1))
        assert E.ite(c, E.var(x), E.var(x)) == E.var(x)
