"""Two refusals of ``fission_after`` that were over-strict, made sound:

- ``bind_const`` (``hoist``) stopped at another scalar's allocation: the
  binding was lifted out of the loop by its own allocation, then cut right
  after ``t: f32``, which the rest of the body uses. The assignment moves
  past that allocation first (``reorder_stmts``, proven).
- ``compute_root`` of a scalar assigned in both branches of an ``if``:
  the ``if`` as producer did not lift the scalar's allocation (only a
  write did), and ``effects.equal_writes`` could not see that the then-
  and else-assignment never run in one execution of the body (its solver
  query dropped the hypotheses, ``n > 2`` and ``not n > 2``, sharing no
  variable with a scalar's goal). A condition that varies with the loop,
  or two ifs whose conditions can both hold, stays refused.
"""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import bind_const, compute_root


@proc
def scaled(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i] * 0.5
        y[i] = t + 1.0


def test_bind_const_before_a_scalar_allocation(equiv, same_text):
    p = bind_const(scaled, "0.5", "half")
    same_text(p, """
def scaled(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    half: f32 @ DRAM
    half = 0.5
    for i in seq(0, n):
        t: f32 @ DRAM
        t = x[i] * half
        y[i] = t + 1.0""")
    equiv(scaled, p, [{"n": 1}, {"n": 6}])


@proc
def chosen(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        if n > 2:
            t = 1.0
        else:
            t = 2.0
        y[i] = x[i] * t


ROOTED = """
def chosen(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    t: f32 @ DRAM
    for i in seq(0, n):
        if n > 2:
            t = 1.0
        else:
            t = 2.0
    for i in seq(0, n):
        y[i] = x[i] * t"""


@pytest.mark.parametrize("producer", ["if _: _", "t = 1.0", "t = 2.0"])
def test_compute_root_of_a_scalar_set_in_both_branches(producer, equiv,
                                                      same_text):
    p = compute_root(chosen, producer)
    same_text(p, ROOTED)
    equiv(chosen, p, [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 7}])


@proc
def per_row(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        if i < 2:
            t = x[i]
        else:
            t = x[i] * 2.0
        y[i] = t


@proc
def overlapping(n: size, x: f32[n], y: f32[n]):
    t: f32
    for i in seq(0, n):
        if n > 2:
            t = 1.0
        if n > 3:
            t = 2.0
        y[i] = x[i] * t


def test_a_scalar_that_varies_or_two_writers_that_both_run_stay_refused():
    # t differs per i: the first loop would leave only its last value
    with pytest.raises(SchedulingError, match="cannot be split"):
        compute_root(per_row, "if _: _")
    # n = 4 runs both ifs: the second part must read 2.0 in every
    # iteration, fine, but the proof cannot tell the writes apart by
    # their guards, and must not claim they never both run
    with pytest.raises(SchedulingError, match="may write one location"):
        overlapping.fission_after(overlapping.find("if _: _ #1"))
