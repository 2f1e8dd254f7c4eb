"""Issue 34 item 10: what a new user meets first.

- a failed loop search lists the loops there are;
- ``set_memory`` names the location once and speaks plain English;
- a race counterexample shows the two iterations of the loop that race;
- ``split(tail='guard'/'cut')`` uses a divisibility precondition: no guard,
  no rounded-up trip count, no remainder loop (printed, equivalent, and the
  guard kept when divisibility is not provable).
"""
from __future__ import annotations

import re

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.hw_libs.avx2 import AVX2
from exo_hl.hw_libs.avx512 import AVX512


@proc
def nest(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[i] += x[i]
    for i in seq(0, n):
        y[i] = y[i] * 2.0


def test_no_loop_matches_lists_the_loops():
    with pytest.raises(SchedulingError) as e:
        nest.find_loop('k')
    msg = str(e.value)
    assert "no loop matches the pattern 'k'" in msg
    assert "(its loops: 'i', 'j', 'i #1')" in msg
    with pytest.raises(SchedulingError) as e:     # through a rewrite too
        nest.split('k', 4, 'ko', 'ki')
    assert "its loops: 'i', 'j', 'i #1'" in str(e.value)

    @proc
    def flat(x: f32[2]):
        x[0] = 1.0
    with pytest.raises(SchedulingError, match=r"\(it has no loops\)"):
        flat.find_loop('i')


@proc
def staged(n: size, x: f32[n], y: f32[n]):
    t: f32[n]
    for i in seq(0, n):
        t[i] = x[i]
    for i in seq(0, n):
        y[i] = t[i]


@pytest.mark.parametrize("mem, lanes", [(AVX2, 8), (AVX512, 16)])
def test_set_memory_refusal_names_the_place_once(mem, lanes):
    with pytest.raises(SchedulingError) as e:
        staged.set_memory('t', mem)
    first = str(e.value).splitlines()[0]
    # "file:line: in procedure ...: set_memory: AVX2 cannot hold this
    # buffer: file:line: a AVX2 buffer ..." named the line twice
    assert len(re.findall(r"\.py:\d+", first)) == 1, first
    assert f" a {mem.__name__}" not in first
    assert (f"{mem.__name__} buffers of float need a last dimension of "
            f"{lanes} (one register), 't' has shape [n]") in first


@proc
def strided_sum(n: size, x: f32[n], y: f32[4]):
    assert n % 4 == 0
    for j in seq(0, n):
        y[j % 4] += x[j]


def test_race_counterexample_shows_the_racing_iterations():
    """The counterexample for 'jo' was over 'ji' only (the locations do not
    mention jo): it now shows two different iterations of jo."""
    p = strided_sum.split('j', 4, 'jo', 'ji', tail='perfect')
    with pytest.raises(SchedulingError) as e:
        p.parallelize('jo')
    msg = str(e.value)
    assert "iterations of 'jo' race" in msg
    ex = re.search(r"\(e\.g\. ([^)]*)\)", msg).group(1)
    vals = dict(kv.split("=") for kv in ex.split(", "))
    assert "jo" in vals and "jo'" in vals and vals["jo"] != vals["jo'"]
    assert vals["ji"] == vals["ji'"]       # the same y[ji] in both


@proc
def scale16(n: size, x: f32[n]):
    assert n % 16 == 0
    for i in seq(0, n):
        x[i] = x[i] * 2.0


@proc
def scale_any(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 2.0


def test_guard_split_uses_the_divisibility_precondition(equiv):
    p = scale16.split('i', 16, 'io', 'ii')               # tail='guard'
    text = str(p)
    assert "for io in seq(0, n / 16):" in text
    assert "+ 15" not in text and "if " not in text
    equiv(scale16, p, [{"n": 16}, {"n": 48}])
    q = scale16.split('i', 16, 'io', 'ii', tail='cut')
    assert str(q) == text                                # no remainder
    equiv(scale16, q, [{"n": 32}])
    # a factor the precondition does not cover keeps its guard
    r = str(scale16.split('i', 32, 'io', 'ii'))
    assert "(n + 31) / 32" in r and "if 32 * io + ii < n:" in r
    # without the precondition: the guard, the remainder loop
    g = scale_any.split('i', 16, 'io', 'ii')
    assert "(n + 15) / 16" in str(g) and "if 16 * io + ii < n:" in str(g)
    equiv(scale_any, g, [{"n": 17}, {"n": 5}])
    c = scale_any.split('i', 16, 'io', 'ii', tail='cut')
    assert "for ii in seq(0, n % 16):" in str(c)


def test_vectorize_mask_of_a_multiple_of_the_width(equiv):
    """vectorize(tail='mask') expected the split's guard; a trip count that
    is a multiple of the width (a literal, or now a precondition) has none
    and needs no mask."""
    from exo_hl.hw_libs.avx2 import INSTRS
    from exo_hl.stdlib import vectorize

    @proc
    def axpy(n: size, a: f32[1], x: f32[n], y: f32[n]):
        assert n % 8 == 0
        for i in seq(0, n):
            y[i] += a[0] * x[i]

    @proc
    def axpy16(a: f32[1], x: f32[16], y: f32[16]):
        for i in seq(0, 16):
            y[i] += a[0] * x[i]

    for q, sizes in ((axpy, [{"n": 8}, {"n": 24}]), (axpy16, [{}])):
        p = vectorize(q, 'i', 8, AVX2, INSTRS, tail='mask')
        text = str(p)
        assert "mm256_fmadd_bcst_ps" in text and "mask" not in text
        equiv(q, p, sizes)
