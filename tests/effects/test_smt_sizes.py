"""``smt._is_small`` counts an effect expression by its shape
(``_ee_count``) instead of walking it object by object: the same count
(objects of the tree), the same answer, and a shared DAG with a huge tree
stops at the budget."""
from __future__ import annotations

import random
import time

from exo_hl.core_ir.syms import Sym
from exo_hl.effects import eexpr as E
from exo_hl.effects import smt as S


def _tree_count(t, cap=S._SMALL_NODES + 1):
    n, stack = 0, [t]
    while stack:
        x = stack.pop()
        n += 1
        if n >= cap:
            return cap
        if isinstance(x, tuple):
            stack.extend(x)
    return n


def _random_ee(rng, syms, depth):
    r = rng.random()
    if depth == 0 or r < 0.25:
        return (E.var(rng.choice(syms)) if rng.random() < 0.6
                else E.const(rng.randint(-9, 9)))
    if r < 0.3:
        return E.bot()
    if r < 0.4:
        return ("ite", _random_ee(rng, syms, depth - 1),
                _random_ee(rng, syms, depth - 1),
                _random_ee(rng, syms, depth - 1))
    if r < 0.45:
        return ("op", "neg", _random_ee(rng, syms, depth - 1))
    return ("op", rng.choice(("+", "-", "*", "<", "==", "and")),
            _random_ee(rng, syms, depth - 1), _random_ee(rng, syms, depth - 1))


def test_shape_count_is_the_tree_count():
    rng = random.Random(7)
    syms = [Sym(n) for n in "ijkn"]
    seen = set()
    for _ in range(3000):
        e = _random_ee(rng, syms, rng.randint(0, 6))
        n = _tree_count(e)
        assert S._is_small(e) == (n <= S._SMALL_NODES), e
        assert S._SIZES[id(e)][1] == min(n, S._SMALL_NODES + 1)
        seen.add(n <= S._SMALL_NODES)
    assert seen == {True, False}
    # a shape not counted here goes to the generic walk
    odd = ("op", "+", ("var", ("tuple", "key"), "int"), E.const(1))
    assert S._is_small(odd) == (_tree_count(odd) <= S._SMALL_NODES)


def test_shared_dag_stops_at_the_budget():
    e = E.var(Sym("i"))
    for _ in range(200):          # 2**200 objects as a tree
        e = ("op", "+", e, e)
    t0 = time.time()
    assert not S._is_small(e)
    assert time.time() - t0 < 1.0
