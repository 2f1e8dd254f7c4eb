"""lift_if(if_stmt, n_lifts): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def branchy(n: size, m: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if m > 2:
            y[i] = x[i]
        else:
            y[i] = 2.0 * x[i]


def test_lift_if_out_of_loop(equiv):
    q = branchy.lift_if("if _: _")
    assert str(q).rstrip() == """\
def branchy(n: size, m: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    if m > 2:
        for i in seq(0, n):
            y[i] = x[i]
    else:
        for i in seq(0, n):
            y[i] = 2.0 * x[i]"""
    equiv(branchy, q, [{"n": 1, "m": 1}, {"n": 4, "m": 3}])


@proc
def two_levels(n: size, m: size, x: f32[n, 4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            if m == 1:
                x[i, j] += 1.0


def test_lift_if_two_levels(equiv):
    q = two_levels.lift_if("if _: _", n_lifts=2)
    assert str(q).rstrip() == """\
def two_levels(n: size, m: size, x: f32[n, 4] @ DRAM):
    if m == 1:
        for i in seq(0, n):
            for j in seq(0, 4):
                x[i, j] += 1.0"""
    equiv(two_levels, q, [{"n": 2, "m": 1}, {"n": 3, "m": 2}])


def test_lift_if_out_of_if(equiv):
    @proc
    def nested_ifs(n: size, m: size, x: f32[n]):
        for i in seq(0, n):
            if i < 2:
                if m > 1:
                    x[i] = 1.0
                else:
                    x[i] = 2.0
            else:
                x[i] = 3.0
    q = nested_ifs.lift_if("if m > 1: _")
    assert str(q).rstrip() == """\
def nested_ifs(n: size, m: size, x: f32[n] @ DRAM):
    for i in seq(0, n):
        if m > 1:
            if i < 2:
                x[i] = 1.0
            else:
                x[i] = 3.0
        elif i < 2:
            x[i] = 2.0
        else:
            x[i] = 3.0"""
    equiv(nested_ifs, q, [{"n": 1, "m": 1}, {"n": 4, "m": 2}])


def test_lift_if_rejects_iterator_dependent_condition():
    @proc
    def dep(n: size, x: f32[n]):
        for i in seq(0, n):
            if i < 2:
                x[i] = 0.0
    with pytest.raises(SchedulingError, match="depends on the loop iterator 'i'"):
        dep.lift_if("if _: _")


def test_lift_if_rejects_config_written_in_loop():
    @config
    class Mode:
        flag: size

    @proc
    def cfg_dep(n: size, x: f32[n]):
        for i in seq(0, n):
            if Mode.flag == 1:
                x[i] = 0.0
                Mode.flag = 2
    with pytest.raises(SchedulingError,
                       match="configuration state read by the condition"):
        cfg_dep.lift_if("if _: _")


def test_lift_if_rejects_non_sole_statement():
    @proc
    def two(n: size, m: size, x: f32[n]):
        for i in seq(0, n):
            x[i] = 1.0
            if m > 1:
                x[i] = 0.0
    with pytest.raises(SchedulingError, match="only statement"):
        two.lift_if("if _: _")


def test_cursors_follow_through_the_swap():
    from exo_hl import f32, proc, seq, size
    from exo_hl.core_ir.printer import stmt_to_str

    @proc
    def branchy(n: size, m: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            if m > 3:
                x[i] = 1.0
            else:
                y[i] = 2.0

    cl, ci, ca, cb = (branchy.find_loop('i'), branchy.find('if _: _'),
                      branchy.find('x[_] = _'), branchy.find('y[_] = _'))
    q = branchy.lift_if('if _: _')
    text = lambda c: stmt_to_str(q.forward(c).node()).strip()
    assert text(ci).startswith("if m > 3:")
    assert text(cl).startswith("for i in seq(0, n):")
    assert text(ca) == "x[i] = 1.0"
    assert text(cb) == "y[i] = 2.0"
    assert q.forward(cl).parent() == q.forward(ci)
