"""fission_after(stmt, n_lifts): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def two_stage(n: size, x: f32[n, 4], y: f32[n, 4], z: f32[n, 4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[i, j] = x[i, j] * 2.0
            z[i, j] = x[i, j] + 1.0


def test_fission_one_level(equiv):
    q = two_stage.fission_after("y[_] = _")
    assert str(q).rstrip() == """\
def two_stage(n: size, x: f32[n, 4] @ DRAM, y: f32[n, 4] @ DRAM,
              z: f32[n, 4] @ DRAM):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[i, j] = x[i, j] * 2.0
        for j in seq(0, 4):
            z[i, j] = x[i, j] + 1.0"""
    equiv(two_stage, q, [{"n": 1}, {"n": 3}])


def test_fission_two_levels_with_producer_consumer(equiv):
    @proc
    def prod_cons(n: size, x: f32[n, 4], y: f32[n, 4], z: f32[n, 4]):
        for i in seq(0, n):
            for j in seq(0, 4):
                y[i, j] = x[i, j] * 2.0
                z[i, j] = y[i, j] + 1.0
    q = prod_cons.fission_after("y[_] = _", n_lifts=2)
    assert str(q).rstrip() == """\
def prod_cons(n: size, x: f32[n, 4] @ DRAM, y: f32[n, 4] @ DRAM,
              z: f32[n, 4] @ DRAM):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[i, j] = x[i, j] * 2.0
    for i in seq(0, n):
        for j in seq(0, 4):
            z[i, j] = y[i, j] + 1.0"""
    equiv(prod_cons, q, [{"n": 1}, {"n": 4}])


def test_fission_through_if(equiv):
    @proc
    def in_if(n: size, m: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            if m > 1:
                x[i] = 1.0
                y[i] = x[i]
            else:
                y[i] = 0.0
    q = in_if.fission_after("x[_] = _", n_lifts=2)
    assert str(q).rstrip() == """\
def in_if(n: size, m: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        if m > 1:
            x[i] = 1.0
    for i in seq(0, n):
        if m > 1:
            y[i] = x[i]
        else:
            y[i] = 0.0"""
    equiv(in_if, q, [{"n": 3, "m": 1}, {"n": 3, "m": 2}])


def test_fission_rejects_backward_dependence():
    @proc
    def carried(n: size, x: f32[n + 1], y: f32[n + 1]):
        for i in seq(0, n):
            x[i] = y[i]
            y[i + 1] = x[i]
    with pytest.raises(SchedulingError, match="cannot be split"):
        carried.fission_after("x[_] = _")


def test_fission_rejects_reduction_read_across_iterations():
    @proc
    def acc(n: size, x: f32[n], s: f32[1], y: f32[n]):
        for i in seq(0, n):
            s[0] += x[i]
            y[i] = s[0]
    with pytest.raises(SchedulingError, match="cannot be split"):
        acc.fission_after("s[_] += _")


def test_fission_rejects_bounds_changed_by_first_part():
    @config
    class Lim:
        hi: size

    @proc
    def cfg_bound(n: size, x: f32[n]):
        for i in seq(0, n):
            for j in seq(0, Lim.hi):
                Lim.hi = 1
                x[i] = 0.0
    with pytest.raises(SchedulingError, match="cannot be split"):
        cfg_bound.fission_after("Lim.hi = _")


def test_fission_rejects_if_condition_changed_by_first_part():
    @config
    class Flag:
        on: size

    @proc
    def cfg_cond(n: size, x: f32[n]):
        if Flag.on == 1:
            Flag.on = 0
            x[0] = 1.0
    with pytest.raises(SchedulingError, match="condition"):
        cfg_cond.fission_after("Flag.on = _")


def test_fission_rejects_use_of_alloc_after_cut():
    @proc
    def tmp(n: size, x: f32[n]):
        for i in seq(0, n):
            t: f32
            t = x[i]
            x[i] = t * 2.0
    with pytest.raises(SchedulingError, match="use t, allocated before it"):
        tmp.fission_after("t = _")
    # lifted, the scalar is shared by all iterations: still not fissionable
    with pytest.raises(SchedulingError, match="cannot be split"):
        tmp.lift_alloc("t : _").fission_after("t = _")


def test_fission_rejects_no_enclosing_loop():
    with pytest.raises(SchedulingError, match="cannot fission 3 level"):
        two_stage.fission_after("y[_] = _", n_lifts=3)


def test_fission_rejects_nothing_after():
    # the last statement of both loops: nothing to split off at any level
    for n_lifts in (1, 2):
        with pytest.raises(SchedulingError,
                           match="nothing after this statement to split"):
            two_stage.fission_after("z[_] = _", n_lifts=n_lifts)

    @proc
    def tail_outer(n: size, x: f32[n, 4], y: f32[n]):
        for i in seq(0, n):
            for j in seq(0, 4):
                x[i, j] = 1.0
            y[i] = 2.0
    # nothing follows in 'j', but 'y[i] = 2.0' follows in 'i': split there
    q = tail_outer.fission_after("x[_] = _", n_lifts=2)
    assert str(q).splitlines()[1:] == [
        "    for i in seq(0, n):", "        for j in seq(0, 4):",
        "            x[i, j] = 1.0", "    for i in seq(0, n):",
        "        y[i] = 2.0"]
    with pytest.raises(SchedulingError, match="nothing after"):
        tail_outer.fission_after("x[_] = _")


def test_cursors_follow_the_statements_they_pointed_to():
    """After fission, cursors to the loop, to statements before the cut and
    to statements after it still point at the same statements."""
    from exo_hl import f32, proc, seq, size

    @proc
    def three(n: size, x: f32[n], y: f32[n], z: f32[n]):
        for i in seq(0, n):
            x[i] = 1.0
            y[i] = 2.0
            z[i] = 3.0

    loop = three.find_loop('i')
    sx, sy, sz = (three.find(pat) for pat in ('x[_] = _', 'y[_] = _',
                                              'z[_] = _'))
    q = three.fission_after('x[_] = _')
    from exo_hl.core_ir.printer import stmt_to_str
    text = lambda c: stmt_to_str(q.forward(c).node()).strip()
    assert text(sx) == "x[i] = 1.0"
    assert text(sy) == "y[i] = 2.0"
    assert text(sz) == "z[i] = 3.0"
    assert text(loop).startswith("for i in seq(0, n):")
    assert q.forward(sy).parent() == q.forward(sz).parent()
    assert q.forward(sx).parent() != q.forward(sy).parent()
    # two levels: the cursor into the inner loop follows too
    @proc
    def nest(n: size, x: f32[n, n], y: f32[n, n]):
        for i in seq(0, n):
            for j in seq(0, n):
                x[i, j] = 1.0
                y[i, j] = 2.0

    cy = nest.find('y[_] = _')
    r = nest.fission_after('x[_] = _', n_lifts=2)
    assert stmt_to_str(r.forward(cy).node()).strip() == "y[i, j] = 2.0"
