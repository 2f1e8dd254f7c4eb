"""Found by the random-schedule fuzz: fuse_loop accepts fusing a loop that
updates x[i] from y[i] with a loop that rewrites y[i] from x[i]; iteration
j=1 of the first then reads the y[i] that iteration j=0 of the second wrote
(the second part's value is not a function of unchanged buffers: x is
written by the first). Until fixed, the fusion must be refused."""
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


@pytest.mark.xfail(strict=True, reason="fuse_loop accepts an unsafe fusion "
                   "(a second part reading a buffer the first part writes)")
def test_fusion_through_a_written_input_is_refused():
    with pytest.raises(SchedulingError):
        two_updates.fuse_loop(two_updates.find_loop("j"),
                              two_updates.find_loop("j #1"))
