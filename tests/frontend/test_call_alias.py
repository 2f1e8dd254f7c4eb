from __future__ import annotations
from exo_hl import *
import pytest

def test_alias():
    @proc
    def add_vec(n: size, x: [f32][n], y: [f32][n]):
        for i in seq(0, n):
            y[i] += x[i]
    @proc
    def readboth(n: size, x: [f32][n], y: [f32][n], z: f32[n]):
        for i in seq(0, n):
            z[i] = x[i] + y[i]
    @proc
    def ok(n: size, a: f32[n], z: f32[n]):
        readboth(n, a[0:n], a[0:n], z)
    with pytest.raises(ExoTypeError, match="would all view buffer 'a'"):
        @proc
        def bad(n: size, a: f32[n]):
            w = a[0:n]
            add_vec(n, w, a[0:n])


# ---------------------------------------------------------------------------
# precise rule: views of one buffer are fine when provably disjoint

import numpy as np

from exo_hl.core_ir.nodes import IR


@proc
def _add_into(n: size, x: [f32][n], y: [f32][n]):
    for i in seq(0, n):
        y[i] += x[i]


@proc
def _readboth(n: size, x: [f32][n], y: [f32][n], z: [f32][n]):
    for i in seq(0, n):
        z[i] = x[i] * y[i]


@proc
def _acc(x: f32, y: f32):
    y += x


def test_disjoint_rows_accepted_and_run():
    @proc
    def rows(n: size, A: f32[3, n]):
        _add_into(n, A[0, 0:n], A[1, 0:n])
        _add_into(n, A[1, 0:n], A[2, 0:n])

    rng = np.random.default_rng(0)
    A0 = rng.standard_normal((3, 5)).astype(np.float32)
    want = A0.copy()
    want[1] += want[0]
    want[2] += want[1]
    A1, A2 = A0.copy(), A0.copy()
    rows.interpret(n=5, A=A1)
    rows.compile()(5, A2)
    np.testing.assert_allclose(A1, want, rtol=1e-6)
    np.testing.assert_allclose(A2, want, rtol=1e-6)
    # the callee's two parameters may point into one array: no restrict
    text = rows.c_code_str()
    assert "restrict x" not in text and "restrict y" not in text


def test_overlapping_windows_rejected():
    with pytest.raises(ExoTypeError) as ei:
        @proc
        def shifted(n: size, A: f32[n]):
            assert n >= 2
            _add_into(n - 1, A[0:n - 1], A[1:n])
    msg = str(ei.value)
    assert "would all view buffer 'A'" in msg
    assert "'x', 'y'" in msg and "writes to 'y'" in msg
    assert "in procedure 'shifted'" in msg
    assert "test_call_alias.py:" in msg and "^^^" in msg
    assert "counterexample: n = " in msg


def test_window_of_window_composed():
    @proc
    def ok(n: size, A: f32[4, n]):
        w = A[1:3, 0:n]
        _add_into(n, w[1, 0:n], A[1, 0:n])     # w[1] is A[2]

    with pytest.raises(ExoTypeError, match="would all view buffer 'A'"):
        @proc
        def bad(n: size, A: f32[4, n]):
            w = A[1:3, 0:n]
            v = w[0:2, 0:n]
            _add_into(n, v[0, 0:n], A[1, 0:n])  # v[0] is A[1]


def test_point_against_interval_dims():
    @proc
    def row_vs_col(n: size, A: f32[n + 1, n]):
        _add_into(n, A[0, 0:n], A[1:n + 1, 0])   # row 0 vs column 0 below it

    with pytest.raises(ExoTypeError, match="would all view buffer 'A'"):
        @proc
        def row_vs_col_bad(n: size, A: f32[n, n]):
            _add_into(n, A[0, 0:n], A[0:n, 0])   # both contain A[0, 0]


def test_disjoint_only_under_guard():
    @proc
    def guarded(n: size, A: f32[n, 8]):
        for i in seq(0, n):
            if i < n - 1:
                _add_into(8, A[i, 0:8], A[i + 1, 0:8])

    A0 = np.arange(3 * 8, dtype=np.float32).reshape(3, 8)
    want = A0.copy()
    for i in range(2):
        want[i + 1] += want[i]
    A1, A2 = A0.copy(), A0.copy()
    guarded.interpret(n=3, A=A1)
    guarded.compile()(3, A2)
    np.testing.assert_allclose(A1, want)
    np.testing.assert_allclose(A2, want)

    # disjointness from a precondition and loop bounds
    @proc
    def by_pred(n: size, j: index, A: f32[n, 8]):
        assert j >= 0 and j < n and n >= 2
        for i in seq(0, j):
            _add_into(8, A[i, 0:8], A[j, 0:8])


def test_overlap_in_some_iteration_rejected():
    with pytest.raises(ExoTypeError) as ei:
        @proc
        def loopy(n: size, A: f32[n, 8]):
            for i in seq(0, n):
                _add_into(8, A[i, 0:8], A[n - 1, 0:8])
    msg = str(ei.value)
    assert "would all view buffer 'A'" in msg and "in procedure 'loopy'" in msg
    # the counterexample names the iteration where the rows coincide
    assert "counterexample:" in msg and "i = " in msg


def test_read_only_double_use_accepted():
    @proc
    def square(n: size, A: f32[2, n]):
        _readboth(n, A[0, 0:n], A[0, 0:n], A[1, 0:n])

    A0 = np.arange(8, dtype=np.float32).reshape(2, 4)
    A1 = A0.copy()
    square.interpret(n=4, A=A1)
    np.testing.assert_allclose(A1[1], A0[0] * A0[0])
    # ... but the written parameter must still be disjoint from both
    with pytest.raises(ExoTypeError, match="writes to 'z'"):
        @proc
        def square_bad(n: size, A: f32[2, n]):
            _readboth(n, A[0, 0:n], A[1, 0:n], A[1, 0:n])


def test_data_scalars_always_alias():
    with pytest.raises(ExoTypeError, match="would all view buffer 't'"):
        @proc
        def twice(t: f32):
            _acc(t, t)


def test_rewrites_keep_the_rule():
    @proc
    def rows(n: size, A: f32[2, n]):
        _add_into(n, A[0, 0:n], A[1, 0:n])

    # rewrites that keep the views disjoint are accepted
    p = rows.stage_mem(rows.find('_add_into(_)'), 'A[0:2, 0:n]', 'A_reg')
    assert "_add_into(n, A_reg[0, 0:n], A_reg[1, 0:n])" in str(p)

    @proc
    def outer(n: size, A: f32[2, n]):
        rows(n, A)
    assert "_add_into(n, A[0, 0:n], A[1, 0:n])" in str(
        outer.inline(outer.find('rows(_)')))

    # replace inferring overlapping arguments is refused
    @proc
    def selfadd(A: f32[2, 4]):
        for i in seq(0, 4):
            A[0, i] += A[0, i]
    with pytest.raises(SchedulingError, match="would all view buffer 'A'"):
        selfadd.replace(selfadd.find_loop('i'), _add_into)

    # any rewrite result is re-checked by Procedure._derive
    call = rows.ir().body[0]
    bad = call.update(args=(call.args[0], call.args[2], call.args[2]))
    bad_ir = rows.ir().update(body=(bad, ))
    with pytest.raises(SchedulingError, match="would all view buffer 'A'"):
        rows._derive(bad_ir, "test")
