"""``{Cfg.field}`` in an ``@instr`` template is the C lvalue of that config
field in the context struct -- the same storage plain config reads and
writes compile to -- so a template acts on the state its body describes
(issue 33 item 13: a model kept private copies and diverged). It is allowed
only for fields the instruction reads (preconditions, body) or writes."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import ExoTypeError, config, f32, instr, proc


@config
class Knob:
    gain: int
    mode: int


@config
class Other:
    gain: int


@instr("{Knob.gain} = {v};")
def set_gain(v: int):
    Knob.gain = v


def test_placeholder_is_the_context_field():
    @proc
    def p(x: f32[1]):
        set_gain(3)
        if Knob.gain == 3:
            x[0] = 1.0

    text = p.c_code_str()
    assert "ctxt->Knob_gain = 3;" in text
    f = p.compile()
    x = np.zeros(1, np.float32)
    f(x=x)
    y = np.zeros(1, np.float32)
    p.interpret(x=y)
    assert x[0] == y[0] == 1.0
    assert f.get_config(Knob, "gain") == 3


def test_template_reads_what_plain_writes_wrote():
    @instr("{dst}.data[0] = {Knob.gain} > 0 ? 1.0f : 0.0f;")
    def sign_of_gain(dst: [f32][1]):
        assert Knob.gain >= 0
        if Knob.gain > 0:
            dst[0] = 1.0
        else:
            dst[0] = 0.0

    @proc
    def q(x: f32[1]):
        Knob.gain = 5
        sign_of_gain(x[0:1])

    for run in (q.interpret, q.compile()):
        x = np.full(1, 7.0, np.float32)
        run(x=x)
        assert x[0] == 1.0


def test_a_field_the_instruction_does_not_touch_is_refused():
    with pytest.raises(ExoTypeError) as e:
        @instr("{dst}.data[0] = (float){Other.gain};")
        def peek(dst: [f32][1]):
            dst[0] = 0.0
    msg = str(e.value)
    assert "'{Other.gain}'" in msg and "config field" in msg
    with pytest.raises(ExoTypeError) as e:
        @instr("{Knob.nosuch} = {v};")
        def bad(v: int):
            Knob.gain = v
    assert "{Knob.gain}" in str(e.value)      # lists what it may name
    with pytest.raises(ExoTypeError):
        @instr("{Knob.gain!r} = {v};")
        def bad2(v: int):
            Knob.gain = v


def test_argument_names_win_over_config_names():
    """An argument named like a config keeps the bare-placeholder rule."""
    with pytest.raises(ExoTypeError) as e:
        @instr("{Knob.gain} = {Knob};")
        def shadow(Knob: int):
            pass
    assert "must be a bare" in str(e.value)
