"""Rewrites that move where a control expression is evaluated.

The IR evaluates a loop bound once at loop entry, a condition once where it
stands, a call argument once at the call. A rewrite that substitutes such
an expression into other statements (or evaluates it earlier or later) is
only correct when nothing in between writes what it reads -- config fields,
the only mutable state control expressions can read. One shared check,
``rewrites._common.check_unchanged_by``, guards them all; each rewrite has a
test here: refused when the body writes what the moved expression reads,
accepted (and equivalent) otherwise.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, config, f32, index, proc, seq, size
from exo_hl.core_ir.interpret import ConfigState


@config
class Cfg:
    n: size
    k: index


def _run(p, **args):
    out = {k: (v.copy() if isinstance(v, np.ndarray) else v)
           for k, v in args.items()}
    p.interpret(**out, config_state=ConfigState())
    return out


def _same(p, q, **args):
    a, b = _run(p, **args), _run(q, **args)
    for k, v in a.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(b[k], v, err_msg=k)


def _arr(n, *m):
    return np.arange(n * int(np.prod(m or (1, ))), dtype=np.float32
                     ).reshape((n, ) + m) + 1


REFUSED = "configuration state read by"


# -- shift_loop ---------------------------------------------------------------
@proc
def shift_lo_written(A: f32[8]):
    Cfg.k = 2
    for x in seq(Cfg.k, 4):
        Cfg.k = 0
        A[x] = 1.0


@proc
def shift_lo_kept(A: f32[8]):
    Cfg.k = 2
    for x in seq(Cfg.k, 4):
        Cfg.n = 1
        A[x] = 1.0


def test_shift_loop_refuses_lower_bound_written_by_body():
    with pytest.raises(SchedulingError, match=REFUSED):
        shift_lo_written.shift_loop("x", 0)


def test_shift_loop_lower_bound_not_written():
    q = shift_lo_kept.shift_loop("x", 0)
    _same(shift_lo_kept, q, A=np.zeros(8, np.float32))


# -- remove_loop --------------------------------------------------------------
@proc
def remove_bound_written(A: f32[8]):
    Cfg.n = 2
    for x in seq(0, Cfg.n):
        Cfg.n = 100
        A[0] = 1.0


@proc
def remove_not_idempotent(A: f32[8]):
    Cfg.n = 2
    for x in seq(0, 3):
        Cfg.n = Cfg.n + 1
    A[0] = 1.0


@proc
def remove_zero_trips(A: f32[8]):
    Cfg.k = 2
    for x in seq(Cfg.k, 2):
        A[0] = 1.0


def test_remove_loop_with_config_bound():
    """The bound is read once on entry (2 > 0): the idempotent body runs
    at least once either way."""
    q = remove_bound_written.remove_loop("x")
    _same(remove_bound_written, q, A=np.zeros(8, np.float32))


def test_remove_loop_refuses_config_counter():
    with pytest.raises(SchedulingError, match="idempotent"):
        remove_not_idempotent.remove_loop("x")


def test_remove_loop_refuses_zero_trips_from_config():
    with pytest.raises(SchedulingError, match="zero times"):
        remove_zero_trips.remove_loop("x")


# -- unroll ---------------------------------------------------------------------
@proc
def unroll_body_writes(A: f32[8]):
    Cfg.k = 0
    for x in seq(0, 3):
        Cfg.k = 2 * x
        A[Cfg.k + 1] = 1.0
        Cfg.k = 0


@proc
def unroll_config_bound(A: f32[8]):
    Cfg.n = 3
    for x in seq(0, Cfg.n):
        A[x] = 1.0


def test_unroll_body_writing_config():
    q = unroll_body_writes.unroll("x")
    _same(unroll_body_writes, q, A=np.zeros(8, np.float32))


def test_unroll_refuses_config_bound():
    """Config values are not constants (they are state): not unrolled."""
    with pytest.raises(SchedulingError, match="not constant"):
        unroll_config_bound.unroll("x")


# -- lift_if --------------------------------------------------------------------
@proc
def lift_cond_written(n: size, x: f32[n]):
    Cfg.k = 1
    for i in seq(0, n):
        if Cfg.k == 1:
            x[i] = 0.0
            Cfg.k = 2


@proc
def lift_cond_kept(n: size, x: f32[n]):
    Cfg.k = 1
    for i in seq(0, n):
        if Cfg.k == 1:
            x[i] = 0.0
            Cfg.n = 2


def test_lift_if_refuses_condition_written_by_loop():
    with pytest.raises(SchedulingError, match=REFUSED):
        lift_cond_written.lift_if("if _: _")


def test_lift_if_condition_not_written():
    q = lift_cond_kept.lift_if("if _: _")
    _same(lift_cond_kept, q, n=4, x=_arr(4))


# -- add_guard --------------------------------------------------------------------
@proc
def guard_target_writes(A: f32[8]):
    Cfg.k = 1
    for x in seq(Cfg.k, 4):
        Cfg.k = 5
        A[x] = 1.0


def test_add_guard_on_statement_writing_what_guard_reads():
    """The guard is evaluated once, before the statement, as both branches
    run it: always equivalent."""
    for cond in ("Cfg.k < 2", "Cfg.k == 5"):
        q = guard_target_writes.add_guard("for x in _: _", cond)
        _same(guard_target_writes, q, A=np.zeros(8, np.float32))


# -- fuse_loop --------------------------------------------------------------------
@proc
def fuse_bound_written(A: f32[8], B: f32[8]):
    Cfg.n = 4
    for i in seq(0, 4):
        A[i] = 1.0
        Cfg.n = 2
    for i in seq(0, Cfg.n):
        B[i] = 2.0


@proc
def fuse_bound_kept(A: f32[8], B: f32[8]):
    Cfg.n = 4
    for i in seq(0, 4):
        A[i] = 1.0
        Cfg.k = 2
    for i in seq(0, Cfg.n):
        B[i] = 2.0


def test_fuse_loop_refuses_second_bound_written_by_first():
    with pytest.raises(SchedulingError, match=REFUSED):
        fuse_bound_written.fuse_loop("i", "i #1")


def test_fuse_loop_second_bound_not_written():
    q = fuse_bound_kept.fuse_loop("i", "i #1")
    _same(fuse_bound_kept, q, A=np.zeros(8, np.float32),
          B=np.zeros(8, np.float32))


# -- split / partition_loop ----------------------------------------------------
@proc
def split_lo_written(A: f32[16]):
    Cfg.k = 3
    for x in seq(Cfg.k, 10):
        Cfg.k = 0
        A[x] = 1.0


@pytest.mark.parametrize("tail", ["guard", "cut"])
def test_split_refuses_bounds_written_by_body(tail):
    with pytest.raises(SchedulingError, match=REFUSED):
        split_lo_written.split("x", 4, "xo", "xi", tail=tail)


def test_partition_loop_refuses_bounds_written_by_body():
    with pytest.raises(SchedulingError, match=REFUSED):
        split_lo_written.partition_loop("x", 5)


# -- reorder / fission_after / parallelize (effect analysis) ------------------
@proc
def reorder_inner_bound_written(A: f32[4, 4]):
    Cfg.n = 3
    for i in seq(0, 2):
        for j in seq(0, Cfg.n):
            Cfg.n = 2
            if j < 4:
                A[i, j] = 1.0


@proc
def fission_bound_written(A: f32[8]):
    Cfg.n = 4
    for x in seq(0, Cfg.n):
        Cfg.n = 2
        A[x] = 1.0


def test_reorder_refuses_inner_bound_written_by_body():
    with pytest.raises(SchedulingError, match="bounds"):
        reorder_inner_bound_written.reorder("i", "j")


def test_fission_refuses_bound_written_by_first_part():
    with pytest.raises(SchedulingError, match="bounds"):
        fission_bound_written.fission_after("Cfg.n = _ #1")


def test_parallelize_refuses_bound_written_by_body():
    with pytest.raises(SchedulingError, match="bounds"):
        fission_bound_written.parallelize("x")


# -- divide_dim -------------------------------------------------------------------
@proc
def divide_config_indices(A: f32[8]):
    t: f32[8]
    for i in seq(0, 8):
        t[i] = A[i]
    for i in seq(0, 4):
        Cfg.k = 2 * i
        A[i] = t[Cfg.k + 1]
        Cfg.k = 0


def test_divide_dim_with_config_indices():
    """Each access keeps evaluating its own index where it stands."""
    q = divide_config_indices.divide_dim("t", 0, 4)
    _same(divide_config_indices, q, A=_arr(8))


# -- expand_dim -------------------------------------------------------------------
@proc
def expand_in_config_loop(A: f32[4, 2]):
    Cfg.k = 0
    for i in seq(0, 4):
        t: f32[2]
        Cfg.k = i
        for j in seq(0, 2):
            t[j] = A[Cfg.k, j] * 2.0
        Cfg.k = 0
        for j in seq(0, 2):
            A[i, j] = t[j]


def test_expand_dim_in_loop_writing_config():
    q = expand_in_config_loop.expand_dim("t", 4, "i")
    _same(expand_in_config_loop, q, A=_arr(4, 2))


def test_expand_dim_refuses_config_index():
    with pytest.raises(SchedulingError):
        expand_in_config_loop.expand_dim("t", 4, "Cfg.k")


# -- partial_eval -----------------------------------------------------------------
@proc
def pe_config_bound(n: size, A: f32[8]):
    assert n <= 8
    Cfg.n = n
    for i in seq(0, Cfg.n):
        Cfg.n = 1
        A[i] = 1.0


def test_partial_eval_with_config_bounds():
    q = pe_config_bound.partial_eval(n=3)
    a, b = _run(pe_config_bound, n=3, A=np.zeros(8, np.float32)), \
        _run(q, A=np.zeros(8, np.float32))
    np.testing.assert_array_equal(a["A"], b["A"])
    assert a["A"].sum() == 3


# -- inline -----------------------------------------------------------------------
@proc
def writes_k_then_uses_arg(k: index, A: f32[8]):
    assert 0 <= k and k < 4
    Cfg.k = 7
    A[k] = 1.0


@proc
def inline_ctrl_arg(A: f32[8]):
    Cfg.k = 2
    writes_k_then_uses_arg(Cfg.k, A)


@proc
def writes_k_then_uses_window(B: [f32][2]):
    Cfg.k = 5
    B[1] = 1.0


@proc
def inline_window_arg(A: f32[8]):
    Cfg.k = 2
    writes_k_then_uses_window(A[Cfg.k:Cfg.k + 2])


@proc
def inline_plain_args(A: f32[8]):
    Cfg.k = 2
    writes_k_then_uses_arg(3, A)
    writes_k_then_uses_window(A[4:6])


def test_inline_refuses_argument_read_of_config_callee_writes():
    with pytest.raises(SchedulingError, match=REFUSED):
        inline_ctrl_arg.inline("writes_k_then_uses_arg(_)")


def test_inline_refuses_window_index_read_of_config_callee_writes():
    with pytest.raises(SchedulingError, match=REFUSED):
        inline_window_arg.inline("writes_k_then_uses_window(_)")


def test_inline_arguments_not_reading_written_config():
    q = inline_plain_args.inline("writes_k_then_uses_arg(_)")
    q = q.inline("writes_k_then_uses_window(_)")
    _same(inline_plain_args, q, A=np.zeros(8, np.float32))


# -- replace ---------------------------------------------------------------------
@proc
def replace_block(A: f32[8]):
    Cfg.k = 2
    A[Cfg.k] = 1.0
    Cfg.k = 7
    A[Cfg.k] = 2.0


@proc
def replace_sub(k: index, A: f32[8]):
    assert 0 <= k and k < 8
    A[k] = 1.0
    Cfg.k = 7
    A[k] = 2.0


def test_replace_does_not_bind_parameters_to_config_reads():
    """A call would evaluate ``k`` once: the block's two reads of Cfg.k
    (around a write of it) cannot become one argument."""
    with pytest.raises(SchedulingError):
        replace_block.replace((replace_block.find("A[_] = _"),
                               replace_block.find("A[_] = _ #1")),
                              replace_sub)


def test_shift_loop_refuses_new_lo_written_by_body():
    # the new body evaluates new_lo in every iteration: Cfg.n changes
    with pytest.raises(SchedulingError, match=REFUSED):
        shift_lo_kept.shift_loop("x", "Cfg.n")


@proc
def shift_new_lo_kept(A: f32[8]):
    Cfg.n = 1
    for x in seq(2, 4):
        Cfg.k = 0
        A[x] = 1.0


def test_shift_loop_new_lo_config_not_written():
    q = shift_new_lo_kept.shift_loop("x", "Cfg.n")
    assert "for x in seq(Cfg.n, Cfg.n + 2):" in str(q)
    _same(shift_new_lo_kept, q, A=np.zeros(8, np.float32))


def test_cut_loop_at_a_config_expression():
    # the cut may read config state the body leaves alone
    q = shift_lo_kept.cut_loop("x", "Cfg.k + 1")
    assert "for x in seq(Cfg.k, Cfg.k + 1):" in str(q)
    _same(shift_lo_kept, q, A=np.zeros(8, np.float32))
    with pytest.raises(SchedulingError, match=REFUSED):
        split_lo_written.cut_loop("x", "Cfg.k + 1")
