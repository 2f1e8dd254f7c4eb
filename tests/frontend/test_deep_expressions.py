"""Expressions of thousands of terms (three times Python's default
recursion limit, which a chain of that length would exceed if it were not
grouped): parsed iteratively and grouped pairwise (docs/semantics.md), so
printing, emission, the effect analysis, the interpreter and scheduling all
handle them; what is still too deep is a located error, never a
RecursionError."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import ExoTypeError, MemGenError, f32, proc, seq, size
from exo_hl.codegen_c.emit import c_code_str
from exo_hl.core_ir.nodes import IR
from exo_hl.frontend.decorators import parse_proc_source
from exo_hl.frontend.parser import expr_depth

N = 3_000


def _deep_source(n):
    data = " + ".join(f"y[{i % 7}]" for i in range(n))
    ctrl = " + ".join("m" for _ in range(n))
    conj = " and ".join("m > 0" for _ in range(n))
    return f"""
def deep(m: size, x: f32[2], y: f32[7]):
    assert {ctrl} > 0
    assert {conj}
    x[0] = {data}
    for i in seq(0, {ctrl} - {n - 1} * m):
        x[1] += y[i % 7]
"""


def test_thousands_of_terms_everywhere():
    p = parse_proc_source(_deep_source(N), {})
    ir = p.ir()
    rhs = ir.body[0].rhs
    assert expr_depth(rhs) <= 16 and expr_depth(ir.preds[0]) <= 17
    # printing round-trips
    text = str(p)
    q = parse_proc_source(text, {})
    assert str(q) == text
    # C
    code = p.c_code_str()
    assert code.count("y[") >= N
    # interpreter and compiled C agree with the exact value
    y = np.arange(1, 8, dtype=np.float32)
    want0 = float(sum(y[i % 7] for i in range(N)))
    x = np.zeros(2, np.float32)
    p.interpret(m=3, x=x, y=y)
    assert x[0] == want0 and x[1] == y[:3].sum()
    x2 = np.zeros(2, np.float32)
    p.compile()(3, x2, y)
    np.testing.assert_array_equal(x, x2)
    # a scheduling call (effect analysis, SMT) on it
    s = p.split(p.find_loop("i"), 2, "io", "ii", tail="guard")
    x3 = np.zeros(2, np.float32)
    s.interpret(m=3, x=x3, y=y)
    np.testing.assert_array_equal(x, x3)


@proc
def long_sum(x: f32[1], y: f32[4]):
    x[0] = y[0] + y[1] + y[2] + y[3] + y[0] + y[1] + y[2] + y[3] + y[0] + \
        y[1] + y[2] + y[3] + y[0] + y[1] + y[2] + y[3] + y[0] + y[1] + \
        y[2] + y[3] + y[0] + y[1] + y[2] + y[3] + y[0] + y[1] + y[2] + \
        y[3] + y[0] + y[1] + y[2] + y[3] + y[0] + y[1] + y[2] + y[3]


@proc
def short_sum(x: f32[1], y: f32[4]):
    x[0] = y[0] + y[1] + y[2] + y[3]


def test_long_runs_are_grouped_short_ones_are_not():
    assert expr_depth(short_sum.ir().body[0].rhs) == 5   # left to right
    assert expr_depth(long_sum.ir().body[0].rhs) <= 8    # 36 terms
    assert "x[0] = y[0] + y[1] + y[2] + y[3]" in str(short_sum)
    y = np.array([1, 2, 3, 4], np.float32)
    x = np.zeros(1, np.float32)
    long_sum.interpret(x=x, y=y)
    assert x[0] == 90


def test_too_deep_is_a_located_error():
    neg = "-" * 300
    src = f"""
def negs(x: f32[2]):
    x[0] = {neg}x[1]
"""
    with pytest.raises(ExoTypeError) as e:
        parse_proc_source(src, {}, "negs.py")
    msg = str(e.value)
    assert msg.startswith("negs.py:3: in procedure 'negs': ")
    assert "nested" in msg and "intermediate variables" in msg


def test_backend_refuses_hand_built_deep_ir():
    @proc
    def one(x: f32[2]):
        x[0] = x[1]

    ir = one.ir()
    s = ir.body[0]
    e = s.rhs
    for _ in range(5000):
        e = IR.BinOp("+", e, s.rhs, type=IR.F32, srcinfo=s.srcinfo)
    deep = ir.update(body=(s.update(rhs=e), ))
    with pytest.raises(MemGenError) as err:
        c_code_str([deep])
    assert "nested too deeply" in str(err.value)
    assert "in procedure 'one'" in str(err.value)
