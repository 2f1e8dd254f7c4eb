"""store_at: sink_alloc + resize_dim (folding), each checked."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import store_at


@proc
def rows(H: size, W: size, x: f32[H, W], y: f32[H, W]):
    t: f32[W]
    for r in seq(0, H):
        for c in seq(0, W):
            t[c] = x[r, c] * 2.0
        for c in seq(0, W):
            y[r, c] = t[c] + 1.0


def test_store_at_sinks_into_the_loop(equiv, same_text):
    p = store_at(rows, 't', 'r')
    same_text(p, """
def rows(H: size, W: size, x: f32[H, W] @ DRAM, y: f32[H, W] @ DRAM):
    for r in seq(0, H):
        t: f32[W] @ DRAM
        for c in seq(0, W):
            t[c] = x[r, c] * 2.0
        for c in seq(0, W):
            y[r, c] = t[c] + 1.0""")
    equiv(rows, p, [{"H": 2, "W": 3}])


@proc
def carry(H: size, W: size, x: f32[H, W], y: f32[H, W]):
    t: f32[W]
    for c in seq(0, W):
        t[c] = 0.0
    for r in seq(0, H):
        for c in seq(0, W):
            t[c] += x[r, c]
        for c in seq(0, W):
            y[r, c] = t[c]


def test_store_at_rejects_a_value_carried_across_iterations():
    with pytest.raises(SchedulingError):
        store_at(carry, 't', 'r')


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


def test_store_at_root_folded_is_a_sliding_window(equiv, same_text):
    p = store_at(blur, 't', None, fold=True, dim=0, size=3)
    same_text(p, """
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
            y[r, c] = t[r % 3, c] + t[(r + 1) % 3, c] + t[(r + 2) % 3, c]""")
    equiv(blur, p, [{"H": 1, "W": 2}, {"H": 6, "W": 3}])


def test_store_at_rejects_a_fold_shorter_than_the_reuse_distance():
    with pytest.raises(SchedulingError):
        store_at(blur, 't', None, fold=True, dim=0, size=2)


def test_store_at_fold_needs_a_size():
    with pytest.raises(SchedulingError, match="fold size"):
        store_at(blur, 't', None, fold=True)


@proc
def blur1d(n: size, x: f32[n + 2], y: f32[n]):
    assert n % 4 == 0
    t: f32[n + 2]
    for i in seq(0, n + 2):
        t[i] = x[i] * 2.0
    for j in seq(0, n):
        y[j] = t[j] + t[j + 1] + t[j + 2]


def test_store_at_after_compute_at_keeps_one_tile(equiv, same_text):
    from exo_hl.stdlib import compute_at
    p = blur1d.split('j', 4, 'jo', 'ji', tail='perfect')
    p = compute_at(p, 'i', 'jo', width=6)
    q = store_at(p, 't', 'jo', size=6, offset='4 * jo')
    same_text(q, """
def blur1d(n: size, x: f32[n + 2] @ DRAM, y: f32[n] @ DRAM):
    assert n % 4 == 0
    for jo in seq(0, n / 4):
        t: f32[6] @ DRAM
        for ii in seq(0, 6):
            t[ii] = x[4 * jo + ii] * 2.0
        for ji in seq(0, 4):
            y[4 * jo + ji] = t[ji] + t[ji + 1] + t[ji + 2]""")
    equiv(blur1d, q, [{"n": 4}, {"n": 12}])
    # a tile of 5 does not hold what the tile reads
    with pytest.raises(SchedulingError):
        store_at(p, 't', 'jo', size=5, offset='4 * jo')


def test_store_at_checks_dim_without_a_size():
    # dim is unused when no size is given, but still has to be a dimension
    with pytest.raises(SchedulingError, match="dim must be"):
        store_at(rows, 't', 'r', dim=5)
    with pytest.raises(SchedulingError, match="dim must be"):
        store_at(rows, 't', None, dim=-1)
    with pytest.raises(SchedulingError, match="offset needs"):
        store_at(rows, 't', 'r', offset=2)
    assert str(store_at(rows, 't', None, dim=0)) == str(rows)
