"""expand_dim: a new leading dimension indexed by an expression."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def foo(n: size, x: f32[n, 8], y: f32[n, 8]):
    for i in seq(0, n):
        t: f32[8]
        for j in seq(0, 8):
            t[j] = x[i, j] * 2.0
        for j in seq(0, 8):
            y[i, j] = t[j]


@proc
def scal(x: f32[6], y: f32[6]):
    for i in seq(0, 6):
        s: f32
        s = x[i] + 1.0
        y[i] = s


def test_expand_prints_and_equiv(equiv, assert_roundtrip):
    p = foo.expand_dim("t", "n", "i")
    assert str(p) == """\
def foo(n: size, x: f32[n, 8] @ DRAM, y: f32[n, 8] @ DRAM):
    for i in seq(0, n):
        t: f32[n, 8] @ DRAM
        for j in seq(0, 8):
            t[i, j] = x[i, j] * 2.0
        for j in seq(0, 8):
            y[i, j] = t[i, j]"""
    assert_roundtrip(p)
    equiv(foo, p, [{"n": 1}, {"n": 3}])
    q = scal.expand_dim("s", 3, "i % 3")
    assert "s[i % 3] = x[i] + 1.0" in str(q)
    equiv(scal, q, [{}])


def test_expand_index_out_of_range():
    with pytest.raises(SchedulingError, match="cannot prove") as e:
        foo.expand_dim("t", 4, "i")
    assert "foo" in str(e.value)
    with pytest.raises(SchedulingError, match="cannot prove"):
        scal.expand_dim("s", 6, "i + 1")


def test_expand_bad_arguments():
    with pytest.raises(SchedulingError, match="positive"):
        foo.expand_dim("t", "n - 1", "0")
    with pytest.raises(SchedulingError, match="not defined"):
        foo.expand_dim("t", "n", "j")  # j is bound after the allocation
    with pytest.raises(SchedulingError, match="allocation"):
        foo.expand_dim("x", "n", "0")


def test_expand_rejects_a_scalar_read_before_it_is_written(equiv):
    # a local scalar starts at zero (docs/semantics.md), an array does not:
    # expanded, 't += x[i]' would add to an uninitialised element
    @proc
    def zero_start(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32
            t += x[i]
            y[i] = t
    with pytest.raises(SchedulingError, match="(?s)starts at zero.*t \\+= x"):
        zero_start.expand_dim("t", "n", "i")
    with pytest.raises(SchedulingError, match="starts at zero"):
        zero_start.autolift_alloc("t")

    @proc
    def set_first(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32
            t = 0.0
            t += x[i]
            y[i] = t
    equiv(set_first, set_first.expand_dim("t", "n", "i"), [{"n": 3}])
