"""Static bounds / precondition checking (exo_hl.effects.bounds).

Every procedure defined with @proc goes through ``check_proc``; the failing
cases check the error text (procedure, access as written, file:line and the
counterexample z3 found).
"""
from __future__ import annotations

import re
import time

import pytest

from exo_hl import DRAM, config, f32, i8, index, instr, proc, seq, size, stride
from exo_hl.effects import bounds as B
from exo_hl.effects import smt as S
from exo_hl.errors import BoundsError

HERE = "test_bounds.py:"


def _err(build):
    with pytest.raises(BoundsError) as ei:
        build()
    return str(ei.value)


def _line_of(msg):
    m = re.search(r"test_bounds\.py:(\d+):", msg)
    assert m, msg
    return int(m.group(1))


# ---------------------------------------------------------------------------
# loops with offsets


def test_offset_read_out_of_bounds_names_everything():
    def build():
        @proc
        def shift(n: size, A: f32[n], B: f32[n]):
            for i in seq(0, n):
                B[i] = A[i + 1]
    msg = _err(build)
    assert HERE in msg and "procedure 'shift'" in msg
    assert "index i + 1 may be out of bounds" in msg
    assert "dimension 0 of 'A' needs 0 <= i + 1 < n" in msg
    assert "counterexample: n = " in msg and "(at i = " in msg
    # the statement as written is quoted under the message
    assert "B[i] = A[i + 1]" in msg
    # the counterexample really is one: i = n - 1
    n = int(re.search(r"n = (\d+)", msg).group(1))
    i = int(re.search(r"i = (\d+)", msg).group(1))
    assert n >= 1 and i == n - 1


def test_offset_write_in_bounds_with_bigger_buffer():
    @proc
    def shift_ok(n: size, A: f32[n + 1], B: f32[n]):
        for i in seq(0, n):
            A[i + 1] = B[i]
    assert shift_ok.ir().name == "shift_ok"


def test_negative_offset_and_reduce():
    def build():
        @proc
        def back(n: size, A: f32[n]):
            for i in seq(0, n):
                A[i - 1] += 1.0
    msg = _err(build)
    assert "A[i - 1] += 1.0" in msg and "0 <= i - 1 < n" in msg
    assert "i = 0" in msg

    @proc
    def back_ok(n: size, A: f32[n]):
        for i in seq(1, n):
            A[i - 1] += A[i]


def test_nested_loops_with_dependent_bounds():
    @proc
    def tri(n: size, A: f32[n, n]):
        for i in seq(0, n):
            for j in seq(0, i):
                A[i, j] = A[j, i]

    def build():
        @proc
        def tri_bad(n: size, m: size, A: f32[n, m]):
            for i in seq(0, n):
                for j in seq(0, i + 1):
                    A[i, j] = 0.0
    msg = _err(build)
    assert "dimension 1 of 'A' needs 0 <= j < m" in msg
    n = int(re.search(r"n = (\d+)", msg).group(1))
    m = int(re.search(r"m = (\d+)", msg).group(1))
    j = int(re.search(r"j = (\d+)", msg).group(1))
    assert j >= m and j < n


# ---------------------------------------------------------------------------
# if / else


def test_if_and_else_branches():
    @proc
    def branch_ok(n: size, A: f32[n]):
        for i in seq(0, n):
            if i < n - 1:
                A[i + 1] = 0.0
            else:
                A[i] = 1.0

    def build():
        @proc
        def branch_bad(n: size, A: f32[n]):
            for i in seq(0, n):
                if i < n - 1:
                    A[i] = 0.0
                else:
                    A[i + 1] = 1.0     # the else branch has i == n - 1
    msg = _err(build)
    assert "procedure 'branch_bad'" in msg and "A[i + 1] = 1.0" in msg


def test_reads_inside_extern_calls_are_checked():
    @proc
    def ext_ok(n: size, A: f32[n], B: f32[n]):
        for i in seq(0, n):
            B[i] = select(A[i], 0.0, relu(A[n - 1 - i]), 1.0)

    def build():
        @proc
        def ext_bad(n: size, A: f32[n], B: f32[n]):
            for i in seq(0, n):
                B[i] = select(A[i], 0.0, relu(A[n - i]), 1.0)
    msg = _err(build)
    assert "index n - i may be out of bounds" in msg and "i = 0" in msg


# ---------------------------------------------------------------------------
# split loops and preconditions used as facts


def test_guarded_tail_of_split_loop():
    @proc
    def tail_ok(n: size, A: f32[n]):
        for io in seq(0, (n + 3) / 4):
            for ii in seq(0, 4):
                if 4 * io + ii < n:
                    A[4 * io + ii] = 0.0

    def build():
        @proc
        def tail_bad(n: size, A: f32[n]):
            for io in seq(0, (n + 3) / 4):
                for ii in seq(0, 4):
                    A[4 * io + ii] = 0.0
    msg = _err(build)
    assert "index 4 * io + ii may be out of bounds" in msg
    assert re.search(r"counterexample: n = \d+", msg)


def test_precondition_enables_access():
    @proc
    def last4(n: size, A: f32[n]):
        assert n % 4 == 0
        A[4 * (n / 4) - 1] = 0.0
        for io in seq(0, n / 4):
            for ii in seq(0, 4):
                A[4 * io + ii] = 1.0

    def build():
        @proc
        def last4_bad(n: size, A: f32[n]):
            for io in seq(0, n / 4 + 1):
                for ii in seq(0, 4):
                    A[4 * io + ii] = 1.0
    assert "procedure 'last4_bad'" in _err(build)


# ---------------------------------------------------------------------------
# windows


def test_window_slices_in_and_out_of_bounds():
    @proc
    def win_ok(A: f32[8]):
        w = A[2:6]
        for i in seq(0, 4):
            w[i] = 0.0

    def build():
        @proc
        def win_bad(A: f32[8]):
            w = A[4:10]
            w[0] = 0.0
    msg = _err(build)
    assert "window slice 4:10 may be out of bounds" in msg
    assert "0 <= 4 <= 10 <= 8" in msg and "w = A[4:10]" in msg
    assert "counterexample: any argument values" in msg


def test_access_through_window_beyond_its_extent():
    # A has room, but the window only spans 4 elements
    def build():
        @proc
        def past_window(A: f32[16]):
            w = A[0:4]
            for i in seq(0, 5):
                w[i] = 0.0
    msg = _err(build)
    assert "dimension 0 of 'w' needs 0 <= i < 4" in msg
    assert "i = 4" in msg


def test_window_of_window_and_points():
    @proc
    def ww_ok(n: size, A: f32[n, 8]):
        for r in seq(0, n):
            w = A[r, 2:8]          # a point and a slice
            v = w[1:4]
            v[2] = 0.0

    def build():
        @proc
        def ww_bad(n: size, A: f32[n, 8]):
            w = A[n, 0:8]          # row n does not exist
            w[0] = 0.0
    msg = _err(build)
    assert "window point n may be out of bounds" in msg

    def build2():
        @proc
        def ww_bad2(A: f32[8]):
            w = A[2:8]
            v = w[1:7]             # w has 6 elements
            v[0] = 0.0
    msg = _err(build2)
    assert "window slice 1:7" in msg and "0 <= 1 <= 7 <= 6" in msg


def test_window_argument_checked_against_declared_shape():
    @proc
    def wa_ok(n: size, x: [f32][n] @ DRAM):
        x[n - 1] = 0.0

    def build():
        @proc
        def wa_bad(n: size, x: [f32][n] @ DRAM):
            x[n] = 0.0
    msg = _err(build)
    assert "dimension 0 of 'x' needs 0 <= n < n" in msg


# ---------------------------------------------------------------------------
# calls: preconditions, shapes, strides


@instr("{dst_data} = {src_data} + (float){n};")
def copy16(n: size, src: [f32][n] @ DRAM, dst: [f32][n] @ DRAM):
    assert n <= 16
    for i in seq(0, n):
        dst[i] = src[i]


def test_call_precondition_holds_or_fails():
    @proc
    def call16(A: f32[32], B: f32[32]):
        copy16(16, A[0:16], B[16:32])

    def build():
        @proc
        def call17(A: f32[32], B: f32[32]):
            copy16(17, A[0:17], B[0:17])
    msg = _err(build)
    assert "cannot prove precondition 'n <= 16' of 'copy16'" in msg
    assert "copy16(17, A[0:17], B[0:17])" in msg and HERE in msg


def test_caller_guard_establishes_callee_precondition():
    @proc
    def guarded(n: size, A: f32[n], B: f32[n]):
        if n <= 16:
            copy16(n, A[0:n], B[0:n])

    def build():
        @proc
        def unguarded(n: size, A: f32[n], B: f32[n]):
            copy16(n, A[0:n], B[0:n])
    msg = _err(build)
    n = int(re.search(r"counterexample: n = (\d+)", msg).group(1))
    assert n > 16


def test_call_shape_mismatch():
    def build():
        @proc
        def bad_shape(n: size, A: f32[n], B: f32[n]):
            assert n >= 8
            copy16(4, A[0:5], B[0:4])
    msg = _err(build)
    assert "argument 'A[0:5]' of the call to 'copy16' may have the wrong" \
        in msg
    assert "extent 5 of dimension 0 must equal the parameter 'src' size n" \
        in msg

    @proc
    def whole(A: f32[8], B: f32[8]):
        copy16(8, A, B)

    def build2():
        @proc
        def whole_bad(A: f32[8], B: f32[9]):
            copy16(8, A, B)
    assert "argument 'B'" in _err(build2)


@proc
def unit_stride(n: size, x: [f32][n] @ DRAM):
    assert stride(x, 0) == 1
    for i in seq(0, n):
        x[i] = 0.0


def test_stride_precondition_of_callee():
    @proc
    def rows(n: size, m: size, A: f32[n, m]):
        for i in seq(0, n):
            unit_stride(m, A[i, 0:m])     # a row: unit stride

    def build():
        @proc
        def cols(n: size, m: size, A: f32[n, m]):
            for j in seq(0, m):
                unit_stride(n, A[0:n, j])  # a column: stride m
    msg = _err(build)
    assert "cannot prove precondition 'stride(x, 0) == 1' of 'unit_stride'" \
        in msg
    m = int(re.search(r"m = (\d+)", msg).group(1))
    assert m != 1


def test_stride_assert_of_caller_is_a_fact():
    @proc
    def win_arg(n: size, x: [f32][n] @ DRAM):
        assert stride(x, 0) == 1
        unit_stride(n, x)

    def build():
        @proc
        def win_arg_bad(n: size, x: [f32][n] @ DRAM):
            unit_stride(n, x)
    msg = _err(build)
    assert "stride(x, 0) = " in msg


# ---------------------------------------------------------------------------
# config-state preconditions (PreValG)


@config
class BCfg:
    s: stride
    k: index


@instr("{dst_data} = {src_data};")
def ld(n: size, src: [i8][n, 16] @ DRAM, dst: [i8][n, 16] @ DRAM):
    assert n <= 16
    assert BCfg.s == stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, 16):
            dst[i, j] = src[i, j]


@instr("(void)({s});")
def cfg_ld(s: stride):
    BCfg.s = s


def test_config_written_before_call():
    @proc
    def ok(A: i8[8, 16], B: i8[8, 16]):
        BCfg.s = stride(A, 0)
        ld(8, A, B)

    @proc
    def ok_instr(A: i8[8, 16], B: i8[8, 16]):
        cfg_ld(stride(A, 0))          # the write happens inside a callee
        ld(4, A[4:8, 0:16], B[0:4, :])

    def build():
        @proc
        def no_write(A: i8[8, 16], B: i8[8, 16]):
            ld(8, A, B)
    msg = _err(build)
    assert "cannot prove precondition 'BCfg.s == stride(src, 0)'" in msg
    assert "BCfg.s = " in msg       # the counterexample names the config

    def build2():
        @proc
        def wrong_buf(A: i8[8, 16], B: i8[8, 32]):
            BCfg.s = stride(B, 0)
            ld(8, A, B[0:8, 0:16])
    assert "procedure 'wrong_buf'" in _err(build2)


@instr("(void)&{src_data};")
def set_s_from(src: [i8][8, 16] @ DRAM):
    BCfg.s = stride(src, 0)


def test_config_written_by_callee_from_its_stride_param():
    # the callee's stride(src, 0) is the caller's stride of what it passed
    @proc
    def via_callee(A: i8[8, 16], B: i8[8, 16]):
        set_s_from(A[0:8, 0:16])
        ld(8, A[0:8, 0:16], B)

    @proc
    def via_window_stmt(A: i8[16, 16], B: i8[8, 16]):
        w = A[8:16, 0:16]
        BCfg.s = stride(w, 0)
        ld(8, w, B)

    def build():
        @proc
        def other_buf(A: i8[8, 16], C: i8[8, 32], B: i8[8, 16]):
            set_s_from(C[0:8, 0:16])
            ld(8, A, B)
    msg = _err(build)
    assert "procedure 'other_buf'" in msg and "ld(8, A, B)" in msg
    assert "stride(A, 0) = 16" in msg


def _loop_then_call(lo_zero_trip):
    if lo_zero_trip:
        @proc
        def maybe_zero(k: index, A: i8[8, 16], B: i8[8, 16]):
            for i in seq(0, k):
                BCfg.s = stride(A, 0)
            ld(8, A, B)
        return maybe_zero

    @proc
    def loop_write(n: size, A: i8[8, 16], B: i8[8, 16]):
        for i in seq(0, n):
            BCfg.s = stride(A, 0)
        ld(8, A, B)
    return loop_write


def test_config_written_in_loop_then_called_after_loop():
    _loop_then_call(False)        # n > 0: the loop runs, the write happens
    msg = _err(lambda: _loop_then_call(True))
    # with k <= 0 the loop body never runs
    k = int(re.search(r"k = (-?\d+)", msg).group(1))
    assert k <= 0


def test_config_value_unknown_after_loop():
    @instr("{A_data} = 0;")
    def need_k(A: i8[8, 16]):
        assert BCfg.k >= 0
        A[0, 0] = 0.0

    def build():
        @proc
        def varying(n: size, A: i8[8, 16]):
            for i in seq(0, n):
                BCfg.k = BCfg.k - i    # depends on what it wrote: ⊥
            need_k(A)
    msg = _err(build)
    assert "the value of BCfg.k before the call is not known" in msg

    def build_last():
        @proc
        def varying(n: size, A: i8[8, 16]):
            for i in seq(0, n):
                BCfg.k = i - 1     # the last iteration's: n - 2, may be -1
            need_k(A)
    msg = _err(build_last)
    assert "cannot prove precondition 'BCfg.k >= 0'" in msg
    assert "n = 1" in msg

    @proc
    def both_branches(n: size, A: i8[8, 16], B: i8[8, 16]):
        if n > 3:
            BCfg.s = stride(A, 0)
        else:
            BCfg.s = 16
        ld(8, A, B)


# ---------------------------------------------------------------------------
# allocations


def test_allocation_sizes():
    @proc
    def alloc_ok(n: size, A: f32[n]):
        t: f32[n, 4] @ DRAM
        for i in seq(0, n):
            t[i, 3] = A[i]

    def build():
        @proc
        def alloc_bad(n: size, A: f32[n]):
            t: f32[n - 1] @ DRAM
            t[0] = A[0]
    msg = _err(build)
    assert "allocation size n - 1 of 't' may not be positive" in msg
    assert "counterexample: n = 1" in msg

    @proc
    def alloc_pre(n: size, A: f32[n]):
        assert n >= 2
        t: f32[n - 1] @ DRAM
        t[n - 2] = A[n - 1]


def test_allocated_buffer_is_dense_for_callee_stride_asserts():
    @proc
    def local_row(n: size):
        t: f32[n, 8] @ DRAM
        for i in seq(0, n):
            unit_stride(8, t[i, 0:8])


# ---------------------------------------------------------------------------
# solver answers other than unsat are failures


class _GiveUp(S.Solver):
    def _solve(self, ct, key=None):
        self.stats.solver_calls += 1
        return "unknown", None


def test_unknown_is_not_a_proof():
    @proc
    def fine(n: size, A: f32[n]):
        for i in seq(0, n):
            A[i] = 0.0
    B.check_proc(fine.ir())        # proven with the normal solver
    with pytest.raises(BoundsError) as ei:
        B.check_proc(fine.ir(), solver=_GiveUp())
    assert "solver could not decide" in str(ei.value)
    assert "A[i] = 0.0" in str(ei.value)


def test_error_line_points_at_the_access():
    def build():
        @proc
        def where(n: size, A: f32[n]):
            A[0] = 0.0
            A[n] = 0.0
    msg = _err(build)
    import inspect
    src, first = inspect.getsourcelines(test_error_line_points_at_the_access)
    want = first + next(k for k, l in enumerate(src) if "A[n] = 0.0" in l)
    assert _line_of(msg) == want


# ---------------------------------------------------------------------------
# performance: a 100-statement procedure


def big_proc_source(nstmts):
    """A procedure of ~``nstmts`` statements: loops, guards, windows, calls."""
    lines = ["def big(n: size, m: size, A: f32[n + 8, m], B: f32[n + 8, m]):",
             "    assert m >= 16"]
    k = 0
    while k < nstmts:
        c = k % 8
        lines.append(f"    for i{k} in seq(0, n):")
        lines.append(f"        for j{k} in seq(0, m - {c}):")
        lines.append(f"            A[i{k} + {c}, j{k} + {c}] += B[i{k}, j{k}]")
        lines.append(f"            if i{k} + j{k} < m:")
        lines.append(f"                B[i{k} + 8, j{k}] = A[i{k}, j{k}]")
        lines.append(f"        w{k} = A[i{k}, 0:16]")
        lines.append(f"        copy16(16, w{k}, B[i{k} + {c}, 0:16])")
        k += 7
    return "\n".join(lines) + "\n"


def test_hundred_statement_procedure_is_fast():
    from exo_hl.frontend.decorators import parse_proc_source
    src = big_proc_source(100)
    t0 = time.perf_counter()
    p = parse_proc_source(src, {"copy16": copy16}, "big.py")
    B.check_proc(p.ir())
    dt = time.perf_counter() - t0
    assert dt < 5.0, dt          # typically well under a second
    bad = src.replace("A[i7 + 7, j7 + 7]", "A[i7 + 9, j7 + 7]")
    with pytest.raises(BoundsError) as ei:
        parse_proc_source(bad, {"copy16": copy16}, "big.py")
    assert "big.py:" in str(ei.value) and "i7 + 9" in str(ei.value)


# ---------------------------------------------------------------------------
# size arguments of calls: the callee assumes them >= 1


@proc
def _first(n: size, A: [f32][n], B: [f32][n]):
    B[0] = A[0]


@config
class SizeCfg:
    n: size


def test_call_size_argument_may_be_zero():
    def build():
        @proc
        def take_last(k: index, A: f32[4], B: f32[4]):
            assert k >= 0 and k <= 4
            _first(k, A[4 - k:4], B[4 - k:4])
    msg = _err(build)
    assert "size argument 'n' = k of '_first' may not be positive" in msg
    assert "counterexample: k = 0" in msg
    assert "in procedure 'take_last'" in msg
    assert HERE in msg


def test_call_size_argument_proven_positive():
    import numpy as np

    @proc
    def take_last(k: index, A: f32[4], B: f32[4]):
        assert k >= 1 and k <= 4
        _first(k, A[4 - k:4], B[4 - k:4])
    A, B = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    take_last.interpret(2, A, B)
    assert B.tolist() == [0, 0, 2, 0]


def test_call_size_argument_in_loops_and_from_config():
    @proc
    def prefix_ok(A: f32[4], B: f32[4]):
        for i in seq(0, 4):
            _first(i + 1, A[0:i + 1], B[0:i + 1])
        SizeCfg.n = 2
        _first(SizeCfg.n, A[0:SizeCfg.n], B[0:SizeCfg.n])

    def from_zero():
        @proc
        def prefix_bad(A: f32[4], B: f32[4]):
            for i in seq(0, 4):
                _first(i, A[0:i], B[0:i])
    assert "counterexample" in _err(from_zero)

    def unknown_config():
        @proc
        def cfg_bad(A: f32[4], B: f32[4]):
            assert SizeCfg.n >= 0 and SizeCfg.n <= 4
            _first(SizeCfg.n, A[0:SizeCfg.n], B[0:SizeCfg.n])
    assert "size argument 'n' = SizeCfg.n" in _err(unknown_config)


def test_interpreter_refuses_nonpositive_size_at_a_call():
    """An unchecked IR (preconditions dropped) fails with a clear
    InterpreterError, not a raw IndexError from numpy."""
    import numpy as np
    from exo_hl.core_ir.interpret import InterpreterError, run_interpreter

    @proc
    def take_last(k: index, A: f32[4], B: f32[4]):
        assert k >= 1 and k <= 4
        _first(k, A[4 - k:4], B[4 - k:4])
    ir = take_last.ir().update(preds=())
    with pytest.raises(InterpreterError, match="size argument 'n' = 0"):
        run_interpreter(ir, (0, np.zeros(4, np.float32),
                             np.zeros(4, np.float32)))


# ---------------------------------------------------------------------------
# the memo of proven obligations is keyed by the procedure's facts


def test_proven_obligation_is_not_reused_under_weaker_facts():
    """An obligation proven under the procedure-level facts (``n <= 8``)
    is remembered with them (``bounds._PROVEN``); the same obligation
    under other facts is proven again, and fails without the assert. The
    path facts of the two loops of ``twice`` are two tuples of one
    discharge: each keeps its own verdict."""
    from exo_hl.core_ir.nodes import IR

    @proc
    def capped(n: size, A: f32[8]):
        assert n <= 8
        for i in seq(0, n):
            A[i] = 0.0

    B.check_proc(capped.ir())
    p = capped.ir()
    with pytest.raises(BoundsError, match="A\\[i\\]"):
        B.check_proc(p.update(preds=()))
    # one loop proven (i < 8), the same statement under i < 9 is not
    loop = p.body[0]
    ok = loop.update(hi=IR.Const(8, IR.Int, loop.srcinfo))
    bad = loop.update(hi=IR.Const(9, IR.Int, loop.srcinfo))
    B.check_proc(p.update(preds=(), body=(ok, ok)))
    with pytest.raises(BoundsError, match="A\\[i\\]"):
        B.check_proc(p.update(preds=(), body=(ok, bad)))
