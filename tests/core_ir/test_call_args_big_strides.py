"""A stride is a 32-bit control value to the overflow walk
(``core_ir/control_ranges.py``: ``stride(A, d)`` lies in [0, 2**31)), so the
control arithmetic on it was proven to fit the 64 bits of the C; a window
argument's numpy strides were not checked against that, and a view with
a huge stride over a small buffer (``as_strided``, only its first row
read) made ``stride(A, 0) * 2**31`` overflow in C (signed overflow:
undefined behaviour, UBSan's report; the branch went the other way than
in ``interpret()``). A call of a procedure that reads strides (itself or
a callee) now refuses arrays with an element stride of 2**31 or more,
interpreted and compiled alike; a procedure that reads none takes them."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import DRAM, f32, proc, seq, size, stride


@proc
def big_stride(n: size, A: [f32][n, 4] @ DRAM, x: f32[2] @ DRAM):
    if stride(A, 0) * 2147483648 > n * 1000000:
        x[0] = 1.0
    if stride(A, 0) * 1073741824 + stride(A, 0) * 1073741824 > n:
        x[1] = 1.0


@proc
def calls_big_stride(A: [f32][1, 4] @ DRAM, x: f32[2] @ DRAM):
    big_stride(1, A, x)


@proc
def first_row(n: size, A: [f32][n, 4] @ DRAM, x: f32[4] @ DRAM):
    for j in seq(0, 4):
        x[j] = A[0, j]


@proc
def first_row_unit_stride(n: size, A: [f32][n, 4] @ DRAM, x: f32[4] @ DRAM):
    assert stride(A, 1) == 1         # evaluated by Python, exactly
    for j in seq(0, 4):
        x[j] = A[0, j]


def _view(row_stride_elems):
    base = np.arange(4, dtype=np.float32)
    return np.lib.stride_tricks.as_strided(base, (1, 4),
                                           (4 * row_stride_elems, 4))


@pytest.mark.parametrize("p", [big_stride, calls_big_stride])
def test_a_stride_past_32_bits_is_refused(p):
    A = _view(1 << 38)
    args = (1, A) if p is big_stride else (A,)
    for run in (p.interpret, p.compile()):
        x = np.zeros(2, np.float32)
        with pytest.raises(ValueError, match=r"element strides .*32-bit "
                           r"control values"):
            run(*args, x)


def test_a_stride_just_inside_runs_as_interpreted():
    """At 2**31 - 1 the arithmetic fits (the sanitized build is clean) and
    C and interpret() agree."""
    A = _view((1 << 31) - 1)
    outs = []
    for run in (big_stride.interpret, big_stride.compile(),
                big_stride.compile(sanitize=True)):
        x = np.zeros(2, np.float32)
        run(1, A, x)
        outs.append(x)
    assert all(np.array_equal(o, [1, 1]) for o in outs)


def test_a_procedure_reading_no_stride_takes_any_stride():
    """Nor one that reads strides only in preconditions (Python evaluates
    them exactly; no C reads them)."""
    A = _view(1 << 38)
    for p in (first_row, first_row_unit_stride):
        x = np.zeros(4, np.float32)
        p.compile()(1, A, x)
        assert list(x) == [0, 1, 2, 3]
