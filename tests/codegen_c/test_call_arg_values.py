"""interpret() and the compiled callable accept exactly the same data-scalar
and array arguments, and reject the rest with the same located error
(naming the procedure and the argument) before anything runs."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from exo_hl import f32, f64, i8, proc, size, stride, ui8


@proc
def scalars(a: i8, b: f32, c: ui8, d: f64, x: f32[4], y: f32[2]):
    x[0] = a
    x[1] = b
    x[2] = c
    x[3] = d
    y[0] = 1.0


def _args(**over):
    args = dict(a=1, b=2.0, c=3, d=4.0, x=np.zeros(4, np.float32),
                y=np.zeros(2, np.float32))
    args.update(over)
    return args


BAD = [
    (dict(a=300), ValueError, "'a' = 300 does not fit int8"),
    (dict(a=np.int64(1000)), ValueError, "'a' = 1000 does not fit int8"),
    (dict(a=-129), ValueError, "does not fit int8"),
    (dict(c=-1), ValueError, "'c' = -1 does not fit uint8"),
    (dict(a=1.5), TypeError, "'a' must be an integer"),
    (dict(a=float("inf")), TypeError, "'a' must be an integer"),
    (dict(a=1e300), TypeError, "'a' must be an integer"),
    (dict(a=True), TypeError, "'a' must be an integer"),
    (dict(b=1e300), ValueError, "'b' = 1e+300 is out of the range of "
     "float32"),
    (dict(b=np.float64(-1e39)), ValueError, "out of the range of float32"),
    (dict(b=10 ** 400), ValueError, "out of the range of float32"),
    (dict(d=10 ** 400), ValueError, "out of the range of float64"),
    (dict(b="1.0"), TypeError, "'b' must be a number"),
    (dict(b=np.zeros(2, np.float32)), ValueError, "'b' is a scalar"),
    (dict(b=np.zeros((), np.float64)), TypeError, "'b' (f32) must have "
     "dtype float32"),
]


@pytest.fixture(scope="module")
def compiled():
    return scalars.compile()


@pytest.mark.parametrize("over, exc, text", BAD)
def test_bad_scalar_arguments_rejected_alike(compiled, over, exc, text):
    msgs = []
    for run in (scalars.interpret, compiled):
        args = _args(**over)
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # no numpy overflow warnings
            with pytest.raises(exc) as e:
                run(**args)
        assert type(e.value) is exc
        msg = str(e.value)
        assert msg.startswith("procedure 'scalars': ") and text in msg, msg
        assert not args["x"].any() and not args["y"].any()
        msgs.append(msg)
    assert msgs[0] == msgs[1]


GOOD = [dict(), dict(b=float("inf")), dict(b=float("nan")),
        dict(b=np.float64(1.5)), dict(a=np.int8(-128), c=np.uint8(255)),
        dict(b=np.int64(2 ** 40)), dict(a=np.array(5, np.int8)),
        dict(d=1e300)]


@pytest.mark.parametrize("over", GOOD)
def test_good_scalar_arguments_accepted_alike(compiled, over):
    outs = []
    for run in (scalars.interpret, compiled):
        args = _args(**over)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            run(**args)
        outs.append(args["x"])
    np.testing.assert_array_equal(outs[0], outs[1])


def test_read_only_written_array_rejected_before_any_write(compiled):
    """interpret() checks every argument up front, as the compiled callable
    does: nothing is written when a later argument is read-only."""
    for run in (scalars.interpret, compiled):
        y = np.zeros(2, np.float32)
        y.flags.writeable = False
        args = _args(y=y)
        with pytest.raises(ValueError) as e:
            run(**args)
        assert str(e.value) == ("procedure 'scalars': argument 'y' is "
                                "written by the procedure but the array is "
                                "read-only")
        assert not args["x"].any()


@proc
def control_sum(k: int, j: int, B: f32[1]):
    if k + j < 0:
        B[0] = 1.0


def test_control_values_are_32_bit_so_their_sums_cannot_overflow(tmp_path):
    """A control argument is a 32-bit value whatever the width of
    int_fast32_t: k = j = 2**62 were accepted where int_fast32_t has 64
    bits, and ``k + j`` overflowed in C (undefined behaviour; C took the
    branch, interpret() did not). The extreme 32-bit values still agree,
    under the sanitizers too."""
    from cg_helpers import sanitized_run
    for run in (control_sum.interpret, control_sum.compile()):
        with pytest.raises(ValueError, match="control values are 32-bit"):
            run(k=2 ** 62, j=2 ** 62, B=np.zeros(1, np.float32))
        for k in (2 ** 31 - 1, -2 ** 31):
            B = np.zeros(1, np.float32)
            run(k=k, j=k, B=B)
            assert B[0] == (1.0 if k < 0 else 0.0)
    got = sanitized_run(tmp_path, control_sum,
                        dict(k=2 ** 31 - 1, j=2 ** 31 - 1,
                             B=np.zeros(1, np.float32)))
    assert got["B"] == [0.0]


@proc
def stride_branch(n: size, w: [f32][n, 4], A: f32[n, 4], B: f32[8]):
    if stride(w, 0) >= 1:
        w[0, 0] = 1.0
    if stride(A, 0) == 4:
        A[0, 0] = 1.0
    else:
        B[n + 7] = 3.0          # proven dead: strides are positive


def test_strides_are_the_positive_ones_the_checks_assumed():
    """The static checks assume positive strides. A window with stride 0
    (np.newaxis) took the branch they proved dead (a write past B in C, an
    IndexError in interpret()): it is refused. A dense tensor numpy calls
    C-contiguous with a size-1 dimension of stride 0 is seen with its dense
    strides, in both."""
    row = np.zeros(4, np.float32)
    for run in (stride_branch.interpret, stride_branch.compile()):
        with pytest.raises(ValueError, match="must be positive multiples"):
            run(n=1, w=row[None, :], A=np.zeros((1, 4), np.float32),
                B=np.zeros(8, np.float32))
        A = np.zeros(4, np.float32)[None, :]
        assert A.strides[0] == 0 and A.flags.c_contiguous
        w, B = np.zeros((1, 4), np.float32), np.zeros(8, np.float32)
        run(n=1, w=w, A=A, B=B)
        assert A[0, 0] == 1.0 and w[0, 0] == 1.0 and not B.any()
