"""reuse_buffer(buf, other): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, f64, par, proc, seq, size


@proc
def two_tmps(n: size, x: f32[n, 4], y: f32[n, 4]):
    for i in seq(0, n):
        a: f32[4]
        for j in seq(0, 4):
            a[j] = x[i, j] * 2.0
        for j in seq(0, 4):
            y[i, j] = a[j]
        b: f32[4]
        for j in seq(0, 4):
            b[j] = y[i, j] + 1.0
        for j in seq(0, 4):
            x[i, j] = b[j]


def test_reuse_buffer(equiv):
    q = two_tmps.reuse_buffer("b", "a")
    assert str(q).rstrip() == """\
def two_tmps(n: size, x: f32[n, 4] @ DRAM, y: f32[n, 4] @ DRAM):
    for i in seq(0, n):
        a: f32[4] @ DRAM
        for j in seq(0, 4):
            a[j] = x[i, j] * 2.0
        for j in seq(0, 4):
            y[i, j] = a[j]
        for j in seq(0, 4):
            a[j] = y[i, j] + 1.0
        for j in seq(0, 4):
            x[i, j] = a[j]"""
    equiv(two_tmps, q, [{"n": 1}, {"n": 3}])


def test_reuse_buffer_nested_in_a_later_loop(equiv):
    @proc
    def outer(n: size, x: f32[n], y: f32[n]):
        s: f32
        s = x[0]
        y[0] = s
        for i in seq(0, n):
            t: f32
            t = x[i] * 3.0
            y[i] += t
    q = outer.reuse_buffer("t", "s")
    assert str(q).splitlines()[-2:] == ["        s = x[i] * 3.0",
                                        "        y[i] += s"]
    equiv(outer, q, [{"n": 4}])


def test_reuse_buffer_rejects_overlapping_lifetimes():
    @proc
    def overlap(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            a: f32
            a = x[i]
            b: f32
            b = a * 2.0
            y[i] = b + a
    with pytest.raises(SchedulingError, match="lifetimes overlap"):
        overlap.reuse_buffer("b", "a")


def test_reuse_buffer_rejects_value_kept_across_iterations():
    @proc
    def carried(n: size, x: f32[n], y: f32[n], z: f32[n]):
        acc: f32
        acc = 0.0
        for i in seq(0, n):
            acc += x[i]
            y[i] = acc
            t: f32
            t = x[i] * 2.0     # would overwrite acc before the next +=
            z[i] = t
    with pytest.raises(SchedulingError, match="lifetimes overlap"):
        carried.reuse_buffer("t", "acc")


def test_reuse_buffer_rejects_parallel_private_buffer():
    @proc
    def private(n: size, x: f32[n], y: f32[n]):
        s: f32
        s = x[0]
        y[0] = s
        for i in par(0, n):
            t: f32
            t = x[i]
            y[i] = t
    with pytest.raises(SchedulingError, match="parallel loop 'i'"):
        private.reuse_buffer("t", "s")


def test_reuse_buffer_rejects_type_shape_and_scope():
    @proc
    def kinds(n: size, x: f32[n]):
        a: f32[4]
        a[0] = x[0]
        x[0] = a[0]
        b: f64[4]
        b[0] = x[0]
        x[0] = b[0]
        c: f32[2]
        c[0] = x[0]
        x[0] = c[0]
    with pytest.raises(SchedulingError, match="element type or memory"):
        kinds.reuse_buffer("b", "a")
    with pytest.raises(SchedulingError, match="same shape"):
        kinds.reuse_buffer("c", "a")
    with pytest.raises(SchedulingError, match="must be allocated after"):
        two_tmps.reuse_buffer("a", "b")
    with pytest.raises(SchedulingError, match="not an allocation"):
        two_tmps.reuse_buffer("b", "x")


def test_reuse_buffer_rejects_a_scalar_read_before_it_is_written(equiv):
    # a local scalar starts at zero (docs/semantics.md); in 'a' it would
    # start with a's last value
    @proc
    def zero_start(n: size, x: f32[n], y: f32[n]):
        a: f32
        a = x[0]
        y[0] = a
        for i in seq(0, n):
            b: f32
            b += x[i]
            y[i] += b
    with pytest.raises(SchedulingError, match="starts at zero"):
        zero_start.reuse_buffer("b", "a")

    @proc
    def set_first(n: size, x: f32[n], y: f32[n]):
        a: f32
        a = x[0]
        y[0] = a
        for i in seq(0, n):
            b: f32
            y[i] += 1.0
            b = x[i]
            b += x[i]
            y[i] += b
    q = set_first.reuse_buffer("b", "a")
    equiv(set_first, q, [{"n": 3}])
