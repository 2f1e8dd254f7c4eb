"""Malformed programs at the edges of the language get located errors at
decoration: literals no C integer holds, negative argument dimensions,
@proc on things that are not plain functions, recursion, bad @config."""
from __future__ import annotations

import re

import pytest

from exo_hl import (BoundsError, ExoTypeError, config, f32, i32, proc, seq,
                    size)
from exo_hl.errors import ExoSyntaxError

HERE = "test_boundary_errors.py"


def _located(e, name, snippet, kind="procedure"):
    msg = str(e.value)
    assert re.match(rf".*{HERE}:\d+: in {kind} '{name}': ", msg), msg
    assert snippet in msg, msg
    return msg


def test_integer_literal_too_large_for_c():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def big(n: size, x: f32[n]):
            assert n < 99999999999999999999999
            for i in seq(0, n):
                x[i] = 1.0
    msg = _located(e, "big", "assert n < 99999999999999999999999")
    assert "too large for a C integer" in msg

    with pytest.raises(ExoTypeError) as e:
        @proc
        def big_loop(x: f32[4]):
            for i in seq(0, 1180591620717411303424):
                x[0] = 1.0
    _located(e, "big_loop", "too large for a C integer")

    with pytest.raises(ExoTypeError) as e:
        @proc
        def big_alloc(x: f32[4]):
            t: f32[-9223372036854775809]
            t[0] = x[0]
    _located(e, "big_alloc", "too large for a C integer")


def test_largest_c_literal_and_huge_data_literal_are_fine():
    @proc
    def edge(n: size, x: f32[n]):
        assert n < 9223372036854775807
        for i in seq(0, n):
            x[i] = 99999999999999999999999.0

    assert "9223372036854775807" in edge.c_code_str()


@proc
def beyond_float(x: f32[2], y: i32[2]):
    x[0] = 1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
    x[1] = -1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
    y[0] = 1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
    y[1] = 7


def test_integer_data_literal_beyond_every_float_is_infinite():
    """A data literal is the nearest value of its type (docs/semantics.md):
    a 340-digit integer is +-inf in f32 and saturates in i32; it raised an
    internal OverflowError (reported at the def line)."""
    import numpy as np
    outs = []
    for run in (beyond_float.interpret, beyond_float.compile()):
        x, y = np.zeros(2, np.float32), np.zeros(2, np.int32)
        run(x=x, y=y)
        outs.append((x.tolist(), y.tolist()))
    assert outs[0] == outs[1] == ([np.inf, -np.inf], [2**31 - 1, 7])


def test_negative_argument_dimensions():
    with pytest.raises(BoundsError) as e:
        @proc
        def neg_const(x: f32[-4]):
            x[0] = 1.0
    _located(e, "neg_const", "dimension 0 of argument 'x' is -4")

    with pytest.raises(BoundsError) as e:
        @proc
        def neg_sym(n: size, x: f32[4, n - 4]):
            pass
    msg = _located(e, "neg_sym", "dimension 1 of argument 'x' (n - 4) may "
                   "be negative")
    assert "counterexample: n = " in msg

    @proc
    def guarded(n: size, x: f32[4, n - 4]):
        assert n >= 4
        pass

    assert guarded.name() == "guarded"


def test_proc_on_async_def_class_or_procedure():
    with pytest.raises(ExoSyntaxError) as e:
        @proc
        async def asy(x: f32[4]):
            pass
    _located(e, "asy", "not an 'async def'")

    with pytest.raises(ExoSyntaxError) as e:
        @proc
        class K:
            x: f32
    _located(e, "K", "not a class")

    with pytest.raises(ExoSyntaxError) as e:
        @proc
        @proc
        def twice(x: f32[4]):
            x[0] = 1.0
    _located(e, "twice", "already one")


def test_recursive_procedure():
    with pytest.raises(ExoTypeError) as e:
        @proc
        def rec(n: size, x: f32[n]):
            rec(n, x)
    msg = _located(e, "rec", "calls itself")
    assert "not defined" not in msg


def test_config_errors_name_the_config_and_the_field_line():
    with pytest.raises(ExoTypeError) as e:
        @config
        class TensorCfg:
            a: f32
            b: f32[4]
    msg = _located(e, "TensorCfg", "field 'b'", kind="config")
    assert "procedure" not in msg
    assert "b: f32[4]" in msg  # the field's own line is shown

    with pytest.raises(ExoTypeError) as e:
        @config
        class EmptyCfg:
            pass
    msg = _located(e, "EmptyCfg", "declares no fields", kind="config")
    assert "procedure" not in msg

    @config
    class Fine:
        a: i32

    assert Fine.name() == "Fine"
