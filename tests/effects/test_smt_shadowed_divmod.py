"""A variable free in a query and bound by a quantifier inside it: the
SMT translation must not reuse, under the quantifier, the ``/`` or ``%``
of the free variable it made outside (canonical renaming keeps both as
one variable; the outer quotient and remainder stand for the free one)."""
from exo_hl.core_ir.syms import Sym
from exo_hl.effects import checks as C
from exo_hl.effects import eexpr as E
from exo_hl.effects import smt as S


def test_mod_of_a_variable_free_outside_and_bound_inside():
    k, n = Sym("k"), Sym("n")
    body = E.op("<", E.op("%", E.var(k), E.const(2)), E.var(n))
    # (∃k. k % 2 < n) does not imply k % 2 < n: k = 1, n = 1
    assert E.eval3(E.exists(k, body), {k: 1, n: 1}) is True
    assert E.eval3(body, {k: 1, n: 1}) is False
    r = C.prove(body, [E.exists(k, body)])
    assert not r
    assert r.model is not None


def test_div_under_forall_is_not_the_free_one():
    k, n = Sym("k"), Sym("n")
    q = E.op("/", E.var(k), E.const(3))
    # k / 3 == n and ∀k. k / 3 == n is false: the query is satisfiable only
    # if the quotient under ∀ were the one of the free k
    t = S.band(S.collapse_D(E.eq(q, E.var(n))),
               S.collapse_D(E.forall(k, E.eq(q, E.var(n)))))
    assert S.Solver().check(t)[0] == "unsat"
    t = S.band(S.collapse_D(E.eq(q, E.var(n))),
               S.bnot(S.collapse_D(E.forall(k, E.eq(q, E.var(n))))))
    assert S.Solver().check(t)[0] == "sat"
    # the reverse: k / 3 == n, yet not for every k, is satisfiable
    r = C.prove(E.op("<", q, E.var(n)), [E.exists(k, E.op("<", q, E.var(n)))])
    assert not r
