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


# ---------------------------------------------------------------------------
# every row of the table, through every consumer

from exo_hl.core_ir import build as B                       # noqa: E402
from exo_hl.core_ir.operators import (OPERATORS, C_SPELLING,  # noqa: E402
                                      is_parallel)
from exo_hl.core_ir.traversal import walk                   # noqa: E402
from exo_hl.effects.api import prove                        # noqa: E402
from exo_hl.frontend.decorators import parse_proc_source    # noqa: E402

import numpy as np                                          # noqa: E402

_GRID = [(n, m) for n in (1, 2, 3, 5, 7) for m in (1, 2, 4, 6)]


def _operand_text(o):
    """A condition on sizes ``n`` and ``m`` whose root (or, for arithmetic,
    left operand of the root) is the operator ``o``."""
    if o.kind == "arith":
        return f"n {o.op} 3", f"n {o.op} 3 < m"
    if o.kind == "cmp":
        return f"n {o.op} m", f"n {o.op} m"
    return f"n < 3 {o.op} m > 3", f"n < 3 {o.op} m > 3"


def _py_value(cond, n, m):
    # Python's own reading of the source: '/' floors on control values
    return bool(eval(cond.replace("/", "//"), {}, {"n": n, "m": m}))


def _op_proc(o):
    _, cond = _operand_text(o)
    data = (f"    z[0] = x[0] {o.op} x[1]\n" if o.kind == "arith" else "")
    src = (f"def op_check(n: size, m: size, x: f32[2], y: f32[1], "
           f"z: f32[1]):\n"
           f"    if {cond}:\n"
           f"        y[0] = 1.0\n"
           f"    else:\n"
           f"        y[0] = 2.0\n" + data)
    return parse_proc_source(src, {}, "op_check.py")


@pytest.mark.parametrize("o", OPERATORS, ids=lambda o: o.op)
def test_every_operator_parses_prints_matches_runs_and_proves(o):
    p = _op_proc(o)
    sub, cond = _operand_text(o)
    # parses to the table's IR spelling
    ops = {e.op for e in walk(p.ir()) if isinstance(e, IR.BinOp)}
    assert o.op in ops
    # prints, and the print reads back to the same procedure text
    text = str(p)
    assert f" {o.op} " in text
    assert str(parse_proc_source(text, {}, "again.py")) == text
    # the pattern matcher finds it
    assert p.find(sub) is not None
    # the interpreter and the compiled C agree with Python on every point,
    # on control values and (arithmetic) on data
    f = p.compile()
    x = np.array([7.0, 2.0], dtype=np.float32)
    want_z = {"+": 9.0, "-": 5.0, "*": 14.0, "/": 3.5, "%": 1.0}
    for n, m in _GRID:
        want = 1.0 if _py_value(cond, n, m) else 2.0
        for run in (p.interpret, f):
            y = np.zeros(1, dtype=np.float32)
            z = np.zeros(1, dtype=np.float32)
            run(n, m, x.copy(), y, z)
            assert y[0] == want, (o.op, n, m, run)
            if o.kind == "arith":
                assert z[0] == want_z[o.op], (o.op, run)
    # the C text spells it the C way
    from exo_hl import compile_procs
    import tempfile, pathlib
    with tempfile.TemporaryDirectory() as d:
        compile_procs([p], d, "op_check_k")
        c_text = (pathlib.Path(d) / "op_check_k.c").read_text()
    assert f" {C_SPELLING[o.op]} " in c_text or \
        o.op in ("/", "%")  # floor helpers or a plain C operator
    # the SMT translation decides it: at each point the condition has the
    # value Python gives it, and not the other one
    if_s = p.ir().body[0]
    n_sym, m_sym = p.ir().args[0].name, p.ir().args[1].name
    for n, m in _GRID[::3]:
        at = B.conj([B.cmp("==", B.index_read(n_sym), B.const(n)),
                     B.cmp("==", B.index_read(m_sym), B.const(m))])
        val = _py_value(cond, n, m)
        holds = if_s.cond if val else IR.Not(if_s.cond, type=IR.Bool)
        fails = IR.Not(holds, type=IR.Bool)
        implies = (lambda a, b: IR.BinOp("or", IR.Not(a, type=IR.Bool), b,
                                         type=IR.Bool))
        assert prove(implies(at, holds)).ok, (o.op, n, m)
        assert not prove(implies(at, fails)).ok, (o.op, n, m)


def test_loop_kinds_parse_print_and_say_whether_parallel():
    for name, mode in LOOP_KINDS.items():
        src = (f"def lk(n: size, x: f32[n]):\n"
               f"    for i in {name}(0, n):\n"
               f"        x[i] = 0.0\n")
        p = parse_proc_source(src, {}, "lk.py")
        assert p.ir().body[0].mode == mode
        assert f"for i in {name}(0, n):" in str(p)
    assert is_parallel(IR.Par) and not is_parallel(IR.Seq)
