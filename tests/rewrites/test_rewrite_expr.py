"""rewrite_expr(expr, new_expr): printed result, semantics, rejected cases;
expression cursors (lhs, rhs, args, parent) as targets."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def blocks(n: size, x: f32[n], y: f32[n]):
    assert n % 4 == 0
    for i in seq(0, n):
        if i < n and 0 <= i:
            y[i] = x[i] * 2.0 + y[i]


def test_rewrite_expr(equiv):
    q = blocks.rewrite_expr(blocks.find_loop("i").hi(), "4 * (n / 4)")
    q = q.rewrite_expr("i < n and 0 <= i", "True")
    assert str(q).rstrip() == """\
def blocks(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 4 == 0
    for i in seq(0, 4 * (n / 4)):
        if True:
            y[i] = x[i] * 2.0 + y[i]"""
    equiv(blocks, q, [{"n": 4}, {"n": 8}])


def test_rewrite_expr_index_in_context(equiv):
    @proc
    def mod(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            if i < 4:
                y[i % 4] = x[i]
    q = mod.rewrite_expr("i % 4", "i")
    assert str(q).splitlines()[-1] == "            y[i] = x[i]"
    equiv(mod, q, [{"n": 2}, {"n": 6}])


def test_rewrite_expr_rejects_unequal_and_data():
    with pytest.raises(SchedulingError, match="cannot prove n == n - 1"):
        blocks.rewrite_expr(blocks.find_loop("i").hi(), "n - 1")
    with pytest.raises(SchedulingError, match="cannot prove"):
        blocks.rewrite_expr("i < n", "i < 3")
    with pytest.raises(SchedulingError, match="not a control expression"):
        blocks.rewrite_expr("x[_] * 2.0", "2.0 * x[i]")
    with pytest.raises(SchedulingError, match="cannot replace"):
        blocks.rewrite_expr("i < n", "1")


def test_expression_cursors_navigate_and_target():
    c = blocks.find("x[i] * 2.0 + y[i]")
    assert str(c.lhs().node().op) == "*"
    assert [a.name() for a in c.lhs().args()] == ["x", None]
    assert c.lhs().lhs().name() == "x"
    assert c.rhs().name() == "y"
    assert c.lhs().parent() == c
    assert c.parent() == c.stmt()
    assert [a.node().name.name for a in c.rhs().args()] == ["i"]
    with pytest.raises(SchedulingError, match="has no left operand"):
        c.rhs().lhs()
    q = blocks.commute_expr(c.lhs())
    assert "y[i] = 2.0 * x[i] + y[i]" in str(q)
    # a cursor of the receiver's ancestor is forwarded
    q2 = q.commute_expr(c)
    assert "y[i] = y[i] + 2.0 * x[i]" in str(q2)
