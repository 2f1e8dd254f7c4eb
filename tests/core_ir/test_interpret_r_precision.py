"""A procedure's ``R`` is f32 in ``interpret()`` as in C: a call passing
another precision for an ``R`` parameter is refused by both (audit 15a).

Run at the caller's precision, the callee's ``R`` locals stayed f32, so a
rewrite proven for ``R = f32`` (``stage_mem`` into an ``R`` buffer, then
``call_eqv``) changed what ``interpret()`` computed while C refused the
program. Instructions stay generic (their bodies take any element type).
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import R, f32, f64, instr, proc, seq
from exo_hl.core_ir.interpret import InterpreterError


@proc
def g(x: [R][4], y: [R][4]):
    for i in seq(0, 4):
        y[i] = x[i] * x[i] + 1.0


@proc
def h64(a: f64[4], b: f64[4]):
    g(a[0:4], b[0:4])


@proc
def h32(a: f32[4], b: f32[4]):
    g(a[0:4], b[0:4])


@instr("/* sq */")
def sq(x: [R][4], y: [R][4]):
    for i in seq(0, 4):
        y[i] = x[i] * x[i]


@proc
def via_instr(a: f64[4], b: f64[4]):
    sq(a[0:4], b[0:4])


def test_f64_data_for_a_procedures_r_parameter_refused_as_in_c():
    a = np.array([1.0, 1 / 3, 1e-20, 3.0])
    b = np.zeros(4)
    with pytest.raises(InterpreterError, match="compiles as float"):
        h64.interpret(a, b)
    with pytest.raises(Exception, match="compiles as float"):
        h64.compile()


def test_staged_callee_swapped_in_keeps_f32_results():
    gs = g.stage_mem(g.find_loop('i'), 'x[0:4]', 's')
    h2 = h32.call_eqv('g(_)', gs)
    a = np.array([1.0, 1 / 3, 1e-20, 3.0], np.float32)
    want, got = np.zeros(4, np.float32), np.zeros(4, np.float32)
    h32.interpret(a, want)
    h2.interpret(a, got)
    assert np.array_equal(want, got)
    assert np.array_equal(want, a * a + np.float32(1.0))
    c = np.zeros(4, np.float32)
    h2.compile()(a, c)
    assert np.array_equal(c, want)


def test_instruction_bodies_stay_generic():
    a = np.array([1.0, 1 / 3, 1e-20, 3.0])
    b = np.zeros(4)
    via_instr.interpret(a, b)
    assert np.array_equal(b, a * a)       # computed in f64
