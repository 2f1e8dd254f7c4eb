"""Found by the random-schedule fuzz: fuse_loop accepts fusing a loop that
updates x[i] from y[i] with a loop that rewrites y[i] from x[i]; iteration
j=1 of the first then reads the y[i] that iteration j=0 of the second wrote
(the second part's value is not a function of unchanged buffers: x is
written by the first). The equal-values rule missed the first part's
reduction because it sat under an ``if``: the walk over the first part
dropped a refusal found in an ``if`` body (a falsy ``Result`` followed by
``or``). Now every statement under loops and ifs is visited."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def two_updates(N: size, x: f32[N], y: f32[N]):
    for i in seq(0, N):
        for j in seq(0, 2):
            if N > 2:
                x[i] += y[i]
        for j in seq(0, 2):
            y[i] = x[i] * 0.5 + 1.0


def test_fusion_through_a_written_input_is_refused():
    with pytest.raises(SchedulingError, match="Reduce statement"):
        two_updates.fuse_loop(two_updates.find_loop("j"),
                              two_updates.find_loop("j #1"))


@proc
def guarded_else(N: size, x: f32[N], y: f32[N]):
    for i in seq(0, N):
        for j in seq(0, 2):
            if N > 2:
                pass
            else:
                x[i] += y[i]
        for j in seq(0, 2):
            y[i] = x[i] * 0.5 + 1.0


def test_fusion_through_a_reduction_in_an_else_branch_is_refused():
    with pytest.raises(SchedulingError, match="Reduce statement"):
        guarded_else.fuse_loop(guarded_else.find_loop("j"),
                               guarded_else.find_loop("j #1"))
