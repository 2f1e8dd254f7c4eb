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
