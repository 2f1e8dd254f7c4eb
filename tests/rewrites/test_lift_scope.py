"""lift_scope(stmt): swap a loop/if with the loop/if directly around it."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, par, proc, seq, size


@proc
def nest(n: size, x: f32[n, 4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            x[i, j] = x[i, j] * 2.0


@proc
def wavefront(n: size, x: f32[n + 1, 5]):
    for i in seq(1, n + 1):
        for j in seq(0, 4):
            x[i, j] = x[i - 1, j + 1] + 1.0


@proc
def guarded(n: size, m: size, x: f32[n]):
    for i in seq(0, n):
        if m > 2:
            x[i] = x[i] + 1.0
        else:
            x[i] = 0.0
    if m < 4:
        for k in seq(0, n):
            x[k] = x[k] * 3.0


@proc
def variant(n: size, x: f32[n]):
    for i in seq(0, n):
        if i < 2:
            x[i] = 1.0


@proc
def two_stmts(n: size, x: f32[n, 4]):
    for i in seq(0, n):
        x[i, 0] = 0.0
        for j in seq(0, 4):
            x[i, j] += 1.0


@proc
def both_branches(n: size, m: size, x: f32[n]):
    if m > 2:
        for i in seq(0, n):
            x[i] = 1.0
    else:
        for j in seq(0, n):
            x[j] = x[j] * 2.0


@proc
def unequal_branches(n: size, m: size, x: f32[n + 1]):
    if m > 2:
        for i in seq(0, n):
            x[i] = 1.0
    else:
        for j in seq(0, n + 1):
            x[j] = 2.0


@proc
def if_else_loop(n: size, x: f32[n]):
    if n > 2:
        for k in seq(0, n):
            x[k] = 1.0
    else:
        x[0] = 2.0


def test_loop_out_of_if_prints_and_equiv(equiv, assert_roundtrip):
    p = guarded.lift_scope("k")
    assert str(p).endswith("""\
    for k in seq(0, n):
        if m < 4:
            x[k] = x[k] * 3.0""")
    assert_roundtrip(p)
    equiv(guarded, p, [{"n": 3, "m": 1}, {"n": 3, "m": 5}])


def test_if_out_of_loop(equiv):
    p = guarded.lift_scope("if m > 2: _")
    assert str(p).splitlines()[1].strip() == "if m > 2:"
    equiv(guarded, p, [{"n": 3, "m": 1}, {"n": 3, "m": 5}])


def test_loop_out_of_loop_is_reorder(equiv):
    p = nest.lift_scope("j")
    assert str(p) == str(nest.reorder("i", "j"))
    equiv(nest, p, [{"n": 3}])


def test_reject_illegal_reorder():
    with pytest.raises(SchedulingError, match="do not commute"):
        wavefront.lift_scope("j")


def test_reject_loop_variant_condition():
    with pytest.raises(SchedulingError, match="loop iterator"):
        variant.lift_scope("if _: _")


def test_reject_if_with_else_around_loop():
    with pytest.raises(SchedulingError, match="else branch"):
        if_else_loop.lift_scope("k")
    with pytest.raises(SchedulingError, match="equal bounds"):
        unequal_branches.lift_scope("i")


def test_loop_out_of_if_else(equiv):
    p = both_branches.lift_scope("i")
    assert str(p) == """\
def both_branches(n: size, m: size, x: f32[n] @ DRAM):
    for i in seq(0, n):
        if m > 2:
            x[i] = 1.0
        else:
            x[i] = x[i] * 2.0"""
    equiv(both_branches, p, [{"n": 3, "m": 1}, {"n": 4, "m": 3}])


def test_reject_not_only_statement():
    with pytest.raises(SchedulingError, match="only one"):
        two_stmts.lift_scope("j")
    with pytest.raises(SchedulingError, match="not inside"):
        guarded.lift_scope("i")
    with pytest.raises(SchedulingError, match="loop or an if"):
        nest.lift_scope("x[_] = _")


@config
class LCfg:
    k: size


@proc
def cfg_cond(x: f32[8]):
    LCfg.k = 1
    if LCfg.k == 1:
        for i in seq(0, 8):
            x[i] = x[i] + 1.0
            LCfg.k = 2


def test_reject_condition_reads_state_the_loop_writes():
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg_cond.lift_scope("i")


# out of an else branch: an if (Exo's rule, via lift_if) and a loop whose
# then branch is a loop of the same bounds (the mirror of lifting the then
# loop); a loop under an else whose then branch is no loop has no
# equivalent (the then branch would run once per iteration)

@proc
def else_if(n: size, m: size, x: f32[n]):
    for i in seq(0, n):
        if i < 2:
            x[i] = 1.0
        else:
            if m > 2:
                x[i] = 2.0


def test_if_out_of_else(equiv):
    p = else_if.lift_scope("if m > 2: _")
    assert str(p) == """\
def else_if(n: size, m: size, x: f32[n] @ DRAM):
    for i in seq(0, n):
        if m > 2:
            if i < 2:
                x[i] = 1.0
            else:
                x[i] = 2.0
        elif i < 2:
            x[i] = 1.0"""
    equiv(else_if, p, [{"n": 4, "m": 1}, {"n": 4, "m": 3}])


def test_loop_out_of_else(equiv, assert_roundtrip):
    p = both_branches.lift_scope("j")
    assert str(p) == """\
def both_branches(n: size, m: size, x: f32[n] @ DRAM):
    for j in seq(0, n):
        if m > 2:
            x[j] = 1.0
        else:
            x[j] = x[j] * 2.0"""
    assert_roundtrip(p)
    equiv(both_branches, p, [{"n": 1, "m": 1}, {"n": 3, "m": 1},
                             {"n": 4, "m": 3}])
    # cursors: the lifted loop, the if, both bodies
    from exo_hl.core_ir.printer import stmt_to_str
    q = both_branches
    cj, ci, cif = q.find_loop("j"), q.find_loop("i"), q.find("if _: _")
    ca, cb = q.find("x[_] = 1.0"), q.find("x[_] = x[_] * 2.0")
    text = lambda c: stmt_to_str(p.forward(c).node()).strip()
    assert text(cj).startswith("for j in seq(0, n):")
    assert text(cif).startswith("if m > 2:")
    assert text(ca) == "x[j] = 1.0" and text(cb) == "x[j] = x[j] * 2.0"
    assert p.forward(cb).parent() == p.forward(cif)
    with pytest.raises(Exception):
        p.forward(ci)


@proc
def else_loop_only(n: size, x: f32[n]):
    if n > 2:
        x[0] = 2.0
    else:
        for k in seq(0, n):
            x[k] = 1.0


@proc
def par_then(n: size, m: size, x: f32[n]):
    if m > 2:
        for i in par(0, n):
            x[i] = 1.0
    else:
        for j in seq(0, n):
            x[j] = 2.0


@proc
def cfg_else(x: f32[8]):
    LCfg.k = 1
    if LCfg.k == 2:
        for j in seq(0, 8):
            x[j] = 0.0
    else:
        for i in seq(0, 8):
            x[i] = x[i] + 1.0
            LCfg.k = 2


def test_reject_loop_out_of_else():
    with pytest.raises(SchedulingError, match="then branch is not one loop"):
        else_loop_only.lift_scope("k")
    with pytest.raises(SchedulingError, match="equal bounds"):
        unequal_branches.lift_scope("j")
    with pytest.raises(SchedulingError, match="same kind"):
        par_then.lift_scope("j")
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg_else.lift_scope("i")
