"""Footprints (``effects.footprint``): race proofs of ``par`` loops around
calls first use each callee's whole argument windows. An
over-approximation: what it proves holds for the calls; what it cannot
prove, the precise effect decides."""
from __future__ import annotations

import functools
import random

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.core_ir.printer import proc_to_str
from exo_hl.effects.api import _race_free, loop_is_parallel
from exo_hl.effects.footprint import footprint_proc, with_footprints


@proc
def copy2(dst: [f32][2], src: [f32][2]):
    dst[1] = src[0]


@proc
def shift2(x: [f32][2]):
    x[1] = x[0]


@proc
def blk16(a: [f32][16], b: [f32][16]):
    for l in seq(0, 16):
        b[l] += 2.0 * a[l]


def test_footprint_writes_written_windows_whole_and_reads_the_others():
    fp = footprint_proc(copy2.ir())
    text = proc_to_str(fp)
    assert "dst[k0] = 0.0" in text and "= src[k0]" in text
    assert "src[k0] =" not in text


def test_disjoint_windows_proven_with_footprints():
    @proc
    def caller(n: size, x: f32[2 * n], y: f32[2 * n]):
        for i in seq(0, n):
            copy2(y[2 * i:2 * i + 2], x[2 * i:2 * i + 2])
    q = caller.parallelize('i')
    assert "for i in par(0, n)" in str(q)


def test_overlapping_windows_fall_back_to_the_precise_effect():
    # the windows y[i:i+2] overlap between neighbours, but copy2 writes
    # only their second element: the footprint cannot prove it, the
    # callee's own effect does
    @proc
    def caller(n: size, x: f32[n + 1], y: f32[n + 1]):
        for i in seq(0, n):
            copy2(y[i:i + 2], x[i:i + 2])
    q = caller.parallelize('i')
    assert "for i in par(0, n)" in str(q)


def test_racing_calls_rejected():
    # iteration i writes x[i + 1], which iteration i + 1 reads
    @proc
    def caller(n: size, x: f32[n + 1]):
        for i in seq(0, n):
            shift2(x[i:i + 2])
    with pytest.raises(SchedulingError, match="race"):
        caller.parallelize('i')


def test_kernel_in_a_par_loop_proven_by_its_footprint(monkeypatch):
    """The issue: a scheduled kernel swapped in (``call_eqv``) for the
    algorithm inside a ``par`` loop. The re-check proves the loop
    race-free again; with the kernel's footprint, not its thousands of
    accesses (this kernel has 16 per call)."""
    import exo_hl.effects.api as EA
    big = blk16.unroll('l')

    @proc
    def caller(n: size, a: f32[16 * n], b: f32[16 * n]):
        for i in seq(0, n):
            blk16(a[16 * i:16 * i + 16], b[16 * i:16 * i + 16])
    p = caller.parallelize('i')
    asked = []
    real = EA._race_free

    def spy(proc_ir, path):
        asked.append(proc_to_str(proc_ir))
        return real(proc_ir, path)
    monkeypatch.setattr(EA, "_race_free", spy)
    r = p.call_eqv(p.find('blk16(_)'), big)
    assert "for i in par(0, n)" in str(r)
    # one proof, on the footprint of the kernel (no precise one needed)
    assert len(asked) == 1 and "_footprint(" in asked[0]


@functools.lru_cache(maxsize=None)
def _caller(stride, width, wpos, rpos):
    """A loop over calls of a callee writing ``dst[wpos]`` from
    ``dst[rpos]`` of a window ``x[stride*i : stride*i + width]``."""
    @proc
    def callee(dst: [f32][width]):
        dst[wpos] = dst[rpos] + 1.0

    @proc
    def caller(n: size, x: f32[stride * n + width]):
        for i in seq(0, n):
            callee(x[stride * i:stride * i + width])
    return caller


def test_footprint_verdict_implies_the_precise_one():
    """On random window strides, widths and accessed elements: whenever
    the footprint proves the iterations race-free, so does the callee's
    own effect (the over-approximation is sound), and the verdict of
    ``loop_is_parallel`` is the precise one."""
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(12):
        width = rng.randint(1, 2)
        stride = rng.randint(1, 2)
        wpos, rpos = rng.randrange(width), rng.randrange(width)
        p = _caller(stride, width, wpos, rpos).ir()
        path = (("body", 0), )
        loop = p.body[0]
        coarse = p.update(body=(loop.update(
            body=with_footprints(loop.body)), ))
        fast = bool(_race_free(coarse, path))
        exact = bool(_race_free(p, path))
        if fast:
            assert exact, (stride, width, wpos, rpos)
        assert bool(loop_is_parallel(p, path)) == exact
        seen[exact] += 1
    assert seen[True] and seen[False]
