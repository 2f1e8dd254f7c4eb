"""Unsharp mask as a four-stage f32 pipeline, and its schedules.

Output ``H x W``, input ``(H + 2) x (W + 2)``, values in ``[0, 1]``::

    bx[y, x]  = (inp[y, x] + inp[y, x + 1] + inp[y, x + 2]) * 0.333...
    by[y, x]  = (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) * 0.333...
    sh[y, x]  = inp[y + 1, x + 1] + inp[y + 1, x + 1] - by[y, x]
    out[y, x] = 0 if sh < 0 else (1 if 1 < sh else sh)

(blur, sharpen ``2 * in - blur``, clamp to [0, 1]). The clamp is written
with ``select`` (``a < b ? c : d`` in C, which the compiler vectorizes),
not ``fmin``/``fmax`` (C's ``fminf``/``fmaxf``, library calls for their NaN
rules). Every schedule is derived from
``unsharp`` by checked rewrites only. Each stage is written without a
product feeding a sum (``in + in``, not ``2 * in``), so that no schedule
gives the C compiler a multiply-add to contract (``-ffp-contract``): all
schedules, and numpy's float32, compute the same bits. For the same reason
``by`` stays a stored stage (inlined, ``x - s * 0.333...`` could be fused).
"""
from __future__ import annotations

import functools

from exo_hl import f32, proc, seq, size
from exo_hl.stdlib import compute_at, inline_producer, store_at


@proc
def unsharp(H: size, W: size, inp: f32[H + 2, W + 2], out: f32[H, W]):
    assert H % 32 == 0
    bx: f32[H + 2, W]
    for yb in seq(0, H + 2):
        for xb in seq(0, W):
            bx[yb, xb] = (inp[yb, xb] + inp[yb, xb + 1] +
                          inp[yb, xb + 2]) * 0.3333333333333333
    by: f32[H, W]
    for yy in seq(0, H):
        for xy in seq(0, W):
            by[yy, xy] = (bx[yy, xy] + bx[yy + 1, xy] +
                          bx[yy + 2, xy]) * 0.3333333333333333
    sh: f32[H, W]
    for ys in seq(0, H):
        for xs in seq(0, W):
            sh[ys, xs] = inp[ys + 1, xs + 1] + inp[ys + 1, xs + 1] - \
                by[ys, xs]
    for y in seq(0, H):
        for x in seq(0, W):
            out[y, x] = select(sh[y, x], 0.0, 0.0,
                               select(1.0, sh[y, x], 1.0, sh[y, x]))


def naive():
    """Each stage over the whole image into its own buffer."""
    return unsharp.rename("unsharp_naive")


def inlined():
    """Sharpen inlined into the clamp (``inline_producer`` of its loop):
    three stages, one buffer fewer."""
    return inline_producer(unsharp, 'ys').rename("unsharp_inline")


def _slide(p, prod, cons):
    """The producer loop ``prod`` (rows ``0 .. n + 2``) fused into the
    consumer loop ``cons`` (``n`` rows) as a sliding window."""
    p = p.cut_loop(p.find_loop(prod), 2)
    p = p.shift_loop(p.find_loop(f"{prod} #1"), 0)
    return p.fuse_loop(p.find_loop(f"{prod} #1"), p.find_loop(cons))


def fused():
    """One pass over the rows: sharpen inlined; ``by`` computed per output
    row (``compute_at``) into one row (``store_at``); ``bx`` a sliding
    window of three rows (``store_at`` with ``fold=True``)."""
    p = inline_producer(unsharp, 'ys')
    p = compute_at(p, 'yy', 'y', width=1)
    p = p.unroll_loop('yyi')
    p = store_at(p, 'by', 'y', size=1, offset='y')
    p = _slide(p, 'yb', 'y')
    p = store_at(p, 'bx', None, fold=True, dim=0, size=3)
    return p.rename("unsharp_fused")


def fused_strips(tile=32, parallel=False):
    """``fused`` on strips of ``tile`` rows (2 rows of ``bx`` recomputed
    per strip); ``parallel=True`` runs the strips on threads (``par``)."""
    p = inline_producer(unsharp, 'ys')
    p = p.split('y', tile, 'yo', 'yi', tail='perfect')
    p = compute_at(p, 'yy', 'yo', width=tile)
    p = store_at(p, 'by', 'yo')
    p = p.fuse_loop(p.find_loop('yyi'), p.find_loop('yi'))
    p = store_at(p, 'by', 'yyi', size=1, offset=f"{tile} * yo + yyi")
    p = compute_at(p, 'yb', 'yo', width=tile + 2)
    p = store_at(p, 'bx', 'yo')
    p = _slide(p, 'ybi', 'yyi')
    p = store_at(p, 'bx', None, fold=True, dim=0, size=3,
                 offset=f"{tile} * yo")
    if parallel:
        p = p.parallelize('yo')
    return p.rename("unsharp_strips_par" if parallel else "unsharp_strips")


# name -> a function returning the scheduled procedure (built once)
SCHEDULES = {k: functools.cache(f) for k, f in {
    "naive": naive, "inline": inlined, "fused": fused,
    "strips": fused_strips,
    "strips_par": lambda: fused_strips(parallel=True)}.items()}
