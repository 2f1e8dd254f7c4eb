"""SAXPY, ``y += a * x`` for any ``n``, and the same strip-mined at the
machine's vector length (RVV's ``vsetvl`` loop), written by hand.

``saxpy`` is the algorithm. ``saxpy_strips`` is how RVV code runs it on
a machine whose VLMAX (f32 lanes per register, VLEN / 32) is known only
when it runs: ``rvv_vsetvlmax_e32m1()`` reads it into ``VL.vlmax``; a
loop of ``ceil(n / 4)`` steps (VLMAX >= 4 on every RVV 1.0 machine, so
that many suffice) runs ``saxpy_strip``, which sets ``vl = min(n - off,
VLMAX)`` (``rvv_vsetvl_min_e32m1``), does elements ``off .. off + vl - 1``
(``saxpy_vl``) and advances ``Strip.off`` by ``vl``; steps past the end
do nothing.

The IR's loops step by constants and a control expression divides only by
constants, so a loop over strips of a run-time length cannot be a
``split`` of ``saxpy``'s loop: the offset is config state carried from
strip to strip, and each strip is a procedure taking it as an argument
(``off``), so that every use of the offset within a strip is the same
value to the checker. What the checker proves, for every VLMAX from 4 to
2048: every access in bounds, and every instruction's length equal to the
``vl`` in force. That ``saxpy_strips`` computes ``saxpy`` is not proven
(no rewrite derives one from the other); the tests check it at VLMAX 4,
5, 8, 16 and 2048 in ``interpret()`` and at VLEN 128, 256, 512 under
qemu.

``saxpy_strips8`` is the same with register groups of 8 (LMUL 8): strips
of ``min(n - off, 8 * VLMAX)``, ``ceil(n / 32)`` steps.
"""
from __future__ import annotations

from exo_hl import DRAM, config, f32, index, proc, seq, size
from exo_hl.hw_libs.rvv import (VL, rvv_vsetvl_min_e32m1,
                                rvv_vsetvl_min_e32m8, rvv_vsetvlmax_e32m1)


@proc
def saxpy(n: size, a: f32[1] @ DRAM, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] += a[0] * x[i]


@config
class Strip:
    """The offset of the next strip (``saxpy_strips``'s loop state)."""
    off: index


@proc
def saxpy_vl(n: size, off: index, vl: size, a: f32[1] @ DRAM,
             x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    """One strip: elements ``off .. off + vl - 1``, ``vl`` the length in
    force (at most ``MAX_LANES``)."""
    assert VL.vl == vl
    assert vl <= VL.vlmax
    assert vl <= 2048
    assert 0 <= off
    assert off + vl <= n
    for i in seq(0, vl):
        y[off + i] += a[0] * x[off + i]


@proc
def saxpy_strip(n: size, off: index, a: f32[1] @ DRAM, x: f32[n] @ DRAM,
                y: f32[n] @ DRAM):
    """The strip at ``off`` (none past the end): ``vl = min(n - off,
    VLMAX)`` elements, then the offset of the next."""
    assert VL.vlmax >= 4
    assert VL.vlmax <= 2048
    if 0 <= off and off < n:
        rvv_vsetvl_min_e32m1(n - off)
        saxpy_vl(n, off, VL.vl, a, x, y)
        Strip.off = off + VL.vl


@proc
def saxpy_strips(n: size, a: f32[1] @ DRAM, x: f32[n] @ DRAM,
                 y: f32[n] @ DRAM):
    rvv_vsetvlmax_e32m1()
    Strip.off = 0
    for s in seq(0, (n + 3) / 4):
        saxpy_strip(n, Strip.off, a, x, y)


@proc
def saxpy_vl8(n: size, off: index, vl: size, a: f32[1] @ DRAM,
              x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    """One strip of register groups of 8 (at most ``8 * MAX_LANES``)."""
    assert VL.vl == vl
    assert vl <= 8 * VL.vlmax
    assert vl <= 16384
    assert 0 <= off
    assert off + vl <= n
    for i in seq(0, vl):
        y[off + i] += a[0] * x[off + i]


@proc
def saxpy_strip8(n: size, off: index, a: f32[1] @ DRAM, x: f32[n] @ DRAM,
                 y: f32[n] @ DRAM):
    """The strip at ``off``: ``vl = min(n - off, 8 * VLMAX)``."""
    assert VL.vlmax >= 4
    assert VL.vlmax <= 2048
    if 0 <= off and off < n:
        rvv_vsetvl_min_e32m8(n - off)
        saxpy_vl8(n, off, VL.vl, a, x, y)
        Strip.off = off + VL.vl


@proc
def saxpy_strips8(n: size, a: f32[1] @ DRAM, x: f32[n] @ DRAM,
                  y: f32[n] @ DRAM):
    rvv_vsetvlmax_e32m1()
    Strip.off = 0
    for s in seq(0, (n + 31) / 32):
        saxpy_strip8(n, Strip.off, a, x, y)
