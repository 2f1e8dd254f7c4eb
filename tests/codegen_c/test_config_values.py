"""Config field values set from Python (``interpret()``'s ``config_state``,
the compiled callable's ``set_config``): one rule, the same run
(core_ir/config_values.py).

Before: ``interpret()`` read an ``i8`` field set to 300 as 300 while the
C's ctypes member held 44, an ``f32`` field set to 0.1 as the double 0.1
(C: ``float32(0.1)``), an ``f16`` field set to 70000 as 70000 (C:
infinity), an ``index`` field set to 2.5 as 2.5 (C: TypeError), a
``bool`` field set to ``'x'`` as true in both.

The generator sets each field of a config with every type to values drawn
from a pool (in range, out of range, fractions, other Python and numpy
types, special floats) and runs a procedure that reads them all; the
outcome of ``interpret()`` and of the compiled callable must be the same
(both values bit for bit, or both the same exception), and an independent
rule says which values are refused.
"""
from __future__ import annotations

import math
import numbers
import random

import numpy as np
import pytest

from exo_hl import (bf16, config, f16, f32, f64, i8, i16, i32, index, proc,
                    seq, ui8, ui16)
from exo_hl.core_ir.interpret import ConfigState


@config
class AllTypes:
    a8: i8
    u8: ui8
    a16: i16
    u16: ui16
    a32: i32
    h: f16
    b: bf16
    f: f32
    d: f64
    k: index
    on: bool


@proc
def read_all(y: f64[9], w: f32[1], ks: f64[3]):
    y[0] = AllTypes.a8
    y[1] = AllTypes.u8
    y[2] = AllTypes.a16
    y[3] = AllTypes.u16
    y[4] = AllTypes.a32
    y[5] = AllTypes.h
    y[6] = AllTypes.f
    y[7] = AllTypes.d
    w[0] = AllTypes.b * 1.0
    ks[2] = AllTypes.f * 3.0
    if AllTypes.on:
        ks[0] = 1.0
    for i in seq(0, AllTypes.k % 4):
        ks[1] += 1.0


FIELDS = ["a8", "u8", "a16", "u16", "a32", "h", "b", "f", "d", "k", "on"]
_INT = {"a8": np.int8, "u8": np.uint8, "a16": np.int16, "u16": np.uint16,
        "a32": np.int32, "b": np.uint16}
_FLOAT = {"h": np.float16, "f": np.float32, "d": np.float64}

POOL = [0, 1, -1, 127, 128, -129, 255, 256, 65535, 65536, 2**31 - 1, 2**31,
        -2**31 - 1, 2**40, 2.5, -0.0, 0.1, 1e300, 70000.0, 65504.0,
        1 + 2**-11 + 2**-30, math.inf, -math.inf, math.nan, True, False,
        np.int8(-5), np.uint16(40000), np.int64(300), np.float32(0.1),
        np.float16(2.0), np.bool_(True), "x", None]


def _rule(field, v):
    """Accepted? (independent of exo_hl: what the field's type can hold)"""
    is_bool = isinstance(v, (bool, np.bool_))
    if field == "on":
        return is_bool
    if is_bool or not isinstance(v, numbers.Real):
        return False
    if field in _INT or field == "k":
        if not isinstance(v, numbers.Integral):
            return False
        if field == "k":
            return -2**31 <= int(v) < 2**31
        info = np.iinfo(_INT[field])
        return info.min <= int(v) <= info.max
    x = float(v)
    return not math.isfinite(x) or abs(x) <= float(
        np.finfo(_FLOAT[field]).max)


def _outcome(run):
    y, w, ks = np.zeros(9), np.zeros(1, np.float32), np.zeros(3)
    try:
        run(y, w, ks)
    except (TypeError, ValueError) as e:
        return type(e).__name__
    return np.concatenate([y, w.astype(np.float64), ks]).tobytes()


def test_config_values_from_python_are_one_rule_in_interpret_and_c():
    fast = read_all.compile()
    rng = random.Random(14)
    checked = refused = 0
    for _ in range(160):
        field = rng.choice(FIELDS)
        v = rng.choice(POOL)
        # the other fields: valid values, so one value decides the outcome
        rest = {f: (bool(rng.getrandbits(1)) if f == "on" else
                    rng.choice([0, 1, 3])) for f in FIELDS if f != field}
        st = ConfigState({(AllTypes, f): x for f, x in rest.items()})
        st[(AllTypes, field)] = v

        def interp(y, w, ks):
            read_all.interpret(y, w, ks, config_state=st)

        def compiled(y, w, ks):
            fast.context = type(fast.context)()
            for f, x in rest.items():
                fast.set_config(AllTypes, f, x)
            fast.set_config(AllTypes, field, v)
            fast(y, w, ks)

        got_i, got_c = _outcome(interp), _outcome(compiled)
        assert got_i == got_c, (field, v, got_i, got_c)
        assert isinstance(got_i, bytes) == _rule(field, v), (field, v, got_i)
        checked += 1
        refused += not isinstance(got_i, bytes)
    assert refused and checked - refused


@pytest.mark.parametrize("field, value, want", [
    ("a8", 300, ValueError), ("f", 1e300, ValueError),
    ("h", 70000.0, ValueError), ("k", 2.5, TypeError),
    ("on", "x", TypeError), ("k", 2**40, ValueError)])
def test_values_a_field_cannot_hold_are_refused_by_both(field, value, want):
    y, w, ks = np.zeros(9), np.zeros(1, np.float32), np.zeros(3)
    with pytest.raises(want, match=f"AllTypes.{field}"):
        read_all.interpret(y, w, ks, config_state=ConfigState(
            {(AllTypes, field): value}))
    with pytest.raises(want, match=f"AllTypes.{field}"):
        read_all.compile().set_config(AllTypes, field, value)


def test_a_float_field_holds_its_type_s_value():
    """0.1 in an f32 field is float32(0.1) in interpret(), as in C."""
    st = ConfigState({(AllTypes, "f"): 0.1})
    y, w, ks = np.zeros(9), np.zeros(1, np.float32), np.zeros(3)
    read_all.interpret(y, w, ks, config_state=st)
    assert y[6] == float(np.float32(0.1))


def test_a_field_the_config_lacks_is_refused():
    """(a misspelt key was ignored by interpret(): the field read 0)"""
    y, w, ks = np.zeros(9), np.zeros(1, np.float32), np.zeros(3)
    with pytest.raises(KeyError, match="no field 'ff'"):
        read_all.interpret(y, w, ks, config_state=ConfigState(
            {(AllTypes, "ff"): 1.0}))
