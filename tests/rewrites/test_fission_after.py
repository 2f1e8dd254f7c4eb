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



def _run_cfg(p, field, start, x):
    """Run ``p`` from config value ``start`` of ``field``: (x, config)."""
    from exo_hl.core_ir.interpret import ConfigState
    x = x.copy()
    st = ConfigState({field: start})
    p.interpret(x, config_state=st)
    return x, dict(st)


def test_fission_in_else_rejects_then_branch_changing_condition():
    """A cut in the else branch: the second 'if' (on 'not c') is evaluated
    after the then-body too, which may not change the condition."""
    import numpy as np

    @config
    class Sel:
        x: size

    @proc
    def then_writes(x: f32[4]):
        if Sel.x == 0:
            Sel.x = 1
        else:
            x[0] = 1.0
            x[1] = 2.0
    with pytest.raises(SchedulingError, match="statements of the then-branch"
                       ".*may change it"):
        then_writes.fission_after("x[0] = _")

    # the same through a callee
    @proc
    def set_sel(v: size):
        Sel.x = v

    @proc
    def then_calls(x: f32[4]):
        if Sel.x == 0:
            set_sel(2)
        else:
            x[0] = 1.0
            x[1] = 2.0
    with pytest.raises(SchedulingError, match="then-branch.*may change it"):
        then_calls.fission_after("x[0] = _")

    # the then-body writes only the value the condition already implies:
    # the condition is unchanged, the split is accepted and equivalent
    @proc
    def then_keeps(x: f32[4]):
        if Sel.x == 0:
            Sel.x = 0
            x[3] = 3.0
        else:
            x[0] = 1.0
            x[1] = 2.0
    q = then_keeps.fission_after("x[0] = _")
    assert str(q).splitlines()[1:] == [
        "    if Sel.x == 0:", "        Sel.x = 0", "        x[3] = 3.0",
        "    else:", "        x[0] = 1.0", "    if not Sel.x == 0:",
        "        x[1] = 2.0"]
    x = np.array([1, -2, 3, -4], np.float32)
    for start in (0, 1, 5):
        want, got = (_run_cfg(p, Sel.x, start, x) for p in (then_keeps, q))
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]


def test_fission_in_then_checks_only_what_runs_before_the_condition():
    """A cut in the then-branch: only the statements before the cut run
    before the condition is evaluated again; the else body does not (it
    may change the condition)."""
    import numpy as np

    @config
    class Sel:
        x: size

    @proc
    def else_writes(x: f32[4]):
        if Sel.x == 0:
            x[0] = 1.0
            x[1] = 2.0
        else:
            Sel.x = 0
    q = else_writes.fission_after("x[0] = _")
    assert str(q).splitlines()[1:] == [
        "    if Sel.x == 0:", "        x[0] = 1.0", "    if Sel.x == 0:",
        "        x[1] = 2.0", "    else:", "        Sel.x = 0"]
    x = np.array([1, -2, 3, -4], np.float32)
    for start in (0, 1):
        want, got = (_run_cfg(p, Sel.x, start, x) for p in (else_writes, q))
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]

    @proc
    def pre_writes(x: f32[4]):
        if Sel.x == 0:
            x[0] = 1.0
            Sel.x = 1
            x[1] = 2.0
    with pytest.raises(SchedulingError, match="then-branch.*may change it"):
        pre_writes.fission_after("Sel.x = _")


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


def test_fission_refuses_reordering_saturating_reductions():
    """Two float reductions into one i8 location (truncated and saturated
    at each step) may not be reordered across iterations by the split."""
    from exo_hl import i8

    @proc
    def sat(n: size, F: f32[n], G: f32[n], x: i8[1]):
        for i in seq(0, n):
            x[0] += F[i]
            x[0] += G[i]
    with pytest.raises(SchedulingError, match="(?s)do not commute.*"
                       "truncates and saturates"):
        sat.fission_after("x[_] += F[_]")
