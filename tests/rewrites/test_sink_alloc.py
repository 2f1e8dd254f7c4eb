"""sink_alloc(alloc): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def rows(n: size, x: f32[n, 4], y: f32[n, 4]):
    t: f32[4]
    for i in seq(0, n):
        for j in seq(0, 4):
            t[j] = x[i, j]
        for j in seq(0, 4):
            y[i, j] = t[j] * 2.0


def test_sink_alloc_into_loop(equiv):
    q = rows.sink_alloc("t : _")
    assert str(q).rstrip() == """\
def rows(n: size, x: f32[n, 4] @ DRAM, y: f32[n, 4] @ DRAM):
    for i in seq(0, n):
        t: f32[4] @ DRAM
        for j in seq(0, 4):
            t[j] = x[i, j]
        for j in seq(0, 4):
            y[i, j] = t[j] * 2.0"""
    equiv(rows, q, [{"n": 1}, {"n": 3}])
    # the inverse of lift_alloc
    assert str(q.lift_alloc("t : _")) == str(rows)


def test_sink_alloc_scalar_and_pointwise_defs(equiv):
    @proc
    def pw(n: size, x: f32[n], y: f32[n]):
        s: f32
        t: f32[2]
        for i in seq(0, n):
            s = x[i]
            t[1] = s * 2.0
            t[1] += x[i]
            y[i] = t[1] + s
    q = pw.sink_alloc("t : _").sink_alloc("s : _")
    assert str(q).splitlines()[1:4] == [
        "    for i in seq(0, n):", "        s: f32 @ DRAM",
        "        t: f32[2] @ DRAM"]
    equiv(pw, q, [{"n": 4}])


def test_sink_alloc_into_both_branches(equiv):
    @proc
    def br(n: size, x: f32[n], y: f32[n]):
        u: f32
        if n > 2:
            u = x[0]
            y[0] = u
        else:
            u = x[0] * 2.0
            y[0] = u
    q = br.sink_alloc("u : _")
    assert str(q).rstrip() == """\
def br(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    if n > 2:
        u: f32 @ DRAM
        u = x[0]
        y[0] = u
    else:
        u: f32 @ DRAM
        u = x[0] * 2.0
        y[0] = u"""
    equiv(br, q, [{"n": 1}, {"n": 4}])


def test_sink_alloc_rejects_values_carried_across_iterations():
    @proc
    def carry(n: size, x: f32[n], y: f32[n]):
        acc: f32
        acc = 0.0
        for i in seq(0, n):
            acc += x[i]
            y[i] = acc
    with pytest.raises(SchedulingError, match="directly followed"):
        carry.sink_alloc("acc : _")

    @proc
    def carry2(n: size, x: f32[n], y: f32[n]):
        t: f32[2]
        for i in seq(0, n):
            if i == 0:
                t[0] = 0.0
            t[0] += x[i]
            y[i] = t[0]
    with pytest.raises(SchedulingError, match="earlier iteration"):
        carry2.sink_alloc("t : _")

    @proc
    def shifted(n: size, x: f32[n], y: f32[n]):
        t: f32[2]
        for i in seq(0, n):
            t[i % 2] = x[i]
            y[i] = t[(i + 1) % 2]   # the previous iteration's value
    with pytest.raises(SchedulingError, match="earlier iteration"):
        shifted.sink_alloc("t : _")


def test_sink_alloc_rejects_use_after_scope():
    @proc
    def after(n: size, x: f32[n], y: f32[n]):
        t: f32
        if n > 1:
            t = x[1]
        else:
            t = 1.0
        y[0] = t
    with pytest.raises(SchedulingError, match="used after the if"):
        after.sink_alloc("t : _")


def test_sink_alloc_rejects_non_alloc():
    with pytest.raises(SchedulingError, match="expected an allocation"):
        rows.sink_alloc("y[_] = _")


@proc
def tiles(n: size, x: f32[n + 2], y: f32[n]):
    assert n % 4 == 0
    t: f32[n + 2]
    for jo in seq(0, n / 4):
        for ii in seq(0, 6):
            t[4 * jo + ii] = x[4 * jo + ii] * 2.0
        for ji in seq(0, 4):
            y[4 * jo + ji] = t[4 * jo + ji] + t[4 * jo + ji + 2]


def test_sink_alloc_reads_inside_a_window_the_iteration_wrote(equiv):
    # per-iteration definedness: each tile writes t[4jo : 4jo + 6] and reads
    # only there, though no iteration writes the whole buffer
    q = tiles.sink_alloc("t : _")
    assert str(q).splitlines()[2:5] == [
        "    for jo in seq(0, n / 4):", "        t: f32[n + 2] @ DRAM",
        "        for ii in seq(0, 6):"]
    equiv(tiles, q, [{"n": 4}, {"n": 12}])


def test_sink_alloc_window_with_a_point_dimension(equiv):
    @proc
    def rows2(n: size, w: size, x: f32[n, w], y: f32[n, w]):
        t: f32[2, w]
        for r in seq(0, n):
            for c in seq(0, w):
                t[1, c] = x[r, c]
            for c in seq(0, w):
                y[r, c] = t[1, c] * 2.0
    q = rows2.sink_alloc("t : _")
    assert str(q).splitlines()[1:3] == [
        "    for r in seq(0, n):", "        t: f32[2, w] @ DRAM"]
    equiv(rows2, q, [{"n": 3, "w": 2}])

    @proc
    def other_row(n: size, w: size, x: f32[n, w], y: f32[n, w]):
        t: f32[2, w]
        for r in seq(0, n):
            for c in seq(0, w):
                t[1, c] = x[r, c]
            for c in seq(0, w):
                y[r, c] = t[0, c] * 2.0   # row 0: never written here
    with pytest.raises(SchedulingError, match="earlier iteration"):
        other_row.sink_alloc("t : _")


def test_sink_alloc_rejects_a_read_past_the_window():
    @proc
    def past(n: size, x: f32[n + 3], y: f32[n]):
        assert n % 4 == 0
        t: f32[n + 3]
        for jo in seq(0, n / 4):
            for ii in seq(0, 6):
                t[4 * jo + ii] = x[4 * jo + ii]
            for ji in seq(0, 4):
                y[4 * jo + ji] = t[4 * jo + ji + 3]   # ji = 3 reads t[4jo+6]
    with pytest.raises(SchedulingError, match="earlier iteration"):
        past.sink_alloc("t : _")


def test_sink_alloc_rejects_a_window_whose_loop_may_not_run():
    @proc
    def maybe(n: size, m: size, x: f32[n, 4], y: f32[n, 4]):
        t: f32[4]
        for i in seq(0, n):
            for z in seq(0, m):     # a size: at least 1
                for c in seq(0, 4):
                    t[c] = x[i, c]
            for c in seq(0, 4):
                y[i, c] = t[c]
    maybe.sink_alloc("t : _")

    @proc
    def empty(n: size, m: size, x: f32[n, 4], y: f32[n, 4]):
        t: f32[4]
        for i in seq(0, n):
            for z in seq(1, m):     # m may be 1: no value written
                for c in seq(0, 4):
                    t[c] = x[i, c]
            for c in seq(0, 4):
                y[i, c] = t[c]
    with pytest.raises(SchedulingError, match="earlier iteration"):
        empty.sink_alloc("t : _")


def test_sink_alloc_rejects_a_window_written_under_a_guard():
    @proc
    def guarded(n: size, x: f32[n, 4], y: f32[n, 4]):
        t: f32[4]
        for i in seq(0, n):
            for c in seq(0, 4):
                if i > 0:
                    t[c] = x[i, c]
            for c in seq(0, 4):
                y[i, c] = t[c]
    with pytest.raises(SchedulingError, match="earlier iteration"):
        guarded.sink_alloc("t : _")


def test_sink_alloc_rejects_a_read_inside_the_writing_nest():
    @proc
    def prefix(n: size, x: f32[n, 4], y: f32[n, 4]):
        t: f32[5]
        for i in seq(0, n):
            for c in seq(0, 4):
                t[c + 1] = t[c] + x[i, c]    # t[0]: the previous row's
            for c in seq(0, 4):
                y[i, c] = t[c + 1]
    with pytest.raises(SchedulingError, match="earlier iteration"):
        prefix.sink_alloc("t : _")


def test_sink_alloc_read_after_a_nested_writer_in_the_same_iteration(equiv):
    @proc
    def nested(n: size, x: f32[n + 1, n + 1], y: f32[n, n]):
        t: f32[n + 1, n + 1]
        for i in seq(0, n):
            for j in seq(0, n):
                for ji in seq(0, 2):
                    for ii in seq(0, 2):
                        t[i + ii, j + ji] = x[i + ii, j + ji]
                y[i, j] = t[i, j] + t[i + 1, j + 1]
    q = nested.sink_alloc("t : _")
    assert str(q).splitlines()[1:3] == [
        "    for i in seq(0, n):", "        t: f32[n + 1, n + 1] @ DRAM"]
    equiv(nested, q, [{"n": 1}, {"n": 3}])

    @proc
    def read_first(n: size, x: f32[n + 1, n + 1], y: f32[n, n]):
        t: f32[n + 1, n + 1]
        for i in seq(0, n):
            for j in seq(0, n):
                y[i, j] = t[i, j]           # before this iteration writes it
                for ji in seq(0, 2):
                    for ii in seq(0, 2):
                        t[i + ii, j + ji] = x[i + ii, j + ji]
    with pytest.raises(SchedulingError, match="earlier iteration"):
        read_first.sink_alloc("t : _")

    @proc
    def other_j(n: size, x: f32[n + 1, n + 2], y: f32[n, n]):
        t: f32[n + 1, n + 2]
        for i in seq(0, n):
            for j in seq(0, n):
                for ji in seq(0, 2):
                    for ii in seq(0, 2):
                        t[i + ii, j + ji] = x[i + ii, j + ji]
                y[i, j] = t[i, j + 2]       # written by the next j, if any
    with pytest.raises(SchedulingError, match="earlier iteration"):
        other_j.sink_alloc("t : _")


def test_sink_alloc_rejects_a_window_whose_bounds_change_in_the_iteration():
    from exo_hl import config, index

    @config
    class SaCfg:
        lo: index

    @proc
    def moving(n: size, x: f32[8], y: f32[n]):
        t: f32[8]
        for i in seq(0, n):
            SaCfg.lo = 4
            for c in seq(SaCfg.lo, 8):
                t[c] = x[c]
            SaCfg.lo = 0
            # the nest wrote t[4:8]; read with the new bound, the window
            # would look like t[0:8], but t[0] is a value of an earlier
            # iteration (here: uninitialised)
            y[i] = t[SaCfg.lo]
    with pytest.raises(SchedulingError, match="earlier iteration"):
        moving.sink_alloc("t : _")
