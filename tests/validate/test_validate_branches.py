"""validate() on procedures with if/else branches.

A last writer is named by the constant positions of its time vector, and
a then branch's statements and an else branch's had the same ones (told
apart only by the branch level's value, 0 or 1): a write of the else
branch was read as the then branch's, so ``if i + 1 != i: y[i] = x[i]
else: y[i] = x[i] + x[i]`` was proven equal to the same with the
condition ``n < 0`` (the other branch, always). The else branch's
statements now come after the then branch's in the time positions, and a
piece naming more than one statement is unsupported.

The generator: random guards (comparisons of affine terms, ``/`` and
``%`` by constants, ``and``/``or``/``not``, an index argument) on a
then/else pair; the verdict may be proven only when interpret() agrees at
every size tried, refuted only when it does not.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

import exo_hl
from exo_hl.frontend.decorators import parse_proc_source

SCOPE = {n: getattr(exo_hl, n) for n in exo_hl.__all__}


def _atom(r):
    a = r.choice(["i", "n", "i + 1", "n - i", "2 * i", "i % 3", "i / 2",
                  "(i + n) % 4", "(n - 1) / 3", "k"])
    op = r.choice(["<", "<=", "==", "!=", ">", ">="])
    b = r.choice(["0", "1", "2", "3", "n / 2", "i", "n - 2", "k", "-1"])
    return f"{a} {op} {b}"


def _guard(r, d=2):
    if d == 0 or r.random() < 0.4:
        return _atom(r)
    c = r.choice(["and", "or", "not"])
    if c == "not":
        return f"not ({_guard(r, d - 1)})"
    return f"({_guard(r, d - 1)}) {c} ({_guard(r, d - 1)})"


def _src(name, g, orelse):
    tail = ("        else:\n            y[i] = x[i] + x[i]\n"
            if orelse else "")
    return (f"def {name}(n: size, k: index, x: f32[n], y: f32[n]):\n"
            f"    assert k <= 2 and k >= -2\n"
            f"    for i in seq(0, n):\n"
            f"        if {g}:\n            y[i] = x[i]\n{tail}")


def _differ(o, s):
    for n in range(1, 9):
        x = np.arange(1, n + 1, dtype=np.float32)
        for k in range(-2, 3):
            ys = []
            for p in (o, s):
                y = np.full(n, 7, np.float32)
                p.interpret(n=n, k=k, x=x, y=y)
                ys.append(y)
            if not np.array_equal(*ys):
                return True
    return False


def test_else_branch_write_not_taken_for_the_then_branch():
    o = parse_proc_source(_src("o", "i + 1 != i", True), SCOPE)
    s = parse_proc_source(_src("s", "n < 0", True), SCOPE)
    v = exo_hl.validate(o, s)
    assert v.refuted, v
    same = parse_proc_source(_src("s", "not (i + 1 == i)", True), SCOPE)
    assert exo_hl.validate(o, same).proven


@pytest.mark.parametrize("chunk", range(3))
def test_random_guards_verdicts_agree_with_interpret(chunk):
    seen = set()
    for seed in range(chunk * 15, chunk * 15 + 15):
        r = random.Random(seed)
        g1 = _guard(r)
        g2 = _guard(r) if r.random() < 0.7 else g1
        orelse = r.random() < 0.6
        o = parse_proc_source(_src("o", g1, orelse), SCOPE)
        s = parse_proc_source(_src("s", g2, orelse), SCOPE)
        v = exo_hl.validate(o, s)
        differ = _differ(o, s)
        seen.add((v.status, differ))
        assert not (differ and v.proven), (seed, g1, g2, orelse, v)
        assert not (v.refuted and not differ), (seed, g1, g2, orelse, v)
    assert ("proven", False) in seen


def test_negated_condition_mutants_refuted():
    """The mutation generator's ``negate`` kind (an if's branches swap):
    every such mutant of a procedure whose branches differ is refuted,
    with sources kept (so prophecies meet the swapped statements)."""
    from exo_hl.validate.mutate import mutate, sites

    @exo_hl.proc
    def alt(n: exo_hl.size, x: exo_hl.f32[n], y: exo_hl.f32[n]):
        for i in exo_hl.seq(0, n):
            if i % 2 == 0:
                y[i] = x[i] - 2.0
            else:
                y[i] = x[i] + 2.0
            if i < 1:
                y[i] = y[i] * 3.0
    negs = [x for x in sites(alt.ir()) if x[0] == "negate"]
    assert len(negs) == 2
    for site in negs:
        m = mutate(alt.ir(), site)
        v = exo_hl.validate(alt, m)
        assert v.refuted, (site, v)
