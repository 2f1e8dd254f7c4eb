"""set_memory: change an allocation's memory; calls are re-checked."""
from __future__ import annotations

import pytest

from exo_hl import DRAM, DRAM_STATIC, SchedulingError, f32, proc, seq, size


@proc
def want_static(x: [f32][4] @ DRAM_STATIC):
    for i in seq(0, 4):
        x[i] = 2.0


@proc
def want_dram(x: [f32][4] @ DRAM):
    for i in seq(0, 4):
        x[i] += 1.0


@proc
def uses_dram(n: size, y: f32[n, 4]):
    for j in seq(0, n):
        t: f32[4] @ DRAM
        for i in seq(0, 4):
            t[i] = y[j, i]
        want_dram(t[0:4])
        for i in seq(0, 4):
            y[j, i] = t[i]


@proc
def uses_static(y: f32[4]):
    t: f32[4] @ DRAM_STATIC
    want_static(t)
    for i in seq(0, 4):
        y[i] = t[i]


def test_set_memory_prints_and_equiv(equiv, assert_roundtrip):
    p = uses_dram.set_memory("t", DRAM_STATIC)
    assert str(p) == """\
def uses_dram(n: size, y: f32[n, 4] @ DRAM):
    for j in seq(0, n):
        t: f32[4] @ DRAM_STATIC
        for i in seq(0, 4):
            t[i] = y[j, i]
        want_dram(t[0:4])
        for i in seq(0, 4):
            y[j, i] = t[i]"""
    assert_roundtrip(p)
    assert "float t[4];" in p.c_code_str()
    equiv(uses_dram, p, [{"n": 1}, {"n": 3}])


def test_set_memory_rejects_incompatible_callee():
    # DRAM is a base of DRAM_STATIC, not a subclass: want_static refuses it
    with pytest.raises(SchedulingError, match="want_static") as e:
        uses_static.set_memory("t", DRAM)
    assert "DRAM_STATIC" in str(e.value) and "uses_static" in str(e.value)


def test_set_memory_bad_arguments():
    with pytest.raises(SchedulingError, match="Memory subclass"):
        uses_static.set_memory("t", "DRAM")
    with pytest.raises(SchedulingError, match="argument"):
        uses_static.set_memory("y", DRAM_STATIC)


def test_memory_that_cannot_hold_the_buffer_is_refused_now():
    """DRAM_STATIC needs constant sizes: refused at scheduling time, not
    later by compile()."""
    from exo_hl import DRAM_STATIC, SchedulingError, f32, proc, seq, size

    @proc
    def sym_alloc(N: size, x: f32[N]):
        t: f32[N]
        for i in seq(0, N):
            t[i] = x[i]
        for i in seq(0, N):
            x[i] = t[i]

    with pytest.raises(SchedulingError, match="DRAM_STATIC cannot hold"):
        sym_alloc.set_memory('t', DRAM_STATIC)
