"""repeat: apply a step until it is refused."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import repeat


@proc
def nest(n: size, x: f32[n, n, n], y: f32[n, n, n]):
    for i in seq(0, n):
        for j in seq(0, n):
            for k in seq(0, n):
                t: f32
                t = x[i, j, k] * 2.0
                y[i, j, k] = t


def test_repeat_lifts_as_far_as_it_goes(equiv, same_text):
    p = repeat(lambda p: p.lift_alloc('t : _'))(nest)
    same_text(p, """
def nest(n: size, x: f32[n, n, n] @ DRAM, y: f32[n, n, n] @ DRAM):
    t: f32 @ DRAM
    for i in seq(0, n):
        for j in seq(0, n):
            for k in seq(0, n):
                t = x[i, j, k] * 2.0
                y[i, j, k] = t""")
    equiv(nest, p, [{"n": 1}, {"n": 3}])


def test_repeat_passes_arguments_and_returns_the_input_when_refused():
    step = repeat(lambda p, pat: p.lift_alloc(pat))
    assert step(nest, 'x') is nest   # an argument cannot be lifted


def test_repeat_never_swallows_other_errors():
    def bad(p):
        raise ValueError("not a scheduling error")
    try:
        repeat(bad)(nest)
    except ValueError:
        pass
    else:
        raise AssertionError("ValueError must propagate")


@proc
def carried(n: size, a: f32[n + 1, n + 1]):
    for i in seq(0, n):
        for j in seq(0, n):
            a[i + 1, j] = a[i, j + 1]


def test_repeat_does_not_hide_an_unsafe_step():
    # the interchange is unsafe: refused at once, the input comes back
    assert repeat(lambda p: p.reorder('i', 'j'))(carried) is carried
    with pytest.raises(SchedulingError):
        carried.reorder('i', 'j')
