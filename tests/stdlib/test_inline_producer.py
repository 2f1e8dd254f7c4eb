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
