"""lift_alloc(alloc, n_lifts): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import DRAM_STATIC, SchedulingError, f32, par, proc, seq, size


@proc
def tiles(n: size, x: f32[n, 4], y: f32[n, 4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            t: f32[2] @ DRAM_STATIC
            t[0] = x[i, j]
            t[1] = t[0] * 2.0
            y[i, j] = t[1]


def test_lift_alloc_one_level(equiv):
    q = tiles.lift_alloc("t : _")
    assert str(q).rstrip() == """\
def tiles(n: size, x: f32[n, 4] @ DRAM, y: f32[n, 4] @ DRAM):
    for i in seq(0, n):
        t: f32[2] @ DRAM_STATIC
        for j in seq(0, 4):
            t[0] = x[i, j]
            t[1] = t[0] * 2.0
            y[i, j] = t[1]"""
    equiv(tiles, q, [{"n": 1}, {"n": 3}])


def test_lift_alloc_two_levels_and_out_of_if(equiv):
    q = tiles.lift_alloc("t : _", n_lifts=2)
    assert str(q).splitlines()[1] == "    t: f32[2] @ DRAM_STATIC"
    equiv(tiles, q, [{"n": 2}])

    @proc
    def guarded(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            if i < 3:
                s: f32
                s = x[i]
                y[i] = s
    q = guarded.lift_alloc("s : _", n_lifts=2)
    assert str(q).rstrip() == """\
def guarded(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    s: f32 @ DRAM
    for i in seq(0, n):
        if i < 3:
            s = x[i]
            y[i] = s"""
    equiv(guarded, q, [{"n": 1}, {"n": 5}])


def test_lift_alloc_rejects_size_depending_on_iterator():
    @proc
    def tri(n: size, x: f32[n]):
        for i in seq(0, n):
            t: f32[i + 1]
            for j in seq(0, i + 1):
                t[j] = x[j]
            x[i] = t[0]
    with pytest.raises(SchedulingError, match="size depends on the iterator 'i'"):
        tri.lift_alloc("t : _")


def test_lift_alloc_rejects_parallel_loop():
    @proc
    def par_tmp(n: size, x: f32[n], y: f32[n]):
        for i in par(0, n):
            t: f32
            t = x[i]
            y[i] = t
    with pytest.raises(SchedulingError, match="parallel loop 'i'.*race"):
        par_tmp.lift_alloc("t : _")


def test_lift_alloc_rejects_too_many_levels_and_non_alloc():
    with pytest.raises(SchedulingError, match="cannot lift 3 level"):
        tiles.lift_alloc("t : _", n_lifts=3)
    with pytest.raises(SchedulingError, match="expected an allocation"):
        tiles.lift_alloc("y[_] = _")
    with pytest.raises(SchedulingError, match="n_lifts"):
        tiles.lift_alloc("t : _", n_lifts=0)


def test_cursors_follow_the_lifted_allocation_and_the_loop():
    from exo_hl import f32, proc, seq, size
    from exo_hl.core_ir.printer import stmt_to_str

    @proc
    def tmp_use(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32
            t = x[i]
            y[i] = t

    ca, cw, cl = (tmp_use.find('t : _'), tmp_use.find('y[_] = _'),
                  tmp_use.find_loop('i'))
    q = tmp_use.lift_alloc('t : _')
    text = lambda c: stmt_to_str(q.forward(c).node()).strip()
    assert text(ca) == "t: f32 @ DRAM"
    assert text(cw) == "y[i] = t"
    assert text(cl).startswith("for i in seq(0, n):")
    assert q.forward(ca).next() == q.forward(cl)


def test_lift_alloc_rejects_a_scalar_read_before_it_is_written(equiv):
    # a local scalar starts at zero in each iteration (docs/semantics.md);
    # lifted, the second iteration would add to the first one's sum
    @proc
    def zero_start(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            b: f32
            b += x[i]
            y[i] = b
    with pytest.raises(SchedulingError, match="starts at zero"):
        zero_start.lift_alloc("b")

    @proc
    def set_first(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            b: f32
            b = x[i]
            b += x[i]
            y[i] = b
    q = set_first.lift_alloc("b")
    equiv(set_first, q, [{"n": 3}])


def test_lift_alloc_scalar_overwritten_in_an_inner_loop_or_branch(equiv):
    @proc
    def inner(n: size, x: f32[n, n], y: f32[n, n]):
        for i in seq(0, n):
            b: f32
            for j in seq(0, n):
                b = x[i, j]
                y[i, j] = b
    q = inner.lift_alloc("b")
    equiv(inner, q, [{"n": 3}])

    @proc
    def one_branch(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            b: f32
            if i > 0:
                b = x[i]
            y[i] = b         # 0 when i == 0; the last x[i] if shared
    with pytest.raises(SchedulingError, match="starts at zero"):
        one_branch.lift_alloc("b")


def test_lift_alloc_scalar_set_or_read_first_by_a_call(equiv):
    # a call whose callee overwrites the scalar parameter before reading it
    # sets the scalar; one that reads it first reads the zero it starts with
    @proc
    def load(dst: f32, src: [f32][1]):
        dst = src[0]

    @proc
    def add(dst: f32, src: [f32][1]):
        dst += src[0]

    @proc
    def set_by_call(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            b: f32
            load(b, x[i:i + 1])
            b += x[i]
            y[i] = b
    equiv(set_by_call, set_by_call.lift_alloc("b"), [{"n": 3}])

    @proc
    def read_by_call(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            b: f32
            add(b, x[i:i + 1])
            y[i] = b
    with pytest.raises(SchedulingError, match="(?s)starts at zero.*add\\(b"):
        read_by_call.lift_alloc("b")
