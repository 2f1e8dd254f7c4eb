"""add_guard(stmt, cond): printed result, semantics, rejected conditions."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def simple(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0


def test_add_guard_prints(equiv):
    q = simple.add_guard("y[_] = _", "i < n - 1")
    assert str(q).rstrip() == """\
def simple(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        if i < n - 1:
            y[i] = x[i] * 2.0
        else:
            y[i] = x[i] * 2.0"""
    equiv(simple, q, [{"n": 1}, {"n": 4}])
    # the cursor of the guarded statement follows it into the then-branch
    c = simple.find("y[_] = _")
    assert q.forward(c).node() == c.node()


def test_add_guard_on_loop_gets_fresh_symbols(equiv):
    q = simple.add_guard("for i in _: _", "n > 2")
    loops = q.find("for i in _: _", many=True)
    assert len(loops) == 2
    assert loops[0].node().iter is not loops[1].node().iter
    equiv(simple, q, [{"n": 1}, {"n": 3}])


def test_add_guard_rejects_data_dependent_condition():
    with pytest.raises(SchedulingError, match="invalid condition.*depend on data"):
        simple.add_guard("y[_] = _", "x[i] > 0.0")


def test_add_guard_rejects_unknown_name():
    with pytest.raises(SchedulingError, match="invalid condition"):
        simple.add_guard("y[_] = _", "j < 2")
    # an iterator is only in scope inside its loop
    with pytest.raises(SchedulingError, match="invalid condition"):
        simple.add_guard("for i in _: _", "i < 2")


def test_add_guard_rejects_non_bool_and_bad_syntax():
    with pytest.raises(SchedulingError, match="bool"):
        simple.add_guard("y[_] = _", "i + 1")
    with pytest.raises(SchedulingError, match="cannot parse"):
        simple.add_guard("y[_] = _", "i <")


def test_add_guard_rejects_allocation():
    @proc
    def alloc(n: size, x: f32[n]):
        t: f32
        t = x[0]
        x[0] = t
    with pytest.raises(SchedulingError, match="binding of 't'"):
        alloc.add_guard("t : _", "n > 1")
