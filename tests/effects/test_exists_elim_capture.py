"""The one-point rule of ``exists_elim`` must not substitute a solution
into the scope of a quantifier that binds one of the solution's variables
(``tsubst`` does not rename bound variables apart)."""
from exo_hl.core_ir.syms import Sym
from exo_hl.effects import checks as C
from exo_hl.effects import eexpr as E
from exo_hl.effects import smt as S
from exo_hl.effects.effects import Term


def test_exists_elim_does_not_capture():
    x, k = Sym("x"), Sym("k")
    diff = S.ladd(S.lvar(x), S.lvar(k), -1)          # x - k
    # ∃x. x == k ∧ (∀k. x <= k): false over the integers
    body = S.band(S.beq0(diff),
                  S.bforall(((k, E.INT), ), S.ble0(diff)))
    assert S.solver().check(S.bexists(((x, E.INT), ), body))[0] == "unsat"
    t = S.exists_elim((x, ), body, [diff])
    assert S.solver().check(t)[0] == "unsat", t


def test_definite_membership_with_quantified_condition():
    # D (k) ∈ ⋃_b filter(∀k. b <= k, {A, b}) is false for every k, so
    # "k is definitely in it" must not be provable
    b, k = Sym("b"), Sym("k")
    cond = E.forall(k, E.op("<=", E.var(b), E.var(k)))
    t = Term("A", (E.var(b), ), cond, (b, ), ())
    m = C.mem_term("D", "A", (E.var(k), ), t, {})
    assert S.solver().check(S.bnot(m))[0] == "sat", m
