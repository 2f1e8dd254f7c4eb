"""Operators and loop kinds come from one table (``core_ir.operators``):
what a procedure may contain is what a pattern may name."""
from __future__ import annotations

import pytest

from exo_hl import ExoSyntaxError, SchedulingError, f32, proc, seq, size
from exo_hl.core_ir.operators import (ARITH_OPS, BOOL_OPS, CMP_OPS,
                                      LOOP_KINDS, PY_ARITH, loop_kind_name)
from exo_hl.core_ir.nodes import IR


@proc
def ops(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if i % 2 == 0 and i < n - 1:
            x[i] = y[(i * 3 + 1) / 4] - y[i]


def test_every_arithmetic_op_of_a_procedure_can_be_found_by_a_pattern():
    for text in ("i % 2", "i * 3", "i * 3 + 1", "(i * 3 + 1) / 4",
                 "y[_] - y[_]", "i % 2 == 0", "i < n - 1",
                 "i % 2 == 0 and i < n - 1"):
        assert ops.find(text) is not None, text


def test_floor_division_is_not_an_operator_anywhere():
    assert "//" not in ARITH_OPS
    with pytest.raises(ExoSyntaxError, match="unsupported operator"):
        @proc
        def fdiv(n: size, x: f32[n]):
            for i in seq(0, n):
                x[i // 2] = 0.0
    # the pattern matcher reads the same table: '//' matches nothing
    with pytest.raises(SchedulingError):
        ops.find("(i * 3 + 1) // 4")


def test_tables_are_disjoint_and_loop_kinds_round_trip():
    assert not (ARITH_OPS & CMP_OPS) and not (CMP_OPS & BOOL_OPS)
    assert set(PY_ARITH.values()) == ARITH_OPS
    for name, mode in LOOP_KINDS.items():
        assert loop_kind_name(mode) == name
    assert LOOP_KINDS["par"] is IR.Par
    assert "for i in seq(0, n):" in str(ops)
