"""resize_dim(alloc, dim, size, offset, fold): printed result, semantics,
rejected cases (shrink/shift, and folding into a circular buffer)."""
from __future__ import annotations

import pytest

from exo_hl import (SchedulingError, config, f32, index, proc, seq, size,
                    stride)


@proc
def tile(n: size, x: f32[n, 16], y: f32[n, 16]):
    for i in seq(0, n):
        for jo in seq(0, 4):
            t: f32[16]
            for ji in seq(0, 4):
                t[4 * jo + ji] = x[i, 4 * jo + ji]
            for ji in seq(0, 4):
                y[i, 4 * jo + ji] = t[4 * jo + ji] * 2.0


def test_resize_dim_shrinks_and_shifts(equiv):
    q = tile.resize_dim("t", 0, 4, "4 * jo")
    assert str(q).rstrip() == """\
def tile(n: size, x: f32[n, 16] @ DRAM, y: f32[n, 16] @ DRAM):
    for i in seq(0, n):
        for jo in seq(0, 4):
            t: f32[4] @ DRAM
            for ji in seq(0, 4):
                t[ji] = x[i, 4 * jo + ji]
            for ji in seq(0, 4):
                y[i, 4 * jo + ji] = t[ji] * 2.0"""
    equiv(tile, q, [{"n": 1}, {"n": 3}])


def test_resize_dim_shifts_windows(equiv):
    @proc
    def copy4(a: [f32][4], b: [f32][4]):
        for k in seq(0, 4):
            b[k] = a[k]

    @proc
    def win(n: size, x: f32[n, 8], y: f32[n, 8]):
        for i in seq(0, n):
            t: f32[12]
            copy4(x[i, 0:4], t[2:6])
            copy4(x[i, 4:8], t[6:10])
            for j in seq(0, 8):
                y[i, j] = t[j + 2]
    q = win.resize_dim("t", 0, 8, 2)
    assert "copy4(x[i, 0:4], t[0:4])" in str(q)
    assert "y[i, j] = t[j]" in str(q)
    equiv(win, q, [{"n": 2}])


def test_resize_dim_rejects_access_outside_new_extent():
    with pytest.raises(SchedulingError, match=r"is in \[4 \* jo, 4 \* jo \+ 3\)"):
        tile.resize_dim("t", 0, 3, "4 * jo")
    with pytest.raises(SchedulingError, match="is in"):
        tile.resize_dim("t", 0, 4, "4 * jo + 1")
    with pytest.raises(SchedulingError, match=">= 1"):
        tile.resize_dim("t", 0, 0, 0)
    with pytest.raises(SchedulingError, match="dim must be"):
        tile.resize_dim("t", 1, 4, 0)
    with pytest.raises(SchedulingError, match="not an allocation"):
        tile.resize_dim("x", 0, 4, 0)


def test_resize_dim_rejects_layout_observers():
    @proc
    def whole(a: f32[8]):
        for k in seq(0, 8):
            a[k] = 1.0

    @proc
    def passes(x: f32[8]):
        t: f32[8]
        whole(t)
        x[0] = t[0]
    with pytest.raises(SchedulingError, match="passed whole"):
        passes.resize_dim("t", 0, 8, 0)

    @proc
    def strides(x: f32[4, 8], s: index):
        t: f32[4, 8]
        t[0, 0] = x[0, 0]
        x[0, 0] = t[0, 0]
        if stride(t, 0) == 8:
            x[1, 0] = t[0, 0]
    with pytest.raises(SchedulingError, match="reads a stride"):
        strides.resize_dim("t", 1, 1, 0)


def test_resize_dim_keeps_windows_whose_strides_do_not_change(equiv):
    """Padding the rows of a 2-d buffer (its last dimension) keeps the
    stride of that dimension, which a callee may read; the stride of the
    dimension before it changes, and a callee reading that is refused."""
    @proc
    def unit_copy(a: [f32][4], b: [f32][4]):
        assert stride(a, 0) == 1
        assert stride(b, 0) == 1
        for k in seq(0, 4):
            b[k] = a[k]

    @proc
    def rows(n: size, x: f32[n, 4], y: f32[n, 4]):
        t: f32[2, 4]
        for i in seq(0, n):
            unit_copy(x[i, 0:4], t[i % 2, 0:4])
            for j in seq(0, 4):
                y[i, j] = t[i % 2, j]
    q = rows.resize_dim("t", 1, 20, 0)        # rows 80 bytes apart
    assert "t: f32[2, 20] @ DRAM" in str(q)
    assert "unit_copy(x[i, 0:4], t[i % 2, 0:4])" in str(q)
    equiv(rows, q, [{"n": 1}, {"n": 5}])

    @proc
    def strided(a: [f32][2], b: [f32][2]):
        assert stride(a, 0) == 4
        for k in seq(0, 2):
            b[k] = a[k]

    @proc
    def cols(x: f32[2, 4], y: f32[2]):
        t: f32[2, 4]
        for i in seq(0, 2):
            for j in seq(0, 4):
                t[i, j] = x[i, j]
        strided(t[0:2, 1], y[0:2])            # dimension 0's stride
    with pytest.raises(SchedulingError, match="reads strides of a window"):
        cols.resize_dim("t", 1, 20, 0)
    # resizing dimension 0 changes no stride
    equiv(cols, cols.resize_dim("t", 0, 3, 0), [{}])

    @proc
    def reads(x: f32[4, 8]):
        t: f32[4, 8]
        t[0, 0] = x[0, 0]
        x[0, 0] = t[0, 0]
        if stride(t, 1) == 1:
            x[1, 0] = t[0, 0]
    q = reads.resize_dim("t", 1, 9, 0)        # stride(t, 1) is still 1
    assert "if stride(t, 1) == 1:" in str(q)
    equiv(reads, q, [{}])


def test_resize_dim_rejects_config_offset():
    @config
    class RdCfg:
        k: index

    @proc
    def cfg(x: f32[8]):
        RdCfg.k = 0
        t: f32[8]
        t[0] = x[0]
        x[0] = t[0]
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg.resize_dim("t", 0, 1, "RdCfg.k")


# ----------------------------------------------------------------------
# folding
@proc
def blur(H: size, W: size, x: f32[H + 2, W], y: f32[H, W]):
    t: f32[H + 2, W]
    for r in seq(0, H):
        if r == 0:
            for c in seq(0, W):
                t[0, c] = x[0, c]
            for c in seq(0, W):
                t[1, c] = x[1, c]
        for c in seq(0, W):
            t[r + 2, c] = x[r + 2, c] * 2.0
        for c in seq(0, W):
            y[r, c] = t[r, c] + t[r + 1, c] + t[r + 2, c]


def test_resize_dim_fold_sliding_window(equiv):
    q = blur.resize_dim("t", 0, 3, 0, fold=True)
    assert str(q).rstrip() == """\
def blur(H: size, W: size, x: f32[H + 2, W] @ DRAM, y: f32[H, W] @ DRAM):
    t: f32[3, W] @ DRAM
    for r in seq(0, H):
        if r == 0:
            for c in seq(0, W):
                t[0, c] = x[0, c]
            for c in seq(0, W):
                t[1, c] = x[1, c]
        for c in seq(0, W):
            t[(r + 2) % 3, c] = x[r + 2, c] * 2.0
        for c in seq(0, W):
            y[r, c] = t[r % 3, c] + t[(r + 1) % 3, c] + t[(r + 2) % 3, c]"""
    equiv(blur, q, [{"H": 1, "W": 2}, {"H": 5, "W": 3}])
    # a larger fold is safe too
    equiv(blur, blur.resize_dim("t", 0, 4, 0, fold=True), [{"H": 6, "W": 2}])


def test_resize_dim_fold_rejects_short_reuse_distance():
    with pytest.raises(SchedulingError, match="folding by 2 is not proven"):
        blur.resize_dim("t", 0, 2, 0, fold=True)


def test_resize_dim_fold_rejects_reversed_or_revisited_order():
    @proc
    def back(H: size, x: f32[H + 2], y: f32[H]):
        t: f32[H + 2]
        for r in seq(0, H):
            t[r + 2] = x[r + 2]
            t[r] = x[r]
            y[r] = t[r] + t[r + 2]
    # slot of r+2 and of r collide within one iteration
    with pytest.raises(SchedulingError, match="folding by 2"):
        back.resize_dim("t", 0, 2, 0, fold=True)

    @proc
    def revisit(H: size, x: f32[H], y: f32[H]):
        t: f32[H]
        for r in seq(0, H):
            t[r] = x[r]
        for r in seq(0, H):
            y[r] = t[r]
    # the first loop is a prologue of the second: all its accesses count as
    # one iteration before the loop, where t[0] and t[2] would collide
    with pytest.raises(SchedulingError, match="folding by 2"):
        revisit.resize_dim("t", 0, 2, 0, fold=True)


def test_resize_dim_fold_rejects_slices_and_symbolic_size():
    @proc
    def copy2(a: [f32][2], b: [f32][2]):
        for k in seq(0, 2):
            b[k] = a[k]

    @proc
    def sl(H: size, x: f32[H + 1], y: f32[H + 1]):
        t: f32[H + 1]
        for r in seq(0, H):
            copy2(x[r:r + 2], t[r:r + 2])
            y[r] = t[r]
    with pytest.raises(SchedulingError, match="slices the folded"):
        sl.resize_dim("t", 0, 4, 0, fold=True)
    with pytest.raises(SchedulingError, match="constant size"):
        blur.resize_dim("t", 0, "H", 0, fold=True)
    with pytest.raises(SchedulingError, match=">= 1"):
        blur.resize_dim("t", 0, 3, 1, fold=True)


@proc
def slide(H: size, x: f32[H + 2], y: f32[H]):
    t: f32[H + 2]
    for r in seq(0, 2):
        t[r] = x[r] * 2.0
    for r in seq(0, H):
        t[r + 2] = x[r + 2] * 2.0
        y[r] = t[r] + t[r + 1] + t[r + 2]


def test_resize_dim_fold_with_a_prologue(equiv):
    # the first rows of a sliding window, computed before its loop
    q = slide.resize_dim("t", 0, 3, 0, fold=True)
    assert str(q).rstrip() == """\
def slide(H: size, x: f32[H + 2] @ DRAM, y: f32[H] @ DRAM):
    t: f32[3] @ DRAM
    for r in seq(0, 2):
        t[r % 3] = x[r] * 2.0
    for r in seq(0, H):
        t[(r + 2) % 3] = x[r + 2] * 2.0
        y[r] = t[r % 3] + t[(r + 1) % 3] + t[(r + 2) % 3]"""
    equiv(slide, q, [{"H": 1}, {"H": 5}])
    with pytest.raises(SchedulingError, match="folding by 2"):
        slide.resize_dim("t", 0, 2, 0, fold=True)


def test_resize_dim_fold_rejects_a_prologue_reaching_too_far():
    @proc
    def early(H: size, x: f32[H + 3], y: f32[H]):
        t: f32[H + 3]
        for r in seq(0, 3):
            t[r] = x[r]
        for r in seq(0, H):
            t[r + 3] = x[r + 3]
            y[r] = t[r] + t[r + 2]
    # the prologue's t[0] and t[2] need distinct slots; and t[r + 3] of
    # iteration 0 would overwrite t[0] that this iteration still reads
    with pytest.raises(SchedulingError, match="folding by 3"):
        early.resize_dim("t", 0, 3, 0, fold=True)
    early.resize_dim("t", 0, 4, 0, fold=True)

    @proc
    def late(H: size, x: f32[H + 2], y: f32[H + 1]):
        t: f32[H + 2]
        for r in seq(0, H):
            t[r + 2] = x[r + 2]
            y[r] = t[r + 2]
        t[0] = x[0]           # after the loop: not a prologue
        y[H] = t[0]
    with pytest.raises(SchedulingError, match="one sequential loop"):
        late.resize_dim("t", 0, 2, 0, fold=True)


# accesses through window names, and by callees given a window, happen where
# they execute (not where the window was bound)
@proc
def _row_sum(v: [f32][4], s: [f32][1]):
    s[0] = v[0] + v[3]


@proc
def early_window(x: f32[4, 4], y: f32[4]):
    t: f32[4, 4]
    for j in seq(0, 4):
        t[0, j] = x[0, j]
    w = t[0, 0:4]
    for i in seq(1, 4):
        for j in seq(0, 4):
            t[i, j] = x[i, j] * 2.0
        y[i] = w[0] + t[i, 1]


def test_resize_dim_fold_rejects_reads_through_an_early_window():
    fw = early_window
    # w[0] is t[0, 0], read in every iteration: row 2 would overwrite it
    with pytest.raises(SchedulingError, match="folding by 2 is not proven"):
        fw.resize_dim("t", 0, 2, 0, fold=True)
    with pytest.raises(SchedulingError, match="folding by 3 is not proven"):
        fw.resize_dim("t", 0, 3, 0, fold=True)


def test_resize_dim_fold_rejects_writes_through_an_early_window():
    @proc
    def ww(x: f32[4, 4], y: f32[4]):
        t: f32[4, 4]
        w = t[0, 0:4]
        for j in seq(0, 4):
            t[0, j] = x[0, j]
        for i in seq(1, 4):
            for j in seq(0, 4):
                t[i, j] = x[i, j]
            w[1] = x[0, 1]          # rewrites t[0, 1] in every iteration
            y[i] = t[i, 1]
    with pytest.raises(SchedulingError, match="folding by 2 is not proven"):
        ww.resize_dim("t", 0, 2, 0, fold=True)


def test_resize_dim_fold_rejects_a_callee_reading_an_early_window():
    @proc
    def fc(x: f32[4, 4], y: f32[4, 1]):
        t: f32[4, 4]
        for j in seq(0, 4):
            t[0, j] = x[0, j]
        w = t[0, 0:4]
        for i in seq(1, 4):
            for j in seq(0, 4):
                t[i, j] = x[i, j]
            _row_sum(w, y[i, 0:1])
    with pytest.raises(SchedulingError, match="folding by 2 is not proven"):
        fc.resize_dim("t", 0, 2, 0, fold=True)

    @proc
    def fc2(x: f32[4, 4], y: f32[4, 1]):
        t: f32[4, 4]
        for j in seq(0, 4):
            t[0, j] = x[0, j]
        w = t[0:4, 0:4]
        for i in seq(1, 4):
            for j in seq(0, 4):
                t[i, j] = x[i, j]
            _row_sum(w[0, 0:4], y[i, 0:1])   # a window of the window
    with pytest.raises(SchedulingError, match="slices the folded"):
        fc2.resize_dim("t", 0, 2, 0, fold=True)

    @proc
    def fc3(x: f32[4, 4], y: f32[4, 1]):
        t: f32[4, 4]
        for j in seq(0, 4):
            t[0, j] = x[0, j]
        w = t[0, 0:4]
        for i in seq(1, 4):
            for j in seq(0, 4):
                t[i, j] = x[i, j]
            _row_sum(w[0:4], y[i, 0:1])      # a window of the window
    with pytest.raises(SchedulingError, match="folding by 2 is not proven"):
        fc3.resize_dim("t", 0, 2, 0, fold=True)


def test_resize_dim_fold_keeps_windows_used_safely(equiv):
    keep = early_window
    # rows 1..3 never share row 0's slot when folding by 4
    q = keep.resize_dim("t", 0, 4, 0, fold=True)
    assert "w = t[0, 0:4]" in str(q)
    equiv(keep, q, [{}])

    @proc
    def per_row(H: size, x: f32[H + 2, 4], y: f32[H, 1]):
        t: f32[H + 2, 4]
        for r in seq(0, 2):
            for c in seq(0, 4):
                t[r, c] = x[r, c]
        for r in seq(0, H):
            for c in seq(0, 4):
                t[r + 2, c] = x[r + 2, c]
            w = t[r, 0:4]
            _row_sum(w, y[r, 0:1])
            _row_sum(t[r + 2, 0:4], y[r, 0:1])
    q = per_row.resize_dim("t", 0, 3, 0, fold=True)
    assert "w = t[r % 3, 0:4]" in str(q)
    assert "_row_sum(t[(r + 2) % 3, 0:4], y[r, 0:1])" in str(q)
    equiv(per_row, q, [{"H": 1}, {"H": 5}])
    with pytest.raises(SchedulingError, match="folding by 2 is not proven"):
        per_row.resize_dim("t", 0, 2, 0, fold=True)
