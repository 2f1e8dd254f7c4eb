"""remove_loop: i unused, body idempotent, at least one iteration."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def redundant(n: size, x: f32[4], y: f32[4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[j] = x[j]


@proc
def reduces(n: size, x: f32[4], y: f32[4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[j] += x[j]


@proc
def self_read(n: size, y: f32[4]):
    for i in seq(0, n):
        y[0] = y[1] + y[0]


@proc
def maybe_empty(n: size, x: f32[4], y: f32[4]):
    for i in seq(0, n - 1):
        for j in seq(0, 4):
            y[j] = x[j]


@proc
def uses_iter(n: size, y: f32[n]):
    for i in seq(0, n):
        y[i] = 1.0


def test_prints_and_equiv(equiv):
    p = redundant.remove_loop("i")
    assert str(p) == """\
def redundant(n: size, x: f32[4] @ DRAM, y: f32[4] @ DRAM):
    for j in seq(0, 4):
        y[j] = x[j]"""
    equiv(redundant, p, [{"n": 1}, {"n": 3}])


def test_reject_reduction():
    with pytest.raises(SchedulingError) as e:
        reduces.remove_loop("i")
    assert "not idempotent" in str(e.value) and "reduces" in str(e.value)


def test_reject_reads_what_it_writes():
    with pytest.raises(SchedulingError, match="not idempotent"):
        self_read.remove_loop("i")


def test_reject_maybe_zero_iterations():
    with pytest.raises(SchedulingError, match="zero times"):
        maybe_empty.remove_loop("i")


def test_reject_iterator_used():
    with pytest.raises(SchedulingError, match="used in the body"):
        uses_iter.remove_loop("i")


def test_cursor_into_body_forwards():
    c = redundant.find("y[_] = _")
    p = redundant.remove_loop("i")
    assert p.forward(c).path() == (("body", 0), ("body", 0))
