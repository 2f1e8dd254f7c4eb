"""The interpreter's par loop order (``ConfigState.par_order``): the
oracle the schedule fuzzer runs for races the analysis misses."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import f32, proc, seq
from exo_hl.core_ir.interpret import ConfigState, run_interpreter
from exo_hl.core_ir.nodes import IR


@proc
def last_writer(x: f32[4], y: f32[1]):
    for i in seq(0, 4):
        y[0] = x[i]


@proc
def independent(x: f32[4], y: f32[4]):
    for i in seq(0, 4):
        y[i] = x[i] * 2.0


def _as_par(p):
    """``p``'s procedure with its loop made par, with no check: a racy par
    loop no rewrite would produce, to see the order."""
    ir = p.ir()
    loop = ir.body[0]
    return ir.update(body=(loop.update(mode=IR.Par),) + tuple(ir.body[1:]))


def _run(ir, order, *arrays):
    st = ConfigState()
    st.par_order = order
    run_interpreter(ir, arrays, config_state=st)


def test_reverse_order_runs_the_last_iteration_first():
    ir = _as_par(last_writer)
    x = np.arange(1, 5, dtype=np.float32)
    for order, want in (("forward", 4.0), ("reverse", 1.0)):
        y = np.zeros(1, np.float32)
        _run(ir, order, x, y)
        assert y[0] == want, order


def test_independent_iterations_agree_in_both_orders():
    p = independent.parallelize(independent.find_loop("i"))
    x = np.arange(4, dtype=np.float32)
    outs = []
    for order in ("forward", "reverse"):
        y = np.zeros(4, np.float32)
        _run(p.ir(), order, x, y)
        outs.append(y)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], 2 * x)


def test_default_order_is_forward():
    assert ConfigState().par_order == "forward"
    with pytest.raises(AttributeError):
        ConfigState().no_such_option
