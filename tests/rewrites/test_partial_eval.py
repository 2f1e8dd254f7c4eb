"""partial_eval(*args, **sizes): printed result, semantics, rejected values."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, f32, index, proc, seq, size


@proc
def gemv(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    assert n % 4 == 0
    assert m <= 64
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


def test_partial_eval_prints(equiv):
    q = gemv.partial_eval(n=8)
    assert str(q).rstrip() == """\
def gemv(m: size, A: f32[m, 8] @ DRAM, x: f32[8] @ DRAM, y: f32[m] @ DRAM):
    assert m <= 64
    for i in seq(0, m):
        for j in seq(0, 8):
            y[i] += A[i, j] * x[j]"""
    equiv(gemv, q, [{"m": 1, "n": 8}, {"m": 3, "n": 8}])


def test_partial_eval_positional_and_all(equiv):
    q = gemv.partial_eval(5, 4)
    assert [a.name.name for a in q.ir().args] == ["A", "x", "y"]
    assert q.ir().preds == ()
    assert "for i in seq(0, 5)" in str(q)
    equiv(gemv, q, [{"m": 5, "n": 4}])


def test_partial_eval_rejects_precondition_violation():
    with pytest.raises(SchedulingError, match="violate the precondition"):
        gemv.partial_eval(n=6)
    with pytest.raises(SchedulingError, match="violate the precondition"):
        gemv.partial_eval(m=65)


def test_partial_eval_rejects_unsatisfiable_remaining_preconditions():
    @proc
    def two(m: size, n: size, x: f32[m]):
        assert m < n
        assert m > 2
        for i in seq(0, m):
            x[i] = 0.0
    q = two.partial_eval(n=4)          # m = 3 remains possible
    assert "assert m < 4" in str(q)
    with pytest.raises(SchedulingError, match="unsatisfiable"):
        two.partial_eval(n=3)          # each holds for some m, not both


def test_partial_eval_rejects_bad_values():
    with pytest.raises(SchedulingError, match="positive int"):
        gemv.partial_eval(n=0)
    with pytest.raises(SchedulingError, match="positive int"):
        gemv.partial_eval(n=4.0)
    with pytest.raises(SchedulingError, match="no parameter named 'k'"):
        gemv.partial_eval(k=4)
    with pytest.raises(SchedulingError, match="cannot be specialized"):
        gemv.partial_eval(A=4)


@proc
def add2(y: [f32][2]):
    for k in seq(0, 2):
        y[k] += 1.0


@proc
def padded(n: size, x: f32[n + 2]):
    for i in seq(0, n):
        add2(x[i:i + 2])


def test_partial_eval_folds_the_source_type_of_windows(equiv,
                                                        assert_roundtrip):
    # the window's source type is the buffer's, folded like the argument
    p = padded.partial_eval(n=3)
    assert str(p) == """\
def padded(x: f32[5] @ DRAM):
    for i in seq(0, 3):
        add2(x[i:i + 2])"""
    call = p.ir().body[0].body[0]
    assert (str(call.args[0].type.src_type.hi[0])
            == str(p.ir().args[0].type.hi[0]) == "Const(val=5)")
    assert_roundtrip(p)
    equiv(padded, p, [{"n": 3}])


@proc
def wide(n: size, k: index, x: f32[8]):
    if k > 0:
        x[0] = 1.0
    for i in seq(0, n):
        x[1] += 1.0


def test_partial_eval_refuses_values_no_call_can_pass():
    # control arguments are 32-bit (call_args refuses k = 2**32): a
    # specialization to a wider value computed what no call of the
    # original can (k > 0 folded to True, seq(0, 2**40) ran)
    for kw in ({"k": 2**32}, {"k": 2**31}, {"k": -2**31 - 1},
               {"n": 2**31}, {"n": 2**40}):
        with pytest.raises(SchedulingError, match="not a 32-bit control"):
            wide.partial_eval(**kw)
    # the extremes a call can pass are accepted
    assert "if False" in str(wide.partial_eval(k=-2**31))
    assert "if True" in str(wide.partial_eval(k=2**31 - 1))
    assert "seq(0, 2147483647)" in str(wide.partial_eval(n=2**31 - 1))


@proc
def flagged(n: size, k: index, on: bool, x: f32[n]):
    assert k >= 0
    assert k < n
    if on:
        x[k] += 2.0


def test_partial_eval_takes_numpy_integers_and_bools(equiv):
    # np.int64(4) and np.bool_ are what a compiled call takes; they were
    # refused ("needs a positive int, got np.int64(4)")
    q = flagged.partial_eval(n=np.int64(4), k=np.int32(2),
                             on=np.bool_(True))
    assert str(q).rstrip() == """\
def flagged(x: f32[4] @ DRAM):
    if True:
        x[2] += 2.0"""
    equiv(flagged.partial_eval(n=4, k=2, on=True), q, [{}])
    equiv(flagged, q, [{"n": 4, "k": 2, "on": True}])
    r = flagged.partial_eval(np.uint8(3), None, np.bool_(False))
    assert "if False:" in str(r) and "k < 3" in str(r)
    equiv(flagged, r, [{"n": 3, "k": 1, "on": False}])


def test_partial_eval_numpy_values_keep_the_checks():
    for kw, msg in (({"n": np.int64(0)}, "positive int"),
                    ({"n": np.int64(2**31)}, "not a 32-bit control"),
                    ({"k": np.int64(-2**31 - 1)}, "not a 32-bit control"),
                    ({"n": np.int64(4), "k": np.int64(4)},
                     "violate the precondition"),
                    ({"n": np.float64(4.0)}, r"np.float64\(4.0\) \(float64\)"),
                    ({"k": np.float32(1.0)}, r"needs an int, got .*float32"),
                    ({"k": 1.0}, r"needs an int, got 1.0 \(float\)"),
                    ({"k": np.bool_(True)}, "needs an int"),
                    ({"on": np.int64(1)}, "needs a bool"),
                    ({"on": 1}, "needs a bool")):
        with pytest.raises(SchedulingError, match=msg):
            flagged.partial_eval(**kw)
