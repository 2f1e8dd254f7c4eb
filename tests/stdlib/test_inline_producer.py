"""inline_producer: inline_assign + delete_buffer, each checked."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import inline_producer


@proc
def sc(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i] * 2.0
        y[i] = t + 1.0


def test_inline_producer_prints_and_agrees(equiv, same_text):
    p = inline_producer(sc, 't = _')
    same_text(p, """
def sc(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] = x[i] * 2.0 + 1.0""")
    equiv(sc, p, [{"n": 1}, {"n": 4}])


@proc
def clobber(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i] * 2.0
        x[i] = 0.0
        y[i] = t + 1.0


def test_inline_producer_rejects_a_changed_input():
    # x[i] changes between the producer and the read of t
    with pytest.raises(SchedulingError):
        inline_producer(clobber, 't = _')


@proc
def blur1d(n: size, x: f32[n + 2], y: f32[n]):
    t: f32[n + 2]
    for i in seq(0, n + 2):
        t[i] = x[i] * 2.0
    for j in seq(0, n):
        y[j] = t[j] + t[j + 1] + t[j + 2]


def test_inline_producer_of_a_loop(equiv, same_text):
    p = inline_producer(blur1d, 'i')
    same_text(p, """
def blur1d(n: size, x: f32[n + 2] @ DRAM, y: f32[n] @ DRAM):
    for j in seq(0, n):
        y[j] = x[j] * 2.0 + x[j + 1] * 2.0 + x[j + 2] * 2.0""")
    equiv(blur1d, p, [{"n": 1}, {"n": 4}])


@proc
def partial(n: size, x: f32[n + 2], y: f32[n]):
    t: f32[n + 2]
    for i in seq(0, n + 1):
        t[i] = x[i] * 2.0
    for j in seq(0, n):
        y[j] = t[j] + t[j + 2]        # t[n + 1] is never computed


def test_inline_producer_of_a_loop_rejects_a_read_it_does_not_produce():
    with pytest.raises(SchedulingError, match="lies in the range"):
        inline_producer(partial, 'i')


def test_inline_producer_rejects_a_producer_that_is_no_cursor_or_pattern():
    with pytest.raises(SchedulingError, match="expected a producer"):
        inline_producer(sc, None)
