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
    with pytest.raises(SchedulingError,
                       match=r"cannot prove \(i < n\) == \(i < 3\)"):
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


@proc
def scaled_read(N: size, x: f32[2 * N + 2], y: f32[N]):
    for j in seq(0, N):
        y[j] = x[2 * j]


def test_rewrite_keeps_control_arithmetic_quasi_affine():
    """'2' of '2 * j' rewritten to the equal '2 + N - N' gave x[(2 + N -
    N) * j], which the frontend refuses: the result did not parse back."""
    with pytest.raises(SchedulingError, match="not quasi-affine"):
        scaled_read.rewrite_expr(scaled_read.find('2 * j').lhs(),
                                 '2 + N - N')


@proc
def short_loop(N: size, x: f32[N + 4]):
    for i in seq(0, 4):
        x[i] = 1.0


def test_rewritten_sub_expressions_are_typed_as_parsed(assert_roundtrip):
    """'(4) % 1000' then its '4' -> '2 * 2': the '%' kept the int type of
    literal-on-literal where the parser types 2 * 2 % 1000 an index, and
    the reparsed procedure was not equal."""
    p = short_loop.rewrite_expr(short_loop.find_loop('i').hi(), '(4) % 1000')
    p = p.rewrite_expr(p.find_loop('i').hi().lhs(), '2 * 2')
    assert "for i in seq(0, 2 * 2 % 1000):" in str(p)
    assert_roundtrip(p)
