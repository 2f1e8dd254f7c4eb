"""Canonical renaming of solver queries (the cache key): variables renamed
in first-occurrence order, and a term with shared sub-terms walked once per
distinct sub-term, not once per path to it."""
from __future__ import annotations

import time

from exo_hl.effects.smt import canonicalize


def _lt(a, b):   # a - b + 1 <= 0
    return ("le0", ("lin", 1, ((("iv", a), 1), (("iv", b), -1))))


def test_renaming_in_first_occurrence_order():
    t = ("and", (_lt("y", "x"), _lt("x", "z")))
    ct, back = canonicalize(t)
    assert ct == ("and", (_lt(("c", 0), ("c", 1)), _lt(("c", 1), ("c", 2))))
    assert back == {("c", 0): "y", ("c", 1): "x", ("c", 2): "z"}
    u = ("and", (_lt("b", "a"), _lt("a", "q")))
    assert canonicalize(u)[0] == ct       # equal up to renaming: same key


def test_shared_subterms_are_walked_once():
    t = _lt("i", "n")
    for _ in range(80):                   # 2**80 paths, 80 distinct nodes
        t = ("or", (("not", t), t))
    t0 = time.time()
    ct, back = canonicalize(t)
    assert time.time() - t0 < 2.0
    assert back == {("c", 0): "i", ("c", 1): "n"}
    leaf = ct
    for _ in range(80):
        assert leaf[0] == "or" and leaf[1][0] == ("not", leaf[1][1])
        leaf = leaf[1][1]
    assert leaf == _lt(("c", 0), ("c", 1))


def _dag(depth, a="i", b="n"):
    """A term with 2**depth paths and about 2*depth distinct nodes."""
    t = _lt(a, b)
    for _ in range(depth):
        t = ("or", (("not", t), t))
    return t


def test_key_is_structural_and_flat():
    from exo_hl.effects.smt import canonical_key, canonical_term
    t0 = time.time()
    key, back = canonical_key(_dag(80))
    assert time.time() - t0 < 2.0
    assert back == {("c", 0): "i", ("c", 1): "n"}
    # the same structure without the sharing, and with other names
    assert canonical_key(_dag(6, "p", "q"))[0] == \
        canonical_key(_unshared(_dag(6)))[0]
    assert canonical_key(_dag(6))[0] != canonical_key(_dag(7))[0]
    assert canonical_key(_lt("i", "n"))[0] != canonical_key(_lt("n", "n"))[0]
    # the key describes the canonical term, with equal sub-terms shared
    ct = canonical_term(canonical_key(_dag(6))[0])
    assert ct == canonicalize(_unshared(_dag(6)))[0]
    assert ct[1][0][1] is ct[1][1]


def _unshared(t):
    """A copy of ``t`` in which no two positions hold the same object."""
    if isinstance(t, tuple):
        return tuple(_unshared(x) for x in t)
    return t


def test_solver_and_free_keys_on_a_shared_term():
    from exo_hl.effects.smt import Solver, term_keys
    t = ("and", (_dag(60), _lt("n", "i")))   # i < n  or  not(i < n): any
    t0 = time.time()
    assert term_keys(t) == {"i": "int", "n": "int"}
    s = Solver()
    res, model = s.check(t)
    assert res == "sat" and model["n"] < model["i"]
    assert s.check(("and", (_dag(60), _lt("n", "i"))))[0] == "sat"
    assert s.stats.cache_hits == 1
    assert time.time() - t0 < 10.0


def test_a_formula_too_large_to_translate_is_unknown(monkeypatch):
    """A shared sub-term is translated once per quantifier scope it is used
    in: quantifiers nested around shared terms can need exponentially many
    translations (a configwrite_at on a tiled, parallelized nest did not
    return in ten minutes). Past TRANSLATE_BUDGET the query is 'unknown',
    which proves nothing; here with a budget of 5."""
    from exo_hl.effects import smt
    t = ("and", (_dag(8), _lt("n", "i")))
    assert smt.Solver().check(t)[0] == "sat"
    monkeypatch.setattr(smt, "TRANSLATE_BUDGET", 5)
    s = smt.Solver()
    res, model = s.check(t)
    assert res == "unknown" and model is None and s.stats.unknown == 1
