"""The exact fast path of the coefficient solver (``_unique_solution``):
on every system it answers, its answer is the one z3 gives (the unique
solution), and it leaves every other system (several solutions, none, a
fractional one) to z3."""
from __future__ import annotations

import random

from exo_hl.unify import solve as _solve_fn  # noqa: F401 (loads the module)
import sys

SOLVE = sys.modules["exo_hl.unify.solve"]


def _rows(eqs, nb):
    """``_rows``' format for equations given as (terms, constants per
    column): one row per column, like ``solve.Equation``s give."""
    rows = []
    for terms, ks in eqs:
        for j in range(nb + 1):
            rows.append((j, terms, ks[j]))
    return tuple(rows)


def _random_system(rng, nu, nb, neq):
    eqs = []
    for _ in range(max(neq, 1)):
        us = rng.sample(range(nu), rng.randint(1, min(nu, 2)))
        terms = tuple((u, rng.choice([-3, -2, -1, 1, 1, 1, 2, 4]))
                      for u in sorted(us))
        ks = [rng.choice([0, 0, 0, 1, -1, 2, 4, -6]) for _ in range(nb + 1)]
        eqs.append((terms, ks))
    return _rows(eqs, nb)


def test_fast_path_agrees_with_z3_on_random_systems():
    rng = random.Random(31)
    answered = declined = 0
    for _ in range(70):
        nu, nb = rng.randint(1, 3), rng.randint(0, 2)
        rows = _random_system(rng, nu, nb, nu + rng.randint(-1, 1))
        fast = SOLVE._unique_solution(rows, nu, nb)
        for optimize in (True, False):
            z = SOLVE._solve_rows_z3(rows, nu, nb, (), optimize)
            if fast is not None:
                assert (fast if optimize else ()) == z, (rows, nu, nb)
        if fast is None:
            declined += 1
        else:
            answered += 1
    # both kinds occur, so both sides of the comparison were exercised
    assert answered > 10 and declined > 10, (answered, declined)


def test_fast_path_declines_what_it_cannot_decide():
    # u + w == 0: several solutions (z3 picks the simplest)
    assert SOLVE._unique_solution(_rows([(((0, 1), (1, 1)), [0])], 0),
                                  2, 0) is None
    # 2u == 1: no integer solution (z3 names the row)
    assert SOLVE._unique_solution(_rows([(((0, 2), ), [-1])], 0),
                                  1, 0) is None
    # u == 1 and u == 2: none at all
    assert SOLVE._unique_solution(
        _rows([(((0, 1), ), [-1]), (((0, 1), (0, 0)), [-2])], 0),
        1, 0) is None
    # u - 4*i - 2 == 0 (as rows over columns i, const): u = 4*i + 2
    assert SOLVE._unique_solution(_rows([(((0, 1), ), [-4, -2])], 1),
                                  1, 1) == ((2, ((0, 4), )), )
