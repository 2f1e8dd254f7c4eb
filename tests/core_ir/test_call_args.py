"""interpret() and the compiled callable take the same arguments (docs/api.md §5).

Both check their arguments with ``core_ir.call_args``: every accepted form
runs in both with the same result, every rejected one fails in both with the
same exception type and message.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import f32, i8, proc, seq, size


@proc
def scale(n: size, a: f32, x: f32[n], k: i8, out: f32[n]):
    for i in seq(0, n):
        out[i] = a * x[i]
    t: i8
    t = k
    x8: i8[1]
    x8[0] = t


@proc
def accum(n: size, x: f32[n], s: f32):
    for i in seq(0, n):
        s += x[i]


@pytest.fixture(scope="module")
def compiled():
    return {"scale": scale.compile(), "accum": accum.compile()}


def _both(compiled, p, *args):
    """Run ``p`` through interpret() and compile(), each on its own copy of
    the written arguments (``out`` and ``s``, given as a zero-argument
    function that makes a fresh one); return (outcome, outcome) where an
    outcome is the arrays after the run or (exception type, message)."""
    outcomes = []
    for run in (p.interpret, compiled[p.name()]):
        vals = [a() if callable(a) else a for a in args]
        try:
            run(*vals)
        except (TypeError, ValueError) as e:
            outcomes.append((type(e), str(e)))
        else:
            outcomes.append([v for v in vals if isinstance(v, np.ndarray)])
    return outcomes


x4 = np.arange(4, dtype=np.float32)


def out4():
    return np.zeros(4, np.float32)


@pytest.mark.parametrize("a,k", [
    (2.5, 3),                               # Python float and int
    (np.float32(2.5), np.int8(3)),          # numpy scalars
    (np.float64(2.5), 3),                   # converted to the dtype
    (2, 3),                                 # an int for an f32 scalar
    (np.array(2.5, np.float32), np.array([3], np.int8)),  # 0-d / 1-element
])
def test_read_only_data_scalars_accept_numbers_in_both(compiled, a, k):
    got_i, got_c = _both(compiled, scale, 4, a, x4, k, out4)
    assert isinstance(got_i, list) and isinstance(got_c, list)
    want = np.float32(np.asarray(a).item()) * x4
    np.testing.assert_array_equal(got_i[-1], want)
    np.testing.assert_array_equal(got_c[-1], want)


@pytest.mark.parametrize("args,exc,text", [
    ((4.0, 2.5, x4, 3, out4), TypeError, "'n' (size) must be an int"),
    ((True, 2.5, x4, 3, out4), TypeError, "'n' (size) must be an int"),
    ((0, 2.5, x4, 3, out4), ValueError, "'n' (size) must be positive"),
    ((2**70, 2.5, x4, 3, out4), ValueError, "does not fit int_fast32_t"),
    ((2**31, 2.5, x4, 3, out4), ValueError, "control values are 32-bit"),
    ((4, "2.5", x4, 3, out4), TypeError, "'a' must be a number"),
    ((4, True, x4, 3, out4), TypeError, "'a' must be a number"),
    ((4, 2.5, x4, 3.5, out4), TypeError, "'k' must be an integer"),
    ((4, 2.5, x4, 300, out4), ValueError, "'k' = 300 does not fit int8"),
    ((4, np.zeros(2, np.float32), x4, 3, out4), ValueError,
     "'a' is a scalar"),
    ((4, np.zeros((), np.float64), x4, 3, out4), TypeError,
     "'a' (f32) must have dtype float32"),
    ((4, 2.5, x4.tolist(), 3, out4), TypeError,
     "'x' must be a numpy array of float32"),
    ((4, 2.5, x4[:3], 3, out4), ValueError, "'x' must have shape (4,)"),
    ((4, 2.5, np.arange(8, dtype=np.float32)[::2], 3, out4), ValueError,
     "C-contiguous"),
    ((4, 2.5, x4, 3), TypeError, "missing argument 'out'"),
    ((4, 2.5, x4, 3, out4, out4), TypeError, "takes 5 arguments, 6 given"),
    ((4, 2.5, x4, 3, x4), ValueError, "'x' and 'out' overlap"),
])
def test_rejections_are_identical(compiled, args, exc, text):
    got_i, got_c = _both(compiled, scale, *args)
    assert got_i == got_c
    assert got_i[0] is exc
    assert got_i[1].startswith("procedure 'scale': ")
    assert text in got_i[1]


def test_written_data_scalar_needs_an_array_in_both(compiled):
    x = np.arange(3, dtype=np.float32)
    got_i, got_c = _both(compiled, accum, 3, x, 1.0)
    assert got_i == got_c
    assert got_i[0] is TypeError
    assert "'s' must be a 0-d or 1-element numpy array" in got_i[1]
    got_i, got_c = _both(compiled, accum, 3, x,
                         lambda: np.ones(1, np.float32))
    assert got_i[-1] == got_c[-1] == np.float32(4.0)


def test_keyword_errors_are_identical(compiled):
    outs = []
    for run in (scale.interpret, compiled["scale"]):
        for kw in ({"a": 1.0, "x": x4, "k": 1, "out": out4(), "z": 1},
                   {"a": 1.0, "x": x4, "k": 1, "out": out4(), "n": 4}):
            with pytest.raises(TypeError) as e:
                run(4, **kw)
            outs.append(str(e.value))
    assert outs[0] == outs[2] and "unexpected argument 'z'" in outs[0]
    assert outs[1] == outs[3] and "argument 'n' given twice" in outs[1]


def test_read_only_written_array_rejected_in_both(compiled):
    out = out4()
    out.flags.writeable = False
    got_i, got_c = _both(compiled, scale, 4, 1.0, x4, 1, out)
    assert got_i == got_c
    assert got_i[0] is ValueError and "read-only" in got_i[1]
