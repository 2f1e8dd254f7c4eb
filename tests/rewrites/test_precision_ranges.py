"""``_precision.int_range`` bounds the value an integer expression
computes (docs/semantics.md: i32 arithmetic, literals converted to i32,
truncating division, ``x / 0 == 0``, ``x % 0 == x``), checked against
every value of an ``i8`` and a ``ui8`` operand on random expressions."""
from __future__ import annotations

import random

from exo_hl.core_ir import datasem as D
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.syms import Sym
from exo_hl.rewrites._precision import int_range

X, Y = Sym("x"), Sym("y")
LITS = (0, 1, 2, 3, 6, -4, 0.5, 1.5, 6.0, -2.5, 100, 70000, 1e10)


def _rand_expr(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        k = rng.random()
        if k < 0.35:
            return IR.Read(X, (), type=IR.I8)
        if k < 0.6:
            return IR.Read(Y, (), type=IR.UI8)
        return IR.Const(rng.choice(LITS), type=IR.Num)
    if rng.random() < 0.1:
        a = _rand_expr(rng, depth - 1)
        return IR.USub(a, type=a.type)
    op = rng.choice(["+", "-", "*", "/", "/", "%"])
    a, b = _rand_expr(rng, depth - 1), _rand_expr(rng, depth - 1)
    return IR.BinOp(op, a, b, type=IR.I32)


def _value(e, x, y):
    """``e`` computed in i32, as the interpreter does."""
    if isinstance(e, IR.Const):
        return D.literal(e.val, IR.I32)
    if isinstance(e, IR.Read):
        return x if e.name == X else y
    if isinstance(e, IR.USub):
        return D.neg(_value(e.arg, x, y), IR.I32)
    return D.binop(e.op, _value(e.lhs, x, y), _value(e.rhs, x, y), IR.I32)


def _has_read(e):
    if isinstance(e, IR.Read):
        return True
    if isinstance(e, IR.USub):
        return _has_read(e.arg)
    if isinstance(e, IR.BinOp):
        return _has_read(e.lhs) or _has_read(e.rhs)
    return False


def test_int_range_contains_every_computed_value():
    rng = random.Random(7)
    xs = list(range(-128, 128, 9)) + [-128, 127]
    ys = list(range(0, 256, 13)) + [255]
    checked = bounded = 0
    while checked < 200:
        e = _rand_expr(rng, 4)
        if not _has_read(e):
            continue
        checked += 1
        r = int_range(e)
        if r is None:
            continue
        bounded += 1
        for x in xs:
            for y in ys:
                v = _value(e, x, y)
                if D.I32_MIN <= r[0] and r[1] <= D.I32_MAX:
                    assert r[0] <= v <= r[1], (e, x, y, v, r)
                else:   # an exact range leaving i32 bounds v mod 2^32
                    assert (v - r[0]) % 2**32 <= r[1] - r[0] or \
                        r[1] - r[0] >= 2**32, (e, x, y, v, r)
    assert bounded > 60


def test_int_range_division_by_a_literal():
    x = IR.Read(X, (), type=IR.I8)
    s = IR.BinOp("+", x, x, type=IR.I32)
    assert int_range(IR.BinOp("/", s, IR.Const(2.0, type=IR.Num),
                              type=IR.I32)) == (-128, 127)
    assert int_range(IR.BinOp("/", s, IR.Const(2.5, type=IR.Num),
                              type=IR.I32)) == (-128, 127)
    assert int_range(IR.BinOp("/", s, IR.Const(0.5, type=IR.Num),
                              type=IR.I32)) == (0, 0)
    assert int_range(IR.BinOp("%", s, IR.Const(0.5, type=IR.Num),
                              type=IR.I32)) == (-256, 254)      # x % 0 == x


def test_int_range_remainder_of_a_wrapped_product():
    # y * 70000 * 70000 >= 0 exactly, but wraps negative in i32: its
    # remainder by 100 can be negative
    y = IR.Read(Y, (), type=IR.UI8)
    big = IR.Const(70000, type=IR.Num)
    prod = IR.BinOp("*", IR.BinOp("*", y, big, type=IR.I32), big,
                    type=IR.I32)
    e = IR.BinOp("%", prod, IR.Const(100, type=IR.Num), type=IR.I32)
    lo, hi = int_range(e)
    vals = {_value(e, 0, v) for v in range(256)}
    assert min(vals) < 0 and lo <= min(vals) and max(vals) <= hi <= 99
