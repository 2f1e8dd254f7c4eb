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


# out of an else branch (Exo's lift_scope): ``if d: A else: (if c: B else:
# E)`` -> ``if c: (if d: A else: B) else: (if d: A else: E)``

@proc
def else_ifs(n: size, m: size, x: f32[n]):
    for i in seq(0, n):
        if i < 2:
            x[i] = 1.0
        else:
            if m > 1:
                x[i] = 2.0
            else:
                x[i] = x[i] * 3.0


def test_lift_if_out_of_else(equiv):
    q = else_ifs.lift_if("if m > 1: _")
    assert str(q).rstrip() == """\
def else_ifs(n: size, m: size, x: f32[n] @ DRAM):
    for i in seq(0, n):
        if m > 1:
            if i < 2:
                x[i] = 1.0
            else:
                x[i] = 2.0
        elif i < 2:
            x[i] = 1.0
        else:
            x[i] = x[i] * 3.0"""
    equiv(else_ifs, q, [{"n": 1, "m": 1}, {"n": 5, "m": 1},
                        {"n": 5, "m": 2}])
    # and on out of the loop, as a second level
    r = else_ifs.lift_if("if m > 1: _", n_lifts=2)
    assert str(r).startswith(
        "def else_ifs(n: size, m: size, x: f32[n] @ DRAM):\n"
        "    if m > 1:\n        for i in seq(0, n):\n")
    equiv(else_ifs, r, [{"n": 5, "m": 1}, {"n": 5, "m": 2}])


def test_lift_if_out_of_else_without_inner_else(equiv):
    @proc
    def one_sided(n: size, m: size, x: f32[n]):
        for i in seq(0, n):
            if i < 2:
                x[i] = 1.0
            else:
                if m > 1:
                    x[i] = 2.0
    q = one_sided.lift_if("if m > 1: _")
    assert str(q).rstrip() == """\
def one_sided(n: size, m: size, x: f32[n] @ DRAM):
    for i in seq(0, n):
        if m > 1:
            if i < 2:
                x[i] = 1.0
            else:
                x[i] = 2.0
        elif i < 2:
            x[i] = 1.0"""
    equiv(one_sided, q, [{"n": 5, "m": 1}, {"n": 5, "m": 2}])


def test_cursors_follow_out_of_else():
    from exo_hl.core_ir.printer import stmt_to_str
    cd, cc, ca, cb, ce = (else_ifs.find('if i < 2: _'),
                          else_ifs.find('if m > 1: _'),
                          else_ifs.find('x[_] = 1.0'),
                          else_ifs.find('x[_] = 2.0'),
                          else_ifs.find('x[_] = x[_] * 3.0'))
    q = else_ifs.lift_if('if m > 1: _')
    text = lambda c: stmt_to_str(q.forward(c).node()).strip()
    assert text(cc).startswith("if m > 1:")
    assert text(cd).startswith("if i < 2:")
    assert q.forward(cd).parent() == q.forward(cc)
    assert text(ca) == "x[i] = 1.0"
    assert text(cb) == "x[i] = 2.0"
    assert q.forward(cb).parent() == q.forward(cd)
    assert text(ce) == "x[i] = x[i] * 3.0"
    assert q.forward(ce).parent().parent() == q.forward(cc)


def test_lift_if_out_of_else_rejections():
    @proc
    def not_alone(n: size, m: size, x: f32[n]):
        for i in seq(0, n):
            if i < 2:
                x[i] = 1.0
            else:
                x[i] = 0.0
                if m > 1:
                    x[i] = 2.0
    with pytest.raises(SchedulingError, match="only statement"):
        not_alone.lift_if("if m > 1: _")

    @proc
    def variant_else(n: size, m: size, x: f32[n]):
        for i in seq(0, n):
            if m > 1:
                x[i] = 1.0
            else:
                if i < 2:
                    x[i] = 2.0
    with pytest.raises(SchedulingError, match="iterator"):
        variant_else.lift_if("if i < 2: _", n_lifts=2)
