"""make_instr(c_template, c_global): printed form, C uses the template,
interpret uses the body; bad templates rejected."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, f32, proc, seq, size

# the C deliberately adds 2 where the body adds 1: that tells which one ran
ADD_C = ("static void add_c(float *x, int_fast32_t n) "
         "{ for (int_fast32_t i = 0; i < n; i++) x[i] += 2.0f; }\n")


@proc
def add1(n: size, x: [f32][n]):
    for i in seq(0, n):
        x[i] += 1.0


@proc
def caller(A: f32[4]):
    for i in seq(0, 4):
        A[i] += 1.0


def test_make_instr_printed_form_and_provenance():
    ins = add1.make_instr("add_c(&{x_data}, {n});", ADD_C)
    text = str(ins)
    assert text.startswith('@instr(\n    "add_c(&{x_data}, {n});",')
    assert "c_global=" in text and "x[i] += 1.0" in text
    assert ins.is_instr() and not add1.is_instr()
    assert ins.parent() is add1
    assert [op for op, _ in ins.derivation()] == ["", "make_instr"]
    assert ins.ir().body == add1.ir().body


def test_make_instr_template_in_c_body_in_interpreter():
    ins = add1.make_instr("add_c(&{x_data}, {n});", ADD_C)
    q = caller.replace("i", ins)
    assert "add1(4, A[0:4])" in str(q)
    c = q.c_code_str()
    assert "add_c(&A[0], 4);" in c and ADD_C.strip() in c
    a = np.zeros(4, np.float32)
    q.interpret(a)
    np.testing.assert_array_equal(a, np.ones(4, np.float32))
    a = np.zeros(4, np.float32)
    q.compile()(a)
    np.testing.assert_array_equal(a, np.full(4, 2.0, np.float32))


def test_make_instr_without_global():
    ins = add1.make_instr("vadd({x}.data, {n});")
    assert ins.ir().instr.c_global == ""
    assert str(ins).startswith('@instr("vadd({x}.data, {n});")')


def test_make_instr_rejects_bad_templates():
    with pytest.raises(SchedulingError) as e:
        add1.make_instr("foo({y_data});")
    assert "'{y_data}' names no argument" in str(e.value)
    with pytest.raises(SchedulingError):
        add1.make_instr("foo({x")
    with pytest.raises(SchedulingError):
        add1.make_instr(42)
    # only bare placeholders: these were accepted, then failed (or pasted
    # Python text) when the C was generated
    for t in ("foo({x.data});", "foo({n:d});", "foo({x!r});",
              "foo({x[0]});"):
        with pytest.raises(SchedulingError, match="must be a bare '{x}'"
                           if "n:" not in t else "must be a bare '{n}'"):
            add1.make_instr(t)
