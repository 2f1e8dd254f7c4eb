"""The two-stage 3x3 box blur of Halide's ``apps/blur`` and its schedules.

Algorithm (output ``H x W``, input ``(H + 2) x (W + 2)``, ui16)::

    bx[y, x]  = (inp[y, x] + inp[y, x + 1] + inp[y, x + 2]) / 3
    out[y, x] = (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / 3

exo_hl computes integer data expressions in 32 bits (docs/semantics.md), so
each sum of three pixels is exact and ``/ 3`` is the floor of the true mean
on the whole ui16 range (Halide, in 16-bit arithmetic, wraps a sum above
65535). Every schedule below is derived from ``blur`` by checked rewrites
only, so each computes the same bits.
"""
from __future__ import annotations

from exo_hl import proc, seq, size, ui16
from exo_hl.stdlib import compute_at, store_at

TILE = 32       # rows per tile of the tiled schedules


@proc
def blur(H: size, W: size, inp: ui16[H + 2, W + 2], out: ui16[H, W]):
    assert H % 32 == 0
    bx: ui16[H + 2, W]
    for yb in seq(0, H + 2):
        for xb in seq(0, W):
            bx[yb, xb] = (inp[yb, xb] + inp[yb, xb + 1] + inp[yb, xb + 2]) / 3
    for y in seq(0, H):
        for x in seq(0, W):
            out[y, x] = (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / 3


def naive():
    """The algorithm as written: all of ``bx``, then all of ``out``."""
    return blur.rename("blur_naive")


def tiled(tile=TILE):
    """Halide's ``blur_x.compute_at(blur_y, yo)`` with recompute: tiles of
    ``tile`` output rows, each computing the ``tile + 2`` rows of ``bx`` it
    reads (2 rows recomputed per tile) into a buffer of that many rows
    (``store_at`` the tile loop)."""
    p = blur.split('y', tile, 'yo', 'yi', tail='perfect')
    p = compute_at(p, 'yb', 'yo', width=tile + 2)
    p = store_at(p, 'bx', 'yo', dim=0, size=tile + 2, offset=f"{tile} * yo")
    return p.rename("blur_tiled")
