"""set_precision: change a buffer's element type; calls are re-checked."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, f64, i8, proc, seq, size


@proc
def takes_f32(x: [f32][4]):
    for i in seq(0, 4):
        x[i] = x[i] * 2.0


@proc
def scale(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i] * 2.0
        y[i] = t


@proc
def calls(y: f32[4]):
    t: f32[4]
    for i in seq(0, 4):
        t[i] = y[i]
    takes_f32(t[0:4])
    for i in seq(0, 4):
        y[i] = t[i]


def test_set_precision_alloc(equiv, assert_roundtrip):
    p = scale.set_precision("t", "f64")
    assert str(p) == """\
def scale(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        t: f64 @ DRAM
        t = x[i] * 2.0
        y[i] = t"""
    assert_roundtrip(p)
    # the write and the read of t are f64 now
    s = p.ir().body[0].body
    assert s[1].type == s[0].type and s[2].rhs.type == s[0].type
    # mixing precisions in one expression is the backend's to report
    # (ExoTypeError at compile time), as for hand-written code
    assert "double t;" in p.c_code_str()
    equiv(scale, p, [{"n": 1}, {"n": 5}])


def test_set_precision_argument_marker():
    p = scale.set_precision("x", f64)
    assert str(p).startswith(
        "def scale(n: size, x: f64[n] @ DRAM, y: f32[n] @ DRAM):")
    assert "const double *restrict x" in p.c_code_str()


def test_set_precision_rechecks_calls(equiv):
    with pytest.raises(SchedulingError, match="takes_f32") as e:
        calls.set_precision("t", f64)
    assert "element type" in str(e.value) and "calls" in str(e.value)


def test_set_precision_bad_type():
    with pytest.raises(SchedulingError, match="data type"):
        scale.set_precision("t", "index")
    with pytest.raises(SchedulingError, match="control"):
        scale.set_precision("n", i8)
