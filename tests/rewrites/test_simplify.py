"""simplify(): readable index arithmetic, dead-branch removal, semantics,
and cursors forwarded through it."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def messy(n: size, x: f32[n, 16], y: f32[n, 16]):
    for io in seq(0, n):
        for ii in seq(0, 16):
            x[(16 * io + ii) / 16, (ii + 16) % 16 + 0] = y[io + 0 * ii, ii * 1]
    if n + 1 > 0:
        for k in seq(0, 0):
            x[0, 0] = 1.0
        x[0, 0] = 2.0
    if 3 < 2:
        x[0, 0] = 3.0
    else:
        y[0, 0] = 4.0 + 0.0


@proc
def ragged(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if i + 1 - 1 < n - 1 + 1:
            y[(i + 2) / 2 * 2 - 2 + i % 2] = x[1 * i] * 1.0


def test_simplify_prints_hand_written_code():
    p = messy.simplify()
    assert str(p) == """\
def messy(n: size, x: f32[n, 16] @ DRAM, y: f32[n, 16] @ DRAM):
    for io in seq(0, n):
        for ii in seq(0, 16):
            x[io, ii] = y[io, ii]
    x[0, 0] = 2.0
    y[0, 0] = 4.0 + 0.0"""
    assert p.parent() is messy and [o for o, _ in p.derivation()][-1] == \
        "simplify"


def test_simplify_keeps_unknowable_guards():
    p = ragged.simplify()
    # i < n can only be decided from the loop bound symbolically: kept;
    # (i + 2) / 2 * 2 - 2 + i % 2 == 2 * (i / 2) + i % 2 == i, exactly
    assert str(p) == """\
def ragged(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        if i < n:
            y[i] = x[i] * 1.0"""


def test_simplify_is_idempotent():
    p = messy.simplify()
    assert str(p.simplify()) == str(p)


def test_simplify_is_equivalent(equiv):
    equiv(messy, messy.simplify(), [{"n": 1}, {"n": 3}])
    equiv(ragged, ragged.simplify(), [{"n": 1}, {"n": 6}, {"n": 7}])


def test_simplify_forwards_cursors():
    kept = messy.find("x[_] = 2.0")
    dead_loop = messy.find_loop("k")
    dead_if = messy.find("if 3 < 2: _")
    orelse_stmt = dead_if.orelse()[0]
    inner = messy.find("x[_] = y[_]")
    p = messy.simplify()
    assert p.forward(kept).path() == (("body", 1), )
    assert p.forward(kept).node() == kept.node()
    assert p.forward(orelse_stmt).path() == (("body", 2), )
    assert p.forward(inner).path() == inner.path()
    assert p.forward(messy.find_loop("io")) == p.find_loop("io")
    for gone in (dead_loop, dead_if, messy.find("if n + 1 > 0: _")):
        with pytest.raises(SchedulingError, match="no longer denotes"):
            p.forward(gone)
    # a block keeps its statements that survive (the removed ifs drop out)
    assert p.forward(messy.body()).range() == (0, 1)


@proc
def all_dead(x: f32[4]):
    for i in seq(0, 4):
        if i > 10:
            x[i] = 1.0


def test_simplify_empty_body_becomes_pass():
    p = all_dead.simplify()
    assert str(p) == """\
def all_dead(x: f32[4] @ DRAM):
    for i in seq(0, 4):
        pass"""


def test_simplified_procs_round_trip(assert_roundtrip):
    assert_roundtrip(messy.simplify())
    assert_roundtrip(ragged.simplify())
    assert_roundtrip(all_dead.simplify())


@proc
def tiles(n: size, x: f32[n, 8], y: f32[n, 8]):
    assert n % 4 == 0
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            for j in seq(0, 8):
                y[(4 * io + ii) / 4 * 4 + (4 * io + ii) % 4, j] = \
                    x[io * 4 + ii, (j + 8) % 8]


def test_simplify_tiled_indices(equiv):
    p = tiles.simplify()
    assert str(p) == """\
def tiles(n: size, x: f32[n, 8] @ DRAM, y: f32[n, 8] @ DRAM):
    assert n % 4 == 0
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            for j in seq(0, 8):
                y[4 * io + ii, j] = x[4 * io + ii, j]"""
    equiv(tiles, p, [{"n": 4}, {"n": 12}])
