"""split: printed results, equivalence on tails, and rejected requests."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def add1(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] + 1.0


@proc
def add1_div4(n: size, x: f32[n], y: f32[n]):
    assert n % 4 == 0
    for i in seq(0, n):
        y[i] = x[i] + 1.0


@proc
def tri(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        for j in seq(i, n):
            y[i] += x[j]


@proc
def const10(x: f32[10], y: f32[10]):
    for i in seq(2, 10):
        y[i] = x[i] + 1.0


def test_guard_prints():
    p = add1.split("i", 4, "io", "ii")
    assert str(p) == """\
def add1(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for io in seq(0, (n + 3) / 4):
        for ii in seq(0, 4):
            if 4 * io + ii < n:
                y[4 * io + ii] = x[4 * io + ii] + 1.0"""


def test_cut_prints():
    p = add1.split("i", 4, "io", "ii", tail="cut")
    assert str(p) == """\
def add1(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            y[4 * io + ii] = x[4 * io + ii] + 1.0
    for ii in seq(0, n % 4):
        y[ii + 4 * (n / 4)] = x[ii + 4 * (n / 4)] + 1.0"""


def test_perfect_prints():
    p = add1_div4.split("i", 4, "io", "ii", tail="perfect")
    assert str(p) == """\
def add1_div4(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 4 == 0
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            y[4 * io + ii] = x[4 * io + ii] + 1.0"""


def test_constant_bounds_with_offset(equiv):
    # 8 iterations from 2: a literal multiple of 4 needs no guard
    p = const10.split("i", 4, "io", "ii")
    assert str(p) == """\
def const10(x: f32[10] @ DRAM, y: f32[10] @ DRAM):
    for io in seq(0, 2):
        for ii in seq(0, 4):
            y[4 * io + ii + 2] = x[4 * io + ii + 2] + 1.0"""
    q = const10.split("i", 3, "io", "ii", tail="cut")
    assert str(q) == """\
def const10(x: f32[10] @ DRAM, y: f32[10] @ DRAM):
    for io in seq(0, 2):
        for ii in seq(0, 3):
            y[3 * io + ii + 2] = x[3 * io + ii + 2] + 1.0
    for ii in seq(0, 2):
        y[ii + 8] = x[ii + 8] + 1.0"""
    equiv(const10, p, [{}])
    equiv(const10, q, [{}])


@pytest.mark.parametrize("tail", ["guard", "cut"])
def test_equiv_tails(tail, equiv):
    sizes = [{"n": n} for n in (1, 3, 4, 7, 9)]
    equiv(add1, add1.split("i", 4, "io", "ii", tail=tail), sizes)
    # a loop whose lower bound is the outer iterator
    t = tri.split("j", 3, "jo", "ji", tail=tail)
    equiv(tri, t, sizes)


def test_equiv_perfect(equiv):
    p = add1_div4.split("i", 4, "io", "ii", tail="perfect")
    equiv(add1_div4, p, [{"n": 4}, {"n": 12}])


def test_split_twice_and_forward(equiv):
    p = add1.split("i", 4, "io", "ii")
    q = p.split("io", 2, "ioo", "ioi", tail="cut")
    equiv(add1, q, [{"n": n} for n in (1, 5, 8, 13)])


def test_perfect_requires_divisibility():
    with pytest.raises(SchedulingError) as e:
        add1.split("i", 4, "io", "ii", tail="perfect")
    msg = str(e.value)
    assert "perfect split requires" in msg and "divisible" in msg
    assert "add1" in msg
    # divisible by 4 does not make it divisible by 8
    with pytest.raises(SchedulingError, match="divisible"):
        add1_div4.split("i", 8, "io", "ii", tail="perfect")
    # ... but by 2 it is
    add1_div4.split("i", 2, "io", "ii", tail="perfect")


@pytest.mark.parametrize("factor", [0, -2, 2.5, True, "4"])
def test_bad_factor(factor):
    with pytest.raises(SchedulingError, match="factor"):
        add1.split("i", factor, "io", "ii")


@pytest.mark.parametrize("names", [("for", "ii"), ("io", "1x"), ("io", "io"),
                                   ("n", "ii"), ("io", "x"), (3, "ii")])
def test_bad_names(names):
    with pytest.raises(SchedulingError):
        add1.split("i", 4, *names)


def test_bad_tail():
    with pytest.raises(SchedulingError, match="tail"):
        add1.split("i", 4, "io", "ii", tail="round")


def test_name_clash_inside_body():
    with pytest.raises(SchedulingError, match="already used"):
        tri.split("i", 4, "j", "ii")


@proc
def between(m: size, n: size, x: f32[n]):
    assert m <= n
    for i in seq(m, n):
        x[i] = 1.0


@proc
def maybe_negative(m: size, n: size, x: f32[n + m]):
    for i in seq(m, n):
        x[i] = 1.0


def test_cut_negative_trip_count(equiv):
    # n - m may be negative: the remainder would run (n - m) % 4 > 0 times
    with pytest.raises(SchedulingError, match="cannot prove m <= n"):
        maybe_negative.split("i", 4, "io", "ii", tail="cut")
    g = maybe_negative.split("i", 4, "io", "ii", tail="guard")
    equiv(maybe_negative, g, [{"m": 5, "n": 2}, {"m": 1, "n": 6}])
    c = between.split("i", 4, "io", "ii", tail="cut")
    equiv(between, c, [{"m": 1, "n": 1}, {"m": 2, "n": 9}])


@config
class LCfg:
    n: size


@proc
def cfg_bound(x: f32[4]):
    for i in seq(0, LCfg.n):
        x[0] = x[0] + 1.0
        LCfg.n = 2


def test_reject_bounds_read_config_body_writes():
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg_bound.split("i", 2, "io", "ii")


def test_cursors_forward_into_split_loop():
    c = add1.find("y[_] = _")
    loop = add1.find_loop("i")
    for tail, depth in (("guard", 4), ("cut", 3)):
        p = add1.split(loop, 4, "io", "ii", tail=tail)
        assert p.forward(c).path() == (("body", 0), ) * depth
        assert p.forward(loop).path() == (("body", 0), )
