"""inline_assign(assign): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

import numpy as np

from exo_hl import (SchedulingError, config, f32, i8, i16, i32, index, proc,
                    seq, size, ui8)


@proc
def twice(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i] * 2.0
        y[i] = t + 1.0
        y[i] += t


def test_inline_assign_drops_dead_write(equiv):
    q = twice.inline_assign("t = _")
    assert str(q).rstrip() == """\
def twice(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        t: f32 @ DRAM
        y[i] = x[i] * 2.0 + 1.0
        y[i] += x[i] * 2.0"""
    equiv(twice, q, [{"n": 1}, {"n": 4}])
    assert "t:" not in str(q.delete_buffer("t"))


def test_inline_assign_keeps_write_still_read(equiv):
    @proc
    def arg(n: size, x: f32[n], y: f32[n], z: f32[n]):
        for i in seq(0, n):
            z[i] = x[i] + 1.0
            for j in seq(0, 2):
                y[i] += z[i] * 3.0
    q = arg.inline_assign("z[_] = _")
    assert str(q).rstrip().splitlines()[-3:] == [
        "        z[i] = x[i] + 1.0",       # an argument: the caller sees it
        "        for j in seq(0, 2):",
        "            y[i] += (x[i] + 1.0) * 3.0"]
    equiv(arg, q, [{"n": 3}])


def test_inline_assign_stops_where_the_value_changes(equiv):
    @proc
    def later(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32[2]
            t[0] = x[i]
            t[1] = t[0] * 2.0
            x[i] = t[0] + t[1]     # rewritten (read before the write) ...
            y[i] = t[0]            # ... but not this one: x[i] changed
    q = later.inline_assign("t[0] = _")
    assert str(q).rstrip().splitlines()[-4:] == [
        "        t[0] = x[i]",
        "        t[1] = x[i] * 2.0",
        "        x[i] = x[i] + t[1]",
        "        y[i] = t[0]"]
    equiv(later, q, [{"n": 3}])


def test_inline_assign_rejects_value_changed_before_read():
    @proc
    def clobber(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32
            t = x[i]
            x[i] = 0.0
            y[i] = t
    with pytest.raises(SchedulingError, match="no following read"):
        clobber.inline_assign("t = _")


def test_inline_assign_rejects_location_overwritten():
    @proc
    def over(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32
            t = x[i]
            t = 3.0
            y[i] = t
    with pytest.raises(SchedulingError, match="no following read"):
        over.inline_assign("t = x[_]")


def test_inline_assign_rejects_self_reading_value():
    @proc
    def selfref(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            x[i] = x[i] * 2.0
            y[i] = x[i]
    with pytest.raises(SchedulingError, match="reads the location"):
        selfref.inline_assign("x[_] = _")


def test_inline_assign_rejects_precision_change():
    @proc
    def narrow(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: i8
            t = x[i]
            y[i] = t
    with pytest.raises(SchedulingError, match="exact value"):
        narrow.inline_assign("t = _")


def test_inline_assign_rejects_config_indices_and_non_assign():
    @config
    class IaCfg:
        k: index

    @proc
    def cfg(n: size, x: f32[n], y: f32[4]):
        IaCfg.k = 1
        y[IaCfg.k] = x[0]
        IaCfg.k = 2
        x[0] = y[IaCfg.k]
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg.inline_assign("y[_] = _")
    with pytest.raises(SchedulingError, match="expected an assignment"):
        twice.inline_assign("y[_] += _")


def test_inline_assign_integer_division_by_literal(equiv):
    # (x + x') / 2.0 on i8 is the truncating integer division by 2: its
    # range [-128, 127] fits i8, so the i8 location held the exact value
    @proc
    def halve(n: size, x: i8[n + 1], y: i8[n]):
        for i in seq(0, n):
            t: i8
            t = (x[i] + x[i + 1]) / 2.0
            y[i] = t * 3.0 - t / 2.0
    q = halve.inline_assign("t = _")
    assert str(q).rstrip().splitlines()[-2:] == [
        "        t: i8 @ DRAM",
        "        y[i] = (x[i] + x[i + 1]) / 2.0 * 3.0 - (x[i] + x[i + 1]) / "
        "2.0 / 2.0"]
    equiv(halve, q, [{"n": 1}, {"n": 5}])
    rng = np.random.default_rng(1)          # the whole i8 range too
    x = rng.integers(-128, 128, size=9).astype(np.int8)
    x[:4] = [-128, -128, 127, 127]
    outs = []
    for p in (halve, q):
        for run in (p.interpret, p.compile()):
            y = np.zeros(8, np.int8)
            run(8, x.copy(), y)
            outs.append(y)
    for y in outs[1:]:
        np.testing.assert_array_equal(y, outs[0])


def test_inline_assign_rejects_division_result_out_of_range():
    @proc
    def three(n: size, x: i8[n + 2], y: i16[n]):
        for i in seq(0, n):
            t: i8
            t = (x[i] + x[i + 1] + x[i + 2]) / 2.0    # [-192, 190]
            y[i] = t / 2.0
    with pytest.raises(SchedulingError, match=r"exact value.*-192, 190"):
        three.inline_assign("t = _")

    @proc
    def trunc(n: size, x: i8[n + 1], y: i16[n]):
        for i in seq(0, n):
            t: i8
            t = (x[i] + x[i + 1]) / 1.5     # the integer 1 in i32
            y[i] = t / 2.0
    with pytest.raises(SchedulingError, match=r"exact value.*-256, 254"):
        trunc.inline_assign("t = _")


def test_inline_assign_remainder_ranges_are_computed_values(equiv):
    # x % 0 == x: a divisor that may be zero does not bound the result
    @proc
    def rem(n: size, x: i16[n], d: i8[n], y: i32[n]):
        for i in seq(0, n):
            t: i8
            t = x[i] % d[i]
            y[i] = t / 2
    with pytest.raises(SchedulingError, match="exact value"):
        rem.inline_assign("t = _")

    # x * x wraps in i32, so its remainder may be negative: not a ui8 ...
    @proc
    def sq(n: size, x: i32[n], y: i32[n]):
        for i in seq(0, n):
            t: ui8
            t = x[i] * x[i] % 100
            y[i] = t / 2
    with pytest.raises(SchedulingError, match="exact value"):
        sq.inline_assign("t = _")

    # ... but |x * x % 100| <= 99 whatever the wrap: an i8 holds it
    @proc
    def sq8(n: size, x: i32[n], y: i32[n]):
        for i in seq(0, n):
            t: i8
            t = x[i] * x[i] % 100
            y[i] = t / 2
    q = sq8.inline_assign("t = _")
    assert str(q).rstrip().splitlines()[-1] == \
        "        y[i] = x[i] * x[i] % 100.0 / 2.0"
    equiv(sq8, q, [{"n": 4}])


@proc
def _put(a: f32, b: [f32][1]):
    b[0] = a


def test_inline_assign_leaves_a_scalar_passed_to_a_call(equiv):
    """A data scalar passed to a call is a reference, not a value: the
    call keeps ``t`` (and so the assignment), the other reads are
    inlined; with only such reads there is nothing to inline (it was
    refused as a procedure 'not well formed', an expression in the
    call's scalar argument)."""
    @proc
    def by_ref(n: size, x: f32[n], y: f32[n], z: f32[n]):
        for i in seq(0, n):
            t: f32
            t = x[i] * 2.0
            y[i] = t
            _put(t, z[i:i + 1])
    q = by_ref.inline_assign("t = _")
    assert str(q).rstrip().splitlines()[-4:] == [
        "        t: f32 @ DRAM",
        "        t = x[i] * 2.0",
        "        y[i] = x[i] * 2.0",
        "        _put(t, z[i:i + 1])"]
    equiv(by_ref, q, [{"n": 1}, {"n": 4}])

    @proc
    def only_call(n: size, x: f32[n], z: f32[n]):
        for i in seq(0, n):
            t: f32
            t = x[i] * 2.0
            _put(t, z[i:i + 1])
    with pytest.raises(SchedulingError, match="no following read of t"):
        only_call.inline_assign("t = _")
