"""shift_loop: printed result, equivalence, rejected arguments."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def off(n: size, x: f32[n + 2], y: f32[n + 2]):
    for i in seq(2, n + 2):
        y[i] = x[i - 1] + x[i - 2]


def test_prints_and_equiv(equiv):
    p = off.shift_loop("i", 0)
    assert str(p) == """\
def off(n: size, x: f32[n + 2] @ DRAM, y: f32[n + 2] @ DRAM):
    for i in seq(0, n):
        y[i + 2] = x[i + 1] + x[i]"""
    q = off.shift_loop("i", 5)
    assert "for i in seq(5, n + 5):" in str(q)
    equiv(off, p, [{"n": 1}, {"n": 4}])
    equiv(off, q, [{"n": 1}, {"n": 4}])


@pytest.mark.parametrize("bad", [-1, 1.5, "0", None, True])
def test_reject_bad_new_lo(bad):
    with pytest.raises(SchedulingError, match="new_lo"):
        off.shift_loop("i", bad)
