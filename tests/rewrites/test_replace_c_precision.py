"""``replace`` refuses a call that ``compile()`` would refuse: an ``R``
parameter of a procedure bound to data whose C type is not ``float``.

The interpreter runs ``R`` at the caller's precision, but C has one body
per callee with ``R`` as ``float``; an ``i8`` or ``f64`` buffer passed
there would be reinterpreted, so codegen refuses the call. ``replace`` used
to accept it, and only ``compile()`` failed, far from the cause. An
instruction's C is its template, which takes any element type: not refused.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import DRAM, R, SchedulingError, f32, f64, i8, instr, proc, seq, size


@proc
def copy_r(n: size, dst: [R][n], src: [R][n]):
    for i in seq(0, n):
        dst[i] = src[i]


@instr("for (int k = 0; k < 4; k++) (&{dst_data})[k] = (&{src_data})[k];")
def copy4_r(dst: [R][4] @ DRAM, src: [R][4] @ DRAM):
    for i in seq(0, 4):
        dst[i] = src[i]


@proc
def bytes8(x: i8[8], y: i8[8]):
    for i in seq(0, 8):
        y[i] = x[i]


@proc
def doubles4(x: f64[4], y: f64[4]):
    for i in seq(0, 4):
        y[i] = x[i]


@proc
def floats8(x: f32[8], y: f32[8]):
    for i in seq(0, 8):
        y[i] = x[i]


@pytest.mark.parametrize("base, prec", [(bytes8, "i8"), (doubles4, "f64")])
def test_r_parameter_bound_to_other_data_is_refused_at_replace(base, prec):
    with pytest.raises(SchedulingError,
                       match=rf"argument 'dst' of 'copy_r' is {prec} but "
                             rf"the parameter compiles as float.*set_precision"):
        base.replace(base.find_loop("i"), copy_r)


def test_a_set_precision_copy_replaces_and_compiles(equiv):
    sub = copy_r.set_precision("dst", "i8").set_precision("src", "i8")
    p = bytes8.replace(bytes8.find_loop("i"), sub)
    assert "copy_r(8, y[0:8], x[0:8])" in str(p), str(p)
    equiv(bytes8, p, [{}])


def test_f32_data_still_takes_the_r_procedure(equiv):
    p = floats8.replace(floats8.find_loop("i"), copy_r)
    assert str(p).splitlines()[1].strip() == "copy_r(8, y[0:8], x[0:8])"
    equiv(floats8, p, [{}])


def test_an_instruction_with_r_takes_f64_data(equiv):
    p = doubles4.replace(doubles4.find_loop("i"), copy4_r)
    assert "copy4_r(y[0:4], x[0:4])" in str(p)
    equiv(doubles4, p, [{}])
    x = np.arange(4, dtype=np.float64) + 0.25
    y = np.zeros(4)
    p.compile()(x, y)
    np.testing.assert_array_equal(y, x)
