"""lift_scope(stmt): swap a loop/if with the loop/if directly around it."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


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
