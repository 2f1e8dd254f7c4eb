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

import functools

from exo_hl import proc, seq, size, ui16
from exo_hl.stdlib import compute_at, store_at

TILE = 32       # rows per tile of the tiled schedules
PAD = 32        # pixels of padding per row of bx in the vectorized ones


@proc
def blur(H: size, W: size, inp: ui16[H + 2, W + 2], out: ui16[H, W]):
    assert H % 32 == 0
    assert W % 16 == 0
    bx: ui16[H + 2, W]
    for yb in seq(0, H + 2):
        for xb in seq(0, W):
            bx[yb, xb] = (inp[yb, xb] + inp[yb, xb + 1] + inp[yb, xb + 2]) / 3
    for y in seq(0, H):
        for x in seq(0, W):
            out[y, x] = (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / 3


@proc
def blur16(H: size, W: size, inp: ui16[H + 2, W + 2], out: ui16[H, W]):
    assert H % 32 == 0
    assert W % 32 == 0                  # whole AVX-512 registers of ui16
    bx: ui16[H + 2, W]
    for yb in seq(0, H + 2):
        for xb in seq(0, W):
            bx[yb, xb] = ((inp[yb, xb] + inp[yb, xb + 1] + inp[yb, xb + 2])
                          % 65536) / 3
    for y in seq(0, H):
        for x in seq(0, W):
            out[y, x] = ((bx[y, x] + bx[y + 1, x] + bx[y + 2, x])
                         % 65536) / 3


# the two algorithms: the exact mean, and Halide's (16-bit sums that wrap)
ALGORITHMS = {"exact": blur, "halide16": blur16}


def _name(algo, what):
    return f"blur_{what}" if algo is blur else f"blur16_{what}"


def naive(algo=blur):
    """The algorithm as written: all of ``bx``, then all of ``out``."""
    return algo.rename(_name(algo, "naive"))


def tiled(tile=TILE, algo=blur):
    """Halide's ``blur_x.compute_at(blur_y, yo)`` with recompute: tiles of
    ``tile`` output rows, each computing the ``tile + 2`` rows of ``bx`` it
    reads (2 rows recomputed per tile) into a buffer of that many rows
    (``store_at`` the tile loop)."""
    p = algo.split('y', tile, 'yo', 'yi', tail='perfect')
    p = compute_at(p, 'yb', 'yo', width=tile + 2)
    p = store_at(p, 'bx', 'yo', dim=0, size=tile + 2, offset=f"{tile} * yo")
    return p.rename(_name(algo, "tiled"))


def _slide(p, prod, cons):
    """Fuse the producer loop ``prod`` (rows ``0 .. n + 2``) into the
    consumer loop ``cons`` (``n`` rows) as a sliding window: the first two
    rows before the loop, then one new row per consumer row."""
    p = p.cut_loop(p.find_loop(prod), 2)
    p = p.shift_loop(p.find_loop(f"{prod} #1"), 0)
    return p.fuse_loop(p.find_loop(f"{prod} #1"), p.find_loop(cons))


def sliding(algo=blur):
    """Halide's sliding window (``blur_x.store_root().compute_at(blur_y,
    y)``): one new row of ``bx`` per output row, kept in a circular buffer
    of 3 rows (``store_at`` root with ``fold=True``)."""
    p = _slide(algo, 'yb', 'y')
    p = store_at(p, 'bx', None, fold=True, dim=0, size=3)
    return p.rename(_name(algo, "sliding"))


def sliding_tiles(tile=TILE, parallel=False, algo=blur):
    """Strips of ``tile`` output rows (2 rows of ``bx`` recomputed per
    strip, ``compute_at``), each a sliding window over a circular buffer of
    3 rows (``store_at`` the strip loop, ``fold=True``); strips are
    independent, so ``parallel=True`` runs them on threads (``par``)."""
    p = algo.split('y', tile, 'yo', 'yi', tail='perfect')
    p = compute_at(p, 'yb', 'yo', width=tile + 2)
    p = store_at(p, 'bx', 'yo')
    p = _slide(p, 'ybi', 'yi')
    p = store_at(p, 'bx', None, fold=True, dim=0, size=3,
                 offset=f"{tile} * yo")
    if parallel:
        p = p.parallelize('yo')
    return p.rename(_name(algo, "strips_par" if parallel else "strips"))


def _isa(wrap, avx512=False, neon=False, rvv=False):
    """(register memory, load, mean of three, store, lanes) of one
    instruction set: AVX2 (16 lanes), AVX-512 (32, ``wrap`` only), NEON
    (8 lanes of ``uint16x8_t``) or RVV (8 lanes of ``vuint16m1_t``, the
    ui16 lanes every RVV machine has: each instruction takes its length
    ``n`` = 8 first and asserts ``VL.vl == 8``)."""
    if avx512:
        from exo_hl.hw_libs.avx512 import (AVX512, mm512_loadu_epi16,
                                           mm512_mean3_wrap_epu16,
                                           mm512_storeu_epi16)
        return (AVX512, mm512_loadu_epi16, mm512_mean3_wrap_epu16,
                mm512_storeu_epi16, 32)
    if neon:
        from exo_hl.hw_libs import neon as n
        return (n.Neon, n.neon_vld_8xu16,
                n.neon_mean3_wrap_8xu16 if wrap else n.neon_mean3_8xu16,
                n.neon_vst_8xu16, n.LANESU16)
    if rvv:
        from exo_hl.hw_libs import rvv as r
        return (r.RVV, r.rvv_vle16_u16,
                r.rvv_mean3_wrap_u16 if wrap else r.rvv_mean3_u16,
                r.rvv_vse16_u16, r.LANESU16)
    from exo_hl.hw_libs import avx2 as a
    return (a.AVX2, a.mm256_loadu_epi16,
            a.mm256_mean3_wrap_epu16 if wrap else a.mm256_mean3_epu16,
            a.mm256_storeu_epi16, 16)


def _vec_stage(p, loop, tag, wrap=False, avx512=False, neon=False,
               rvv=False):
    """Vectorize one stage's row loop ``loop`` (body ``d[.., x] = (r0 + r1
    + r2) / 3``) by 16 lanes: split it, bind each read and the mean to
    16-lane ui16 buffers in AVX2 registers (``bind_expr``, ``expand_dim``,
    ``lift_alloc``, ``fission_after``), then select the instructions
    (``replace``): three loads, ``mm256_mean3_epu16`` (with ``wrap``, the
    body ``d[.., x] = ((r0 + r1 + r2) % 65536) / 3`` and
    ``mm256_mean3_wrap_epu16``), one store. ``avx512`` (with ``wrap``):
    32 lanes in AVX-512 registers, ``mm512_mean3_wrap_epu16``; ``neon``:
    8 lanes in NEON registers, ``neon_mean3_8xu16`` or
    ``neon_mean3_wrap_8xu16``; ``rvv``: 8 lanes in RVV registers,
    ``rvv_mean3_u16`` or ``rvv_mean3_wrap_u16`` (``VL.vl == 8`` proven
    at each)."""
    mem, load, mean3, store, lanes = _isa(wrap, avx512, neon, rvv)
    xo, xi = f"{tag}o", f"{tag}i"
    p = p.split(loop, lanes, xo, xi, tail='perfect')
    body = p.find_loop(xi).body()[0]
    dst = repr(body.idx()[0])   # the row index of the stage's output
    dst = dst[dst.index(": ") + 2:-1]
    names = [f"{tag}{k}" for k in range(3)] + [f"{tag}m"]
    cols = f"{lanes} * {xo}:{lanes} * {xo} + {lanes}"
    p = p.stage_mem(p.find_loop(xi), f"{body.name()}[{dst}, {cols}]",
                    names[3])
    for k in range(3):
        s3 = p.find(f"{names[3]}[_] = _").rhs().lhs()   # (r0 + r1) + r2
        if wrap:                                        # (...) % 65536
            s3 = s3.lhs()
        r = [s3.lhs().lhs(), s3.lhs().rhs(), s3.rhs()][k]
        p = p.bind_expr(r, names[k])
    for n in names[:3]:
        p = p.set_precision(n, 'ui16')
        p = p.expand_dim(n, lanes, xi)
        p = p.lift_alloc(f"{n} : _")
    for n in names:
        p = p.set_memory(n, mem)
    for n in names[:3]:
        p = p.fission_after(p.find(f"{n}[_] = _"))
    for n in names[:3]:
        p = p.replace(p.find(f"{n}[_] = _").parent(), load)
    p = p.replace(p.find(f"{names[3]}[_] = _").parent(), mean3)
    return p.replace(p.find(f"_ = {names[3]}[_]").parent(), store)


def vectorized(base=sliding_tiles, algo=blur, avx512=False, pad=PAD,
               neon=False, rvv=False, **kw):
    """``base`` with both stages' row loops vectorized by 16 ui16 lanes
    (AVX2: three loads, ``mm256_mean3_epu16`` or, for ``blur16``,
    ``mm256_mean3_wrap_epu16``, one store per 16 pixels); ``avx512`` (for
    ``blur16``): by 32 lanes with ``mm512_mean3_wrap_epu16``; ``neon``:
    by 8 lanes in NEON registers (``neon_mean3_8xu16``,
    ``neon_mean3_wrap_8xu16``; run with ``compile(target='aarch64')``);
    ``rvv``: by 8 lanes in RVV registers, the vector length written once
    at the top (``configwrite_at`` of ``VL.vl = 8``, selected as
    ``rvv_vsetvl_e16m1``), the checker proving ``VL.vl == 8`` at each
    instruction (``rvv_mean3_u16``, ``rvv_mean3_wrap_u16``; run with
    ``compile(target='riscv64')``, the same code at any VLEN). The row loop
    of the window's new ``bx`` row and that of the output row are fused.

    ``bx``'s rows are padded by ``pad`` pixels (``resize_dim``): with
    ``W`` a multiple of 2048, unpadded rows lie a multiple of 4 KiB apart,
    so the loads of one row alias, in the CPU's store-forwarding check,
    the store just made to another (4K aliasing) and stall."""
    p = base(algo=algo, **kw)
    if pad:
        p = p.resize_dim('bx', 1, f"W + {pad}", 0)
    if rvv:                      # the vector length, once, as config state
        from exo_hl.hw_libs.rvv import VL, LANESU16, rvv_vsetvl_e16m1
        p = p.configwrite_at(p.body()[0], VL, 'vl', str(LANESU16),
                             before=True)
        p = p.replace(p.find('VL.vl = _'), rvv_vsetvl_e16m1)
    for k, loop in enumerate(('xb', 'xb', 'x')):   # first rows, row, output
        p = _vec_stage(p, loop, f"v{k}", wrap=algo is blur16, avx512=avx512,
                       neon=neon, rvv=rvv)
    # one pass over the columns per output row: the new row of bx and the
    # output row it completes (each column reads the bx columns just written)
    return p.fuse_loop(p.find_loop('v1o'), p.find_loop('v2o'))


def _once(fn):
    """A schedule built once per process (procedures are immutable)."""
    return functools.cache(fn)


def _builders(algo):
    """name -> a function returning that schedule of ``algo``."""
    return {"naive": lambda: naive(algo),
            "tiled": lambda: tiled(algo=algo),
            "sliding": lambda: sliding(algo),
            "strips": lambda: sliding_tiles(algo=algo),
            "strips_par": lambda: sliding_tiles(parallel=True, algo=algo),
            "vec_sliding": lambda: vectorized(sliding, algo).rename(
                _name(algo, "vec_sliding")),
            "vec_strips": lambda: vectorized(algo=algo).rename(
                _name(algo, "vec_strips")),
            "vec_strips_par": lambda: vectorized(
                algo=algo, parallel=True).rename(
                    _name(algo, "vec_strips_par"))}


# name -> a function returning the scheduled procedure: the exact mean ...
SCHEDULES = {k: _once(f) for k, f in _builders(blur).items()}
# ... and Halide's algorithm (16-bit sums wrapping), the same schedules
SCHEDULES16 = {k: _once(f) for k, f in _builders(blur16).items()}
# ... and its vectorized strips emitted for AVX-512 (32 lanes)
SCHEDULES16_AVX512 = {
    "vec512_strips": _once(lambda: vectorized(
        algo=blur16, avx512=True).rename("blur16_vec512_strips")),
    "vec512_strips_par": _once(lambda: vectorized(
        algo=blur16, avx512=True, parallel=True).rename(
            "blur16_vec512_strips_par"))}
# ... and the vectorized ones for ARM NEON (8 lanes; compile(target=
# 'aarch64'), run under qemu-aarch64 on x86), of each algorithm
def _neon_builders(algo):
    return {name: _once(functools.partial(
        lambda base, nm: vectorized(base, algo, neon=True).rename(
            _name(algo, nm)), base, name))
        for name, base in (("neon_sliding", sliding),
                           ("neon_strips", sliding_tiles))}


SCHEDULES_NEON = _neon_builders(blur)
SCHEDULES16_NEON = _neon_builders(blur16)


# ... and for RISC-V V (8 ui16 lanes at every VLEN; compile(target=
# 'riscv64'), run under qemu-riscv64 on x86), of each algorithm
def _rvv_builders(algo):
    return {name: _once(functools.partial(
        lambda base, nm: vectorized(base, algo, rvv=True).rename(
            _name(algo, nm)), base, name))
        for name, base in (("rvv_sliding", sliding),
                           ("rvv_strips", sliding_tiles))}


SCHEDULES_RVV = _rvv_builders(blur)
SCHEDULES16_RVV = _rvv_builders(blur16)
