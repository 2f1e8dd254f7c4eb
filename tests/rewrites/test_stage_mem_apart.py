"""stage_mem with accesses apart from the window (Exo's test_stage_mem,
recursive case): they keep using the buffer; an access that may partially
overlap the window is refused."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def recursive(n: size, y: f32[n], x: f32[n]):
    assert n > 2
    assert (n - 2) % 4 == 0
    for i in seq(0, n - 2):
        y[i + 2] = y[i + 1] + y[i] + x[i]


def _unrolled():
    p = recursive.divide_loop("i", 4, ["io", "ii"], perfect=True)
    return p.unroll_loop("ii")


def test_reads_apart_from_the_window_keep_the_buffer(equiv):
    p = _unrolled()
    q = p.stage_mem(p.find_loop("io").body(), "y[2 + 4 * io:6 + 4 * io]",
                    "y_tmp")
    body = [ln.strip() for ln in str(q).splitlines()]
    # y[4 * io] and y[4 * io + 1] lie before the window: still read from y
    assert "y_tmp[0] = y[4 * io + 1] + y[4 * io] + x[4 * io]" in body
    assert "y_tmp[1] = y_tmp[0] + y[4 * io + 1] + x[4 * io + 1]" in body
    assert "y_tmp[3] = y_tmp[2] + y_tmp[1] + x[4 * io + 3]" in body
    assert "y[4 * io + i0 + 2] = y_tmp[i0]" in body      # the store
    # each element is assigned before it is read: nothing to load (Exo)
    assert not any(ln.startswith("y_tmp[i0] = y[") for ln in body)
    equiv(recursive, q, [{"n": 6}, {"n": 10}, {"n": 18}])
    # random float data too (not only small integers), bit for bit
    rng = np.random.default_rng(7)
    f = q.compile()
    for n in (6, 14, 30):
        y = rng.standard_normal(n).astype(np.float32)
        x = rng.standard_normal(n).astype(np.float32)
        ref, got, cgot = y.copy(), y.copy(), y.copy()
        recursive.interpret(n, ref, x)
        q.interpret(n, got, x)
        f(n, cgot, x)
        assert ref.tobytes() == got.tobytes() == cgot.tobytes()


def test_a_write_apart_from_the_window_keeps_the_buffer(equiv):
    p = _unrolled()
    # stage only the last two of the four elements each iteration writes
    q = p.stage_mem(p.find_loop("io").body(), "y[4 + 4 * io:6 + 4 * io]",
                    "y_hi")
    text = str(q)
    assert "y[4 * io + 2] = y[4 * io + 1] + y[4 * io] + x[4 * io]" in text
    assert "y_hi[0] = y[4 * io + 3] + y[4 * io + 2] + x[4 * io + 2]" in text
    equiv(recursive, q, [{"n": 6}, {"n": 10}])


@proc
def reads_ahead(y: f32[8], x: f32[8]):
    y[3] = y[2] + x[0]
    y[2] = y[1] + x[1]
    y[4] = y[2] + x[2]
    y[5] = y[4] + y[3]


def test_elements_read_before_they_are_assigned_are_loaded(equiv):
    # y[2] is read before it is assigned: the window is loaded first
    q = reads_ahead.stage_mem(reads_ahead.find("y[3] = _").expand(0, 3),
                              "y[2:6]", "t")
    body = [ln.strip() for ln in str(q).splitlines()]
    assert "t[i0] = y[i0 + 2]" in body
    assert "t[1] = t[0] + x[0]" in body and "t[0] = y[1] + x[1]" in body
    equiv(reads_ahead, q, [{}])
    # y[4] and y[5] are assigned before any read of them: no load
    r = reads_ahead.stage_mem(reads_ahead.find("y[2] = _").expand(0, 2),
                              "y[4:6]", "t")
    body = [ln.strip() for ln in str(r).splitlines()]
    assert not any(ln.startswith("t[i0] = y[") for ln in body)
    assert "y[2] = y[1] + x[1]" in body           # apart: kept on y
    assert "t[1] = t[0] + y[3]" in body
    equiv(reads_ahead, r, [{}])


def test_a_partially_overlapping_access_is_refused():
    # rolled, y[4 * io + ii + 1] is in the window for some ii, not others
    p = recursive.divide_loop("i", 4, ["io", "ii"], perfect=True)
    with pytest.raises(SchedulingError,
                       match="does not cover this access to 'y', nor "
                       "provably lies apart from it"):
        p.stage_mem(p.find_loop("ii"), "y[2 + 4 * io:6 + 4 * io]", "y_tmp")


@proc
def guarded_reads(n: size, y: f32[8], x: f32[8]):
    for i in seq(0, 4):
        if i < 2:
            y[i] = x[i]
        else:
            y[i] = x[i] + 1.0


def test_one_index_inside_and_apart_under_two_guards_is_refused():
    with pytest.raises(SchedulingError, match="inside the window in one "
                       "place and apart from it in another"):
        guarded_reads.stage_mem(guarded_reads.find_loop("i"), "x[0:2]", "xs")


@proc
def never_runs(A: f32[4, 4], y: f32[8]):
    for i in seq(0, 0):
        y[i] += A[i, 0] + A[i, 1]


def test_shifted_literal_index_reads_back(assert_roundtrip):
    # found by the evaluation-point fuzzer: A[i, 0] staged into S[0 - i]
    # was typed as the literal (int); the frontend reads '-i' as an index
    q = never_runs.stage_mem(never_runs.find("y[_] += _"), "A[i, i:i + 1]",
                             "S")
    assert "y[i] += S[-i] + S[1 - i]" in str(q)   # (vacuously covered)
    assert_roundtrip(q)


# ----------------------------------------------------------------------
# an assignment apart from the window in a point dimension is no overwrite
# (audit 15a): ``z[3, j]`` over every ``j`` was taken for an overwrite of
# the window ``z[2, 0:8]``, the load was skipped and the store wrote
# uninitialised values back over ``z[2, 1:8]``; likewise ``x[3] = 1.0``
# for the point window ``x[2]`` whose one write is guarded
@proc
def apart_row(z: f32[4, 8], y: f32[8]):
    for j in seq(0, 8):
        z[3, j] = 1.0
        z[2, 0] = 5.0
    y[0] = z[2, 1]


@proc
def apart_point(n: size, x: f32[8], y: f32[8]):
    for j in seq(0, 1):
        x[3] = 1.0
        if n > 2:
            x[2] = 5.0


def _run_apart(p, n):
    z = np.arange(32, dtype=np.float32).reshape(4, 8)
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    if "z" in [a.name.name for a in p.ir().args]:
        p.interpret(z, y)
        return z.tolist(), y.tolist()
    p.interpret(n, x, y)
    return x.tolist(), y.tolist()


@pytest.mark.parametrize("p, window", [(apart_row, "z[2, 0:8]"),
                                       (apart_point, "x[2]")])
def test_write_apart_in_a_point_dimension_keeps_the_load(p, window):
    q = p.stage_mem(p.find_loop("j"), window, "s")
    buf = window.split("[")[0]
    assert any(ln.strip().startswith("s") and f" = {buf}[" in ln
               for ln in str(q).splitlines()), q      # the load is there
    for n in (1, 3):
        assert _run_apart(q, n) == _run_apart(p, n), (n, q)
