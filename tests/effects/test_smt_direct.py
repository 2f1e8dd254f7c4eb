"""``smt.to_z3``: a query without quantifiers is built in z3 straight from
its canonical key, reusing the z3 terms of earlier queries by structure.
It must be the very z3 term the pysmt route builds (so no answer can
change), also when earlier queries share parts of it or the remembered
terms were dropped, and a query with a quantifier must take the pysmt
route (``to_z3`` gives None)."""
from __future__ import annotations

import random

from exo_hl import caches
from exo_hl.effects import smt as S


def _random_term(rng, depth):
    """A random Boolean term of the solver's language without quantifiers:
    comparisons of linear forms over a few variables, ``/`` and ``%`` by
    constants (shared between atoms), ``ite`` and products, connectives."""
    xs = [S.lvar(("v", k)) for k in range(4)]

    def lin(d):
        r = rng.random()
        if d == 0 or r < 0.3:
            return S.ladd(S.lscale(rng.choice(xs), rng.randint(-3, 3)),
                          S.lconst(rng.randint(-5, 5)))
        if r < 0.45:
            return S.ldiv(lin(d - 1), rng.randint(2, 5))
        if r < 0.6:
            return S.lmod(lin(d - 1), rng.randint(2, 5))
        if r < 0.7:
            return S.lite(boolean(d - 1), lin(d - 1), lin(d - 1))
        if r < 0.75:
            return S.lmul(lin(d - 1), lin(d - 1))
        return S.ladd(lin(d - 1), lin(d - 1), rng.choice((1, -1)))

    def boolean(d):
        r = rng.random()
        if d == 0 or r < 0.35:
            return S.bcmp(rng.choice(("<", "<=", ">", ">=", "==")),
                          lin(d), lin(d))
        if r < 0.45:
            return S.bnot(boolean(d - 1))
        if r < 0.5:
            return ("bv", ("b", rng.randint(0, 1)))
        parts = [boolean(d - 1) for _ in range(rng.randint(2, 3))]
        return S.band(*parts) if r < 0.75 else S.bor(*parts)

    return boolean(depth)


def test_direct_term_is_the_pysmt_term_and_answers_alike():
    rng = random.Random(31)
    conv = S._BACKEND.converter()
    built = 0
    for n in range(80):
        if n == 40:     # the z3 terms remembered by structure dropped
            caches.clear_all()
        t = _random_term(rng, 3)
        if t is True or t is False:
            continue
        key, _ = S.canonical_key(t)
        direct, syms = S.to_z3(key)
        names = syms()
        f, pnames = S.to_pysmt(S.canonical_term(key))
        assert direct.eq(conv.convert(f)), t
        assert set(names) == set(pnames)
        for ks, z in names.items():
            assert z.eq(conv.convert(pnames[ks]))
        # and the solver's answer is the pysmt route's (z3's models of one
        # term vary with what the context did before: a model must only
        # satisfy the term)
        ct = S.canonical_term(key)
        res, model = S.Solver()._solve(ct, key)
        assert res == S.Solver()._solve(ct)[0]
        if res == "sat":
            assert S.eval_term(ct, model) is True
        built += 1
    assert built > 50


def test_quantified_query_takes_the_pysmt_route():
    body = S.bcmp("<", S.lvar(("c", 0)), S.lvar(("c", 1)))
    t = S.band(S.bforall(((("c", 0), "int"), ), body),
               S.bcmp("<", S.lvar(("c", 1)), S.lconst(3)))
    key, _ = S.canonical_key(t)
    assert S.to_z3(key) is None
    ct = S.canonical_term(key)
    assert S.Solver()._solve(ct, key)[0] == S.Solver()._solve(ct)[0] == \
        "unsat"
