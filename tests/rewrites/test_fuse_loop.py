"""fuse_loop: fusion is fission read backwards."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def two(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0
    for j in seq(0, n):
        z[j] = y[j] + 1.0


@proc
def backwards(n: size, x: f32[n], y: f32[n + 1], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i]
    for j in seq(0, n):
        z[j] = y[j + 1]


@proc
def forwards(n: size, x: f32[n], y: f32[n + 1], z: f32[n]):
    for i in seq(0, n):
        y[i + 1] = x[i]
    for j in seq(0, n):
        z[j] = y[j]


@proc
def mismatch(n: size, m: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0
    for j in seq(0, m):
        y[0] = 2.0


@proc
def shifted(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0
    for j in seq(1, n):
        y[j] = 2.0


@proc
def same_by_assert(n: size, m: size, x: f32[n], y: f32[m]):
    assert n == m
    for i in seq(0, n):
        x[i] = 1.0
    for j in seq(0, m):
        y[j] = 2.0


@proc
def apart(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0
    y[0] = 3.0
    for j in seq(0, n):
        y[j] = 2.0


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = two.fuse_loop("i", "j")
    assert str(p) == """\
def two(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM, z: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] = x[i] * 2.0
        z[i] = y[i] + 1.0"""
    assert_roundtrip(p)
    equiv(two, p, [{"n": 1}, {"n": 5}])
    assert str(two.fuse_loop("i")) == str(p)  # loop2 defaults to the next


def test_forward_dependence_ok(equiv):
    equiv(forwards, forwards.fuse_loop("i"), [{"n": 1}, {"n": 4}])


def test_bounds_equal_by_precondition(equiv):
    p = same_by_assert.fuse_loop("i")
    equiv(same_by_assert, p, [{"n": 3, "m": 3}])


def test_reject_reversed_dependence():
    with pytest.raises(SchedulingError) as e:
        backwards.fuse_loop("i", "j")
    msg = str(e.value)
    assert "cannot be fused" in msg and "backwards" in msg


def test_reject_unequal_bounds():
    with pytest.raises(SchedulingError, match="upper bounds"):
        mismatch.fuse_loop("i")
    with pytest.raises(SchedulingError, match="lower bounds"):
        shifted.fuse_loop("i")


def test_reject_not_consecutive():
    with pytest.raises(SchedulingError, match="directly follow"):
        apart.fuse_loop("i", "j")
    with pytest.raises(SchedulingError, match="not a loop"):
        apart.fuse_loop("i")


@proc
def sum_then_use(n: size, x: f32[n], y: f32[n], s: f32):
    for i in seq(0, n):
        s += x[i]
    for j in seq(0, n):
        y[j] = s


def test_reject_partial_reduction_read():
    # fused, y[j] would read a partial sum
    with pytest.raises(SchedulingError, match="cannot be fused"):
        sum_then_use.fuse_loop("i")


def test_named_pair_is_the_first_adjacent_one(equiv):
    # the first 'k' loop is not followed by a 'j' loop; the second one is
    p = two_pairs.fuse_loop("k", "j")
    assert str(p).splitlines()[4:7] == [
        "    for k in seq(0, n):", "        y[k] = x[k]",
        "        z[k] = y[k]"]
    equiv(two_pairs, p, [{"n": 4}])


@proc
def two_pairs(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for k in seq(0, n):
        x[k] = 1.0
    x[0] = 2.0
    for k in seq(0, n):
        y[k] = x[k]
    for j in seq(0, n):
        z[j] = y[j]
