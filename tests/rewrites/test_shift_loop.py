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


@pytest.mark.parametrize("bad", [-1, 1.5, None, True, "-1", "n - 2",
                                 2**31, 2**70, "n + 4294967296"])
def test_reject_bad_new_lo(bad):
    with pytest.raises(SchedulingError, match="new_lo"):
        off.shift_loop("i", bad)


def test_expression_new_lo(equiv):
    p = off.shift_loop("i", "n")
    assert str(p) == """\
def off(n: size, x: f32[n + 2] @ DRAM, y: f32[n + 2] @ DRAM):
    for i in seq(n, 2 * n):
        y[i - n + 2] = x[i - n + 1] + x[i - n]"""
    equiv(off, p, [{"n": 1}, {"n": 5}])
    q = off.shift_loop("i", "n - 1 + 1")
    assert "for i in seq(n, 2 * n):" in str(q)


@proc
def off_guarded(n: size, x: f32[n + 2], y: f32[n + 2]):
    assert n >= 3
    for i in seq(2, n + 2):
        y[i] = x[i - 1] + x[i - 2]


def test_expression_new_lo_proven_non_negative_from_precondition(equiv):
    # n - 3 >= 0 holds only thanks to the assertion
    p = off_guarded.shift_loop("i", "n - 3")
    assert "for i in seq(n - 3, 2 * n - 3):" in str(p)
    equiv(off_guarded, p, [{"n": 3}, {"n": 6}])


@pytest.mark.parametrize("bad", ["m", "x[0]", "n / 2.0", "i"])
def test_reject_unusable_expression(bad):
    with pytest.raises(SchedulingError, match="shift_loop"):
        off.shift_loop("i", bad)


def test_largest_new_lo_keeps_the_c_exact(equiv):
    """new_lo = 2**63 - 2 was accepted and the compiled loop's upper bound
    overflowed (undefined behaviour; wrong results); new_lo is now a 32-bit
    value, whose shifted bounds fit the 64-bit int_fast32_t."""
    p = off.shift_loop("i", 2**31 - 1)
    assert "for i in seq(2147483647, n + 2147483647):" in str(p)
    equiv(off, p, [{"n": 1}, {"n": 4}])


def test_deeply_nested_new_lo_is_a_scheduling_error():
    with pytest.raises(SchedulingError, match="nested too deeply"):
        off.shift_loop("i", "+".join(["n"] * 5000))
