"""inline_loop through a temporary of another type than the value it holds:
accepted when the temporary holds every value of the expression
(``datasem.holds_exactly``, the validator's rule) and the reading statement
only stores it; refused when an operation computes with it (its evaluation
type would change) or an integer would come back through a float into a
narrower integer (saturating instead of wrapping). Before, every such
temporary was refused ("does not hold the exact value")."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (SchedulingError, f32, f64, i8, i16, i32, proc, seq,
                    size)


@proc
def wide_copy(n: size, x: f32[n + 1], y: f32[n], z: f64[n]):
    t: f64[n + 1]
    for i in seq(0, n + 1):
        t[i] = x[i] * x[i] + 0.5
    for j in seq(0, n):
        y[j] = t[j + 1]
        z[j] += t[j]


@proc
def int_in_float(n: size, a: i8[n], y: i16[n], z: f32[n]):
    t: f32[n]
    for i in seq(0, n):
        t[i] = a[i] * 2
    for j in seq(0, n):
        y[j] = t[j]
        z[j] += t[j]


def test_wider_float_temporary(equiv):
    q = wide_copy.inline_loop('i')
    assert str(q).rstrip() == """\
def wide_copy(n: size, x: f32[n + 1] @ DRAM, y: f32[n] @ DRAM,
              z: f64[n] @ DRAM):
    t: f64[n + 1] @ DRAM
    for i in seq(0, n + 1):
        t[i] = x[i] * x[i] + 0.5
    for j in seq(0, n):
        y[j] = x[j + 1] * x[j + 1] + 0.5
        z[j] += x[j] * x[j] + 0.5"""
    equiv(wide_copy, q, [{"n": 1}, {"n": 5}, {"n": 17}])


def test_float_temporary_of_integers(equiv):
    q = int_in_float.inline_loop('i')
    assert "y[j] = a[j] * 2" in str(q) and "z[j] += a[j] * 2" in str(q)
    equiv(int_in_float, q, [{"n": 1}, {"n": 9}])


def _random_equal(p, q, n, seed):
    """interpret() and the C of ``p`` and ``q`` on random floats (not only
    small integers: a rounding difference would show)."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n + 1) * 1e3).astype(np.float32)
    z0 = rng.standard_normal(n)
    outs = []
    for g in (p.interpret, q.interpret, p.compile(), q.compile()):
        y, z = np.zeros(n, np.float32), z0.copy()
        g(n, x, y, z)
        outs.append((y, z))
    for y, z in outs[1:]:
        assert np.array_equal(y, outs[0][0]) and np.array_equal(z, outs[0][1])
    assert not np.array_equal(outs[0][1], z0)


def test_wider_float_temporary_on_random_floats():
    q = wide_copy.inline_loop('i')
    for seed in range(3):
        _random_equal(wide_copy, q, 33, seed)


def _refuses(p, what):
    with pytest.raises(SchedulingError, match=what):
        p.inline_loop('i')


def test_an_operation_on_the_value_is_refused():
    @proc
    def scaled(n: size, x: f32[n], y: f32[n]):
        t: f64[n]
        for i in seq(0, n):
            t[i] = x[i] * x[i]
        for j in seq(0, n):
            y[j] = t[j] * 3.0          # computed in f64, would be in f32
    _refuses(scaled, "does not hold the exact value.*computed in f32")

    @proc
    def summed(n: size, x: f32[n + 1], y: f64[n]):
        t: f64[n + 1]
        for i in seq(0, n + 1):
            t[i] = x[i]
        for j in seq(0, n):
            y[j] = t[j] + t[j + 1]
    _refuses(summed, "exact value")


def test_a_narrower_or_integer_temporary_is_refused():
    @proc
    def narrow(n: size, x: f64[n], y: f64[n]):
        t: f32[n]
        for i in seq(0, n):
            t[i] = x[i]                # rounds to f32
        for j in seq(0, n):
            y[j] = t[j]
    _refuses(narrow, "exact value")

    @proc
    def truncated(n: size, x: f32[n], y: f32[n]):
        t: i32[n]
        for i in seq(0, n):
            t[i] = x[i]                # truncates
        for j in seq(0, n):
            y[j] = t[j]
    _refuses(truncated, "exact value")

    @proc
    def wide_ints(n: size, a: i32[n], y: f64[n]):
        t: f32[n]
        for i in seq(0, n):
            t[i] = a[i]                # |a| may exceed 2**24
        for j in seq(0, n):
            y[j] = t[j]
    _refuses(wide_ints, "exact value")


def test_integer_through_a_float_into_a_narrower_integer_is_refused():
    @proc
    def sat(n: size, a: i8[n], y: i8[n]):
        t: f32[n]
        for i in seq(0, n):
            t[i] = a[i] + a[i]         # -256 .. 254: saturates into y
        for j in seq(0, n):
            y[j] = t[j]
    _refuses(sat, "exact value")
    a = np.full(3, 100, np.int8)
    y = np.zeros(3, np.int8)
    sat.interpret(3, a, y)
    assert list(y) == [127] * 3          # wrap would give -56


def test_a_reduction_changing_its_evaluation_type_is_refused():
    @proc
    def red(n: size, x: f32[n], y: f32[n]):
        t: f64[n]
        for i in seq(0, n):
            t[i] = x[i]
        for j in seq(0, n):
            y[j] += t[j]               # y + t in f64, would be in f32
    _refuses(red, "exact value")

    @proc
    def red_int(n: size, a: i8[n], y: i32[n]):
        t: f32[n]
        for i in seq(0, n):
            t[i] = a[i]
        for j in seq(0, n):
            y[j] += t[j]               # in f32, would be in i32
    _refuses(red_int, "exact value")
