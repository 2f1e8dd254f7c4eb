"""stage_mem with a window running past the buffer (guarded copies), and
staging a window of a buffer that is itself staged (staging twice)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def axpy(n: size, a: f32[1], x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += a[0] * x[i]


@proc
def blur(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if i >= 1:
            if i < n - 1:
                y[i] = x[i - 1] + x[i] + x[i + 1]


SIZES = [{"n": 3}, {"n": 8}, {"n": 13}, {"n": 17}]


def _blocks(p):
    return p.split('i', 8, 'io', 'ii', tail='guard')


def test_window_past_the_end_guards_load_and_store(equiv):
    p = _blocks(axpy)
    q = p.stage_mem(p.find_loop('ii'), 'y[8 * io:8 * io + 8]', 'yv')
    assert str(q) == """\
def axpy(n: size, a: f32[1] @ DRAM, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for io in seq(0, (n + 7) / 8):
        yv: f32[8] @ DRAM
        for i0 in seq(0, 8):
            if i0 < n - 8 * io:
                yv[i0] = y[8 * io + i0]
            else:
                yv[i0] = 0.0
        for ii in seq(0, 8):
            if 8 * io + ii < n:
                yv[ii] += a[0] * x[8 * io + ii]
        for i0 in seq(0, 8):
            if i0 < n - 8 * io:
                y[8 * io + i0] = yv[i0]"""
    equiv(axpy, q, SIZES)


def test_window_past_both_ends(equiv):
    p = _blocks(blur)
    q = p.stage_mem(p.find_loop('ii'), 'x[8 * io - 1:8 * io + 9]', 'xv')
    assert "if 1 - 8 * io <= i0 and i0 < n - 8 * io + 1:" in str(q)
    assert "y[8 * io + ii] = xv[ii] + xv[ii + 1] + xv[ii + 2]" in str(q)
    assert "= xv[" not in str(q).split("for ii")[0]   # x is only read
    equiv(blur, q, SIZES)


def test_guarded_accum_adds_back_inside_only(equiv):
    p = _blocks(axpy)
    q = p.stage_mem(p.find_loop('ii'), 'y[8 * io:8 * io + 8]', 'acc',
                    accum=True)
    text = str(q)
    assert "acc[i0] = 0.0" in text
    assert """\
        for i0 in seq(0, 8):
            if i0 < n - 8 * io:
                y[8 * io + i0] += acc[i0]""" in text
    equiv(axpy, q, SIZES)


def test_guarded_window_must_still_cover():
    p = _blocks(blur)
    with pytest.raises(SchedulingError, match="guarded.*does not cover"):
        p.stage_mem(p.find_loop('ii'), 'x[8 * io:8 * io + 9]', 'xv')


def test_backwards_window_rejected():
    p = _blocks(axpy)
    with pytest.raises(SchedulingError, match="backwards"):
        p.stage_mem(p.find_loop('ii'), 'y[8 * io + 8:8 * io]', 'yv')


def test_point_past_the_end_rejected():
    @proc
    def rows(n: size, x: f32[n, 8], y: f32[n, 8]):
        for i in seq(0, n):
            for j in seq(0, 8):
                y[i, j] = x[i, j]
    with pytest.raises(SchedulingError, match="out of bounds"):
        rows.stage_mem(rows.find_loop('j'), 'x[i + 1, 0:8]', 'xr')


# ----------------------------------------------------------------------
# staging twice: a window of a staged buffer

def _staged_blur():
    p = _blocks(blur)
    return p.stage_mem(p.find_loop('ii'), 'x[8 * io - 1:8 * io + 9]', 'xv')


def test_stage_a_window_of_a_staged_buffer(equiv):
    q = _staged_blur()
    r = q.stage_mem(q.find_loop('ii'), 'xv[0:10]', 'xr')
    assert """\
        xr: f32[10] @ DRAM
        for i1 in seq(0, 10):
            xr[i1] = xv[i1]
        for ii in seq(0, 8):
            if 8 * io + ii < n:
                if 8 * io + ii >= 1:
                    if 8 * io + ii < n - 1:
                        y[8 * io + ii] = xr[ii] + xr[ii + 1] + xr[ii + 2]""" \
        in str(r)
    equiv(blur, r, SIZES)


def test_stage_a_staged_buffer_per_statement(equiv):
    # the inner window moves with ii: one element row per iteration
    q = _staged_blur()
    r = q.stage_mem(q.find("y[_] = _"), 'xv[ii:ii + 3]', 'x3')
    assert "x3[i1] = xv[ii + i1]" in str(r)
    assert "y[8 * io + ii] = x3[0] + x3[1] + x3[2]" in str(r)
    equiv(blur, r, SIZES)


def test_stage_twice_guarded(equiv):
    # a window past the end of the staged buffer is guarded the same way
    q = _staged_blur()
    r = q.stage_mem(q.find_loop('ii'), 'xv[0:16]', 'xr')
    assert "if i1 < 10:" in str(r)
    equiv(blur, r, SIZES)


def test_stage_twice_rejects_a_window_missing_accesses():
    q = _staged_blur()
    with pytest.raises(SchedulingError, match="does not cover"):
        q.stage_mem(q.find_loop('ii'), 'xv[1:10]', 'xr')


def test_stage_twice_rejects_the_original_buffer():
    # inside the block only the staged copy is accessed
    q = _staged_blur()
    with pytest.raises(SchedulingError, match="no access of the block"):
        q.stage_mem(q.find_loop('ii'), 'x[8 * io - 1:8 * io + 9]', 'xw')


def test_stage_around_a_guarded_staging(equiv):
    # staging again, outside: the guarded copies of the first staging are
    # accesses the outer window must cover (under their guards)
    p = _blocks(axpy)
    q = p.stage_mem(p.find_loop('ii'), 'y[8 * io:8 * io + 8]', 'yv')
    r = q.stage_mem(q.find_loop('io'), 'y[0:n]', 'yall')
    text = str(r)
    assert "yall[i1] = y[i1]" in text and "y[i1] = yall[i1]" in text
    assert "yv[i0] = yall[8 * io + i0]" in text
    assert "yall[8 * io + i0] = yv[i0]" in text
    equiv(axpy, r, SIZES)
    # an outer window that misses the guarded copies' elements is refused
    with pytest.raises(SchedulingError, match="does not cover"):
        q.stage_mem(q.find_loop('io'), 'y[0:n - 1]', 'yall')


def test_random_guarded_windows_are_refused_or_equivalent(equiv):
    """Windows shifted and widened at random around blocks of a guarded
    split: each staging is either refused or gives the same results (the
    windows that miss an access must be the refused ones)."""
    import random
    rng = random.Random(12)
    accepted = refused = 0
    for _ in range(24):
        w = rng.choice([3, 4, 8])
        src = rng.choice([axpy, blur])
        buf = 'y' if src is axpy else 'x'
        p = src.split('i', w, 'io', 'ii', tail='guard')
        lo, hi = rng.randint(-2, 1), rng.randint(w - 1, w + 3)
        win = f"{buf}[{w} * io + {lo}:{w} * io + {hi}]"
        # the elements the block touches: [w*io + need_lo, w*io + need_hi)
        need_lo, need_hi = (0, w) if src is axpy else (-1, w + 1)
        block = rng.choice([p.find_loop('ii'), p.find('if _: _')])
        if block.is_if() and src is blur:
            block = p.find_loop('ii')
        try:
            q = p.stage_mem(block, win, 'st')
        except SchedulingError:
            refused += 1
            if block.is_loop():
                assert lo > need_lo or hi < need_hi, win
            continue
        accepted += 1
        if block.is_loop():   # accepted exactly when the window covers
            assert lo <= need_lo and hi >= need_hi, win
        equiv(src, q, [{"n": 1}, {"n": 5}, {"n": 11}], compiled=False)
    assert accepted and refused
