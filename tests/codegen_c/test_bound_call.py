"""``compile()(...).bind(args)``: arguments checked once, then runs that go
straight to C; and the overlap check's quick address-range test."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from exo_hl import config, f32, index, proc, seq, size


@proc
def axpy(n: size, a: f32, x: f32[n], y: f32[n]):
    assert n % 2 == 0
    for i in seq(0, n):
        y[i] += a * x[i]


@config
class BindCfg:
    m: index


@proc
def set_first(n: size, y: f32[n]):
    assert BindCfg.m < n
    assert BindCfg.m >= 0
    y[BindCfg.m] = 1.0


@proc
def copy_rows(n: size, x: [f32][n, 4], y: [f32][n, 4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[i, j] = x[i, j]


@pytest.fixture(scope="module")
def f():
    return axpy.compile()


def test_bound_call_runs_the_c_on_the_bound_arrays(f):
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, np.float32)
    run = f.bind(8, 2.0, x, y)     # a number for the read-only scalar
    gc.collect()                    # its converted array must stay alive
    run()
    np.testing.assert_array_equal(y, 1 + 2 * x)
    run()                           # in place, every run
    np.testing.assert_array_equal(y, 1 + 4 * x)
    want = np.ones(8, np.float32)
    axpy.interpret(n=8, a=2.0, x=x, y=want)
    axpy.interpret(n=8, a=2.0, x=x, y=want)
    np.testing.assert_array_equal(y, want)


def test_bind_checks_the_arguments_as_a_call_does(f):
    x = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="precondition 'assert n % 2 == 0'"):
        f.bind(7, 1.0, x[:7], np.zeros(7, np.float32))
    with pytest.raises(ValueError, match="'y' must have shape"):
        f.bind(8, 1.0, x, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="'x' and 'y' overlap"):
        f.bind(8, 1.0, x, x)
    with pytest.raises(TypeError, match="missing argument 'y'"):
        f.bind(8, 1.0, x)


def test_bound_call_rechecks_preconditions_on_config_state():
    g = set_first.compile()
    y = np.zeros(4, np.float32)
    g.set_config(BindCfg, "m", 2)
    run = g.bind(4, y)
    run()
    assert y.tolist() == [0, 0, 1, 0]
    g.set_config(BindCfg, "m", 4)   # now out of bounds: refused, not run
    with pytest.raises(ValueError, match="precondition 'assert BindCfg.m < n"):
        run()


def test_overlap_check_tells_interleaved_windows_from_shared_memory():
    g = copy_rows.compile()
    buf = np.arange(32, dtype=np.float32).reshape(8, 4)
    even, odd = buf[0::2], buf[1::2]    # address ranges overlap, elements not
    g(4, even, odd)
    np.testing.assert_array_equal(buf[1::2], buf[0::2])
    with pytest.raises(ValueError, match="'x' and 'y' overlap"):
        g(4, buf[0:4], buf[1:5])
    g(4, buf[0:4], np.zeros((4, 4), np.float32))   # disjoint
