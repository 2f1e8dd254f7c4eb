"""The interpreter's exact race oracle (``ConfigState.race_check``,
``core_ir/race_record.py``).

Racy par loops are made by hand below every check (a ``seq`` loop's mode
set to ``par`` in the IR, as ``test_interpret_par_order.py`` does), since
``parallelize`` and the parser refuse them. Most of the races here are
ones running the iterations in reverse would not show: the same value
written twice, a ``+=`` into one location, writes through two windows of
one buffer, a callee writing a scalar by reference, a config field.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import config, f32, proc, seq, size
from exo_hl.core_ir.interpret import (ConfigState, InterpreterError,
                                      RaceError, run_interpreter)
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.traversal import map_node


def _par(ir, *names):
    """``ir`` with its loops over ``names`` made par, unchecked (a call's
    callee is not entered: ``_with_callee``)."""
    def fn(n):
        if isinstance(n, IR.For) and n.iter.name in names:
            return n.update(mode=IR.Par)
        return None
    return map_node(ir, fn)


def _with_callee(ir, callee_ir):
    """``ir`` with its calls of the callee's name calling ``callee_ir``."""
    def fn(n):
        if isinstance(n, IR.Call) and n.f.name == callee_ir.name:
            return n.update(f=callee_ir)
        return None
    return map_node(ir, fn)


def _run(ir, *args, race=True, order="forward", state=None):
    st = state if state is not None else ConfigState()
    st.race_check = race
    st.par_order = order
    run_interpreter(ir, args, config_state=st)
    return st


def _outputs_agree_in_both_orders(ir, *args):
    """What reversal sees: True when both orders give the same arrays."""
    outs = []
    for order in ("forward", "reverse"):
        a = [x.copy() for x in args]
        _run(ir, *a, race=False, order=order)
        outs.append(a)
    return all(np.array_equal(u, v) for u, v in zip(*outs))


# ----------------------------------------------------------------------
# races reversal misses


@proc
def same_value(x: f32[4], y: f32[2]):
    for i in seq(0, 4):
        y[1] = 3.0
        x[i] = 0.0


@proc
def reduce_one(x: f32[4], y: f32[1]):
    for i in seq(0, 4):
        y[0] += x[i]


@proc
def two_windows(x: f32[8]):
    for i in seq(0, 4):
        a = x[0:6]
        b = x[2:8]
        a[i] = 1.0      # x[i]
        b[i] = 1.0      # x[i + 2]: iteration i + 2 writes it through a


@proc
def set_scalar(a: f32):
    a = 1.0


@proc
def shared_scalar_callee(x: f32[4]):
    t: f32
    for i in seq(0, 4):
        set_scalar(t)
        x[i] = 1.0


@config
class RC:
    flag: f32


@proc
def config_each(x: f32[4]):
    for i in seq(0, 4):
        RC.flag = 1.0
        x[i] = RC.flag


def test_same_value_written_twice():
    ir = _par(same_value.ir(), "i")
    args = (np.zeros(4, np.float32), np.zeros(2, np.float32))
    assert _outputs_agree_in_both_orders(ir, *args)
    with pytest.raises(RaceError, match=r"'i' of 'same_value': iterations "
                       r"i = 0 and 1 both write y\[1\]"):
        _run(ir, *args)


def test_reduction_into_one_location():
    ir = _par(reduce_one.ir(), "i")
    args = (np.arange(4, dtype=np.float32), np.zeros(1, np.float32))
    assert _outputs_agree_in_both_orders(ir, *args)
    with pytest.raises(RaceError, match=r"y\[0\]"):
        _run(ir, *args)


def test_reverse_order_also_finds_it_there():
    ir = _par(reduce_one.ir(), "i")
    with pytest.raises(RaceError, match=r"iterations i = 3 and 2"):
        _run(ir, np.ones(4, np.float32), np.zeros(1, np.float32),
             order="reverse")


def test_two_windows_of_one_buffer_alias():
    ir = _par(two_windows.ir(), "i")
    assert _outputs_agree_in_both_orders(ir, np.zeros(8, np.float32))
    with pytest.raises(RaceError, match=r"iteration i = 0 writes b\[0\], and "
                       r"iteration i = 2 writes a\[2\]: the same location"):
        _run(ir, np.zeros(8, np.float32))


def test_scalar_written_by_reference_in_a_callee():
    ir = _par(shared_scalar_callee.ir(), "i")
    args = (np.zeros(4, np.float32),)
    assert _outputs_agree_in_both_orders(ir, *args)
    with pytest.raises(RaceError, match=r"both write 'a' \(in 'set_scalar'\)"):
        _run(ir, *args)


def test_config_field_written_in_each_iteration():
    ir = _par(config_each.ir(), "i")
    args = (np.zeros(4, np.float32),)
    assert _outputs_agree_in_both_orders(ir, *args)
    with pytest.raises(RaceError, match=r"config field RC\.flag"):
        _run(ir, *args)


@proc
def shift(x: f32[5], y: f32[4]):
    for i in seq(0, 4):
        y[i] = x[i + 1]
        x[i] = 0.0


def test_read_of_an_element_another_iteration_writes():
    with pytest.raises(RaceError, match=r"iteration i = 0 reads x\[1\], "
                       r"and iteration i = 1 writes x\[1\]"):
        _run(_par(shift.ir(), "i"), np.ones(5, np.float32),
             np.zeros(4, np.float32))


def test_race_error_is_an_interpreter_error():
    assert issubclass(RaceError, InterpreterError)


# ----------------------------------------------------------------------
# what is not a race


@proc
def private_tmp(x: f32[4], y: f32[4]):
    for i in seq(0, 4):
        t: f32[2]
        s: f32
        t[0] = x[i]
        s = t[0] * 2.0
        set_scalar(s)
        y[i] = s + t[0]


@proc
def shared_reads(x: f32[4], y: f32[4]):
    t: f32
    t = x[0]
    for i in seq(0, 4):
        y[i] = x[0] + t + RC.flag


def test_private_allocations_and_shared_reads_are_clean():
    for p in (private_tmp, shared_reads):
        ir = _par(p.ir(), "i")
        x = np.arange(4, dtype=np.float32)
        want = np.zeros(4, np.float32)
        _run(p.ir(), x, want, race=False)
        got = np.zeros(4, np.float32)
        _run(ir, x, got)
        np.testing.assert_array_equal(got, want)


def test_off_by_default_and_outside_par_loops():
    assert ConfigState().race_check is False
    ir = _par(reduce_one.ir(), "i")
    _run(ir, np.ones(4, np.float32), np.zeros(1, np.float32), race=False)
    # the same body in a seq loop: no par loop, nothing to check
    _run(reduce_one.ir(), np.ones(4, np.float32), np.zeros(1, np.float32))


# ----------------------------------------------------------------------
# nested par loops


@proc
def nest(n: size, x: f32[4, 4], y: f32[4]):
    for i in seq(0, 4):
        t: f32[4]
        for j in seq(0, 4):
            t[j] = x[i, j]
        for k in seq(0, 4):
            y[k] = t[k]        # every i writes all of y


def test_inner_loop_clean_outer_loop_sees_the_union():
    x = np.ones((4, 4), np.float32)
    # the inner loops' iterations are independent, t is private to i
    _run(_par(nest.ir(), "j", "k"), 4, x, np.zeros(4, np.float32))
    with pytest.raises(RaceError, match=r"'i' of 'nest': iterations i = 0 "
                       r"and 1 both write y\[0\]"):
        _run(_par(nest.ir(), "i", "j", "k"), 4, x, np.zeros(4, np.float32))


@proc
def inner_shares_outer_alloc(x: f32[4, 4]):
    for i in seq(0, 4):
        t: f32
        for j in seq(0, 4):
            t = x[i, j]
        x[i, 0] = t


def test_alloc_of_the_outer_iteration_is_shared_by_the_inner_one():
    x = np.ones((4, 4), np.float32)
    _run(_par(inner_shares_outer_alloc.ir(), "i"), x)
    with pytest.raises(RaceError, match=r"'j'.*both write 't'"):
        _run(_par(inner_shares_outer_alloc.ir(), "i", "j"), x)


@proc
def row(y: [f32][4]):
    for j in seq(0, 4):
        y[j] = 1.0


@proc
def calls_row(x: f32[4, 4]):
    for i in seq(0, 4):
        row(x[i, 0:4])
        row(x[0, 0:4])


def test_par_loop_in_a_callee_nested_in_a_par_loop():
    callee = _par(row.ir(), "j")
    ir = _par(_with_callee(calls_row.ir(), callee), "i")
    with pytest.raises(RaceError, match=r"'i' of 'calls_row'.*both write "
                       r"y\[0\] \(in 'row'\)"):
        _run(ir, np.zeros((4, 4), np.float32))


# ----------------------------------------------------------------------
# proven-parallel loops run clean and give the same results


@proc
def blur(n: size, x: f32[n + 2], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i] + x[i + 1]
        y[i] = (t + x[i + 2]) / 3.0


@proc
def matvec(n: size, A: f32[n, n], x: f32[n], y: f32[n]):
    for i in seq(0, n):
        for k in seq(0, n):
            y[i] += A[i, k] * x[k]


@pytest.mark.parametrize("p", [blur, matvec])
def test_parallelized_loops_run_clean(p):
    q = p.parallelize(p.find_loop("i"))
    assert "par(" in str(q)
    n = 7
    rng = np.random.default_rng(0)
    if p is blur:
        args = [n, rng.standard_normal(n + 2).astype(np.float32),
                np.zeros(n, np.float32)]
    else:
        args = [n, rng.standard_normal((n, n)).astype(np.float32),
                rng.standard_normal(n).astype(np.float32),
                np.zeros(n, np.float32)]
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    _run(p.ir(), *want, race=False)
    for order in ("forward", "reverse"):
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        _run(q.ir(), *got, order=order)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def test_compiled_code_cache_keeps_the_modes_apart():
    ir = _par(reduce_one.ir(), "i")
    x, y = np.ones(4, np.float32), np.zeros(1, np.float32)
    _run(ir, x, y, race=False)
    with pytest.raises(RaceError):
        _run(ir, x, y)
    y[0] = 0
    _run(ir, x, y, race=False)
    assert y[0] == 4
