"""Fragments of surface syntax parsed at a position of a procedure."""
from __future__ import annotations

import pytest

from exo_hl import ExoTypeError, f32, proc, seq, size
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.printer import expr_to_str
from exo_hl.frontend import fragment as F


@proc
def prog(n: size, x: f32[n, 8]):
    for i in seq(0, n):
        t: f32[8]
        for j in seq(0, 8):
            t[j] = x[i, j]


def _names_in_inner_loop():
    ir = prog.ir()
    # before the statement at body[0].body[1] (the j loop): n, x, i, t
    return ir, F.names_at(ir, (("body", 0), ), "body", 1)


def test_names_visible_at_a_position():
    ir, names = _names_in_inner_loop()
    assert set(names) == {"n", "x", "i", "t"}
    assert names["i"][1] is IR.Index
    # at the top of the procedure only the arguments are visible
    assert set(F.names_at(ir, (), "body", 0)) == {"n", "x"}


def test_expression_and_window_use_the_procedures_symbols():
    ir, names = _names_in_inner_loop()
    e = F.parse_expr(ir, "i + 1", names)
    assert isinstance(e, IR.BinOp) and e.lhs.name is names["i"][0]
    w = F.parse_expr(ir, "x[i, 2:6]", names, allow_window=True)
    assert isinstance(w, IR.WindowExpr) and w.name is ir.args[1].name
    assert expr_to_str(w) == "x[i, 2:6]"
    # without allow_window a slice is not an expression
    with pytest.raises((SyntaxError, TypeError, ValueError)):
        F.parse_expr(ir, "x[i, 2:6]", names)


def test_condition_must_be_control_and_bool():
    ir, names = _names_in_inner_loop()
    c = F.parse_condition(ir, "i < n - 1", names, "the condition")
    assert c.type is IR.Bool
    with pytest.raises(ExoTypeError, match="control"):
        F.parse_condition(ir, "x[i, 0] < 1.0", names, "the condition")
    with pytest.raises(ExoTypeError, match="not defined"):
        F.parse_expr(ir, "j + 1", names)   # j is bound later
    with pytest.raises(SyntaxError):
        F.parse_text("i +")
