"""inline_loop(loop): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size, ui16


@proc
def blur1d(n: size, x: f32[n + 2], y: f32[n]):
    t: f32[n + 2]
    for i in seq(0, n + 2):
        t[i] = x[i] * 2.0
    for j in seq(0, n):
        y[j] = t[j] + t[j + 1] + t[j + 2]


def test_inline_loop_1d(equiv):
    q = blur1d.inline_loop('i')
    assert str(q).rstrip() == """\
def blur1d(n: size, x: f32[n + 2] @ DRAM, y: f32[n] @ DRAM):
    t: f32[n + 2] @ DRAM
    for i in seq(0, n + 2):
        t[i] = x[i] * 2.0
    for j in seq(0, n):
        y[j] = x[j] * 2.0 + x[j + 1] * 2.0 + x[j + 2] * 2.0"""
    equiv(blur1d, q, [{"n": 1}, {"n": 5}])
    # the nest is now a dead store
    r = q.eliminate_dead_code(q.find_loop('i')).delete_buffer('t : _')
    assert "t" not in str(r).split("\n", 1)[1].replace("\n", " ").split()
    equiv(blur1d, r, [{"n": 3}])


@proc
def shifted2d(n: size, m: size, x: f32[n + 1, m + 3], y: f32[n, m]):
    t: f32[n + 1, m + 3]
    for a in seq(0, n + 1):
        for b in seq(1, m + 2):
            t[a, b + 1] = x[a, b] + x[a, b + 1]
    for i in seq(0, n):
        for j in seq(0, m):
            y[i, j] = t[i, j + 2] * t[i + 1, j + 2]


def test_inline_loop_2d_with_offsets(equiv):
    q = shifted2d.inline_loop('a')
    last = "".join(str(q).split("for j in seq(0, m):")[1].split())
    assert last == "".join((
        "y[i, j] = ((x[i, j + 1] + x[i, j + 2]) * "
        "(x[i + 1, j + 1] + x[i + 1, j + 2]))").split())
    equiv(shifted2d, q, [{"n": 1, "m": 1}, {"n": 3, "m": 2}])


def test_inline_loop_rejects_a_read_outside_what_the_nest_assigns():
    @proc
    def short(n: size, x: f32[n + 3], y: f32[n]):
        t: f32[n + 3]
        for i in seq(0, n + 2):
            t[i] = x[i]
        for j in seq(0, n):
            y[j] = t[j + 3]          # t[n + 2] is never assigned
    with pytest.raises(SchedulingError, match="lies in the range"):
        short.inline_loop('i')


def test_inline_loop_rejects_a_changed_input():
    @proc
    def clobber(n: size, x: f32[n], y: f32[n]):
        t: f32[n]
        for i in seq(0, n):
            t[i] = x[i] * 2.0
        for j in seq(0, n):
            x[j] = 0.0
            y[j] = t[j]
    with pytest.raises(SchedulingError, match="is written after the nest"):
        clobber.inline_loop('i')


def test_inline_loop_rejects_other_uses_of_the_buffer():
    @proc
    def rewritten(n: size, x: f32[n], y: f32[n]):
        t: f32[n]
        for i in seq(0, n):
            t[i] = x[i]
        t[0] = 1.0
        for j in seq(0, n):
            y[j] = t[j]
    with pytest.raises(SchedulingError, match="may only be read"):
        rewritten.inline_loop('i')

    @proc
    def before(n: size, x: f32[n], y: f32[n]):
        t: f32[n]
        t[0] = 1.0
        for i in seq(1, n):
            t[i] = x[i]
        for j in seq(0, n):
            y[j] = t[j]
    with pytest.raises(SchedulingError, match="between its allocation"):
        before.inline_loop('i')

    @proc
    def arg(n: size, t: f32[n], x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t[i] = x[i]
        for j in seq(0, n):
            y[j] = t[j]
    with pytest.raises(SchedulingError, match="must be allocated"):
        arg.inline_loop('i')


def test_inline_loop_rejects_a_producer_that_is_not_one_value_per_location():
    @proc
    def strided(n: size, x: f32[2 * n], y: f32[n]):
        t: f32[2 * n]
        for i in seq(0, n):
            t[2 * i] = x[i]
        for j in seq(0, n):
            y[j] = t[2 * j]
    with pytest.raises(SchedulingError, match="one\\s+loop variable"):
        strided.inline_loop('i')

    @proc
    def diag(n: size, x: f32[n, n], y: f32[n]):
        t: f32[n, n]
        for i in seq(0, n):
            t[i, i] = x[i, i]
        for j in seq(0, n):
            y[j] = t[j, j]
    with pytest.raises(SchedulingError):
        diag.inline_loop('i')

    @proc
    def recur(n: size, x: f32[n + 1], y: f32[n]):
        t: f32[n + 1]
        t[0] = 0.0
        for i in seq(1, n + 1):
            t[i] = t[i - 1] + x[i]
        for j in seq(0, n):
            y[j] = t[j + 1]
    with pytest.raises(SchedulingError):
        recur.inline_loop('i')

    # an offset that moves with the loop writes t[1] twice (i = 0, 1): it
    # was refused only by the final well-formedness check, vaguely
    @proc
    def moving(n: size, x: f32[n], y: f32[n]):
        assert n % 2 == 0
        t: f32[n + 1]
        for i in seq(0, n):
            t[i + i % 2] = x[i]
        for j in seq(0, n):
            y[j] = t[j]
    with pytest.raises(SchedulingError, match="does not depend on the "
                       "nest's loops"):
        moving.inline_loop('i')


def test_inline_loop_rejects_a_buffer_that_wraps_the_value():
    @proc
    def wrap(n: size, x: ui16[n], y: ui16[n]):
        t: ui16[n]
        for i in seq(0, n):
            t[i] = x[i] + x[i]           # wraps modulo 2**16 into t
        for j in seq(0, n):
            y[j] = t[j] / 2
    with pytest.raises(SchedulingError, match="exact value"):
        wrap.inline_loop('i')


@proc
def _set0(v: [f32][4]):
    v[0] = 7.0


def test_inline_loop_rejects_an_input_changed_through_a_window():
    # a window bound before the nest writes the producer's input after it
    @proc
    def via_window(x: f32[4], y: f32[4]):
        t: f32[4]
        w = x[0:4]
        for i in seq(0, 4):
            t[i] = x[i] * 2.0
        w[0] = 5.0
        for j in seq(0, 4):
            y[j] = t[j]
    with pytest.raises(SchedulingError,
                       match=r"'w' \(a window of 'x'\), which 'x\[i\] \* 2.0' "
                             r"reads, is written after the nest"):
        via_window.inline_loop('i')

    # the producer reads through the window; the buffer is written directly
    @proc
    def reads_window(x: f32[4], y: f32[4]):
        t: f32[4]
        w = x[0:4]
        for i in seq(0, 4):
            t[i] = w[i] * 2.0
        x[0] = 5.0
        for j in seq(0, 4):
            y[j] = t[j]
    with pytest.raises(SchedulingError, match="is written after the nest"):
        reads_window.inline_loop('i')

    # a window of a window, reduced into after the nest
    @proc
    def nested(x: f32[2, 4], y: f32[4]):
        t: f32[4]
        w = x[0:2, 0:4]
        v = w[1, 0:4]
        for i in seq(0, 4):
            t[i] = x[1, i]
        v[2] += 1.0
        for j in seq(0, 4):
            y[j] = t[j]
    with pytest.raises(SchedulingError, match="is written after the nest"):
        nested.inline_loop('i')

    # a callee given the window writes the input
    @proc
    def callee(x: f32[4], y: f32[4]):
        t: f32[4]
        w = x[0:4]
        for i in seq(0, 4):
            t[i] = x[i] * 2.0
        _set0(w)
        for j in seq(0, 4):
            y[j] = t[j]
    with pytest.raises(SchedulingError, match="passed on after the nest"):
        callee.inline_loop('i')


def test_inline_loop_keeps_windows_of_other_buffers(equiv):
    @proc
    def other(x: f32[4], z: f32[4], y: f32[4]):
        t: f32[4]
        w = z[0:4]
        for i in seq(0, 4):
            t[i] = x[i] * 2.0
        w[0] = 5.0
        _set0(w)
        for j in seq(0, 4):
            y[j] = t[j] + z[j]
    q = other.inline_loop('i')
    assert "y[j] = x[j] * 2.0 + z[j]" in str(q)
    equiv(other, q, [{}])
