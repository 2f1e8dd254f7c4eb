"""Exo's ``tests/test_halide_ops.py`` schedules, ported: blur1d and blur2d
with ``compute_at``, ``store_at`` and inlining, every step checked (no
unchecked step). Differences from Exo's spelling: ``compute_at`` is told the
block's width (proven equal to what ``divide_with_recompute`` computes);
``store_at`` is told each kept dimension's size and offset (proven to hold
every access); computing at the inner loop ``j`` is ``reorder`` + a second
``compute_at`` of the producer's ``j`` loop (in the tiled blur2d, one
per tile loop; ``tile`` names the loops ``io, jo, ii, ji``). The buffers
are Exo's ``i8``:
inlining ``(...) / 6.0`` is proven exact because the integer division by
a literal keeps the sum of six ``i8`` values inside ``i8``."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, i8, proc, seq, size
from exo_hl.stdlib import compute_at, store_at, tile


@proc
def blur1d_compute_root(n: size, consumer: i8[n], inp: i8[n + 6]):
    producer: i8[n + 1]
    for i in seq(0, n + 1):
        producer[i] = (inp[i] + inp[i + 1] + inp[i + 2] + inp[i + 3] +
                       inp[i + 4] + inp[i + 5]) / 6.0
    for i in seq(0, n):
        consumer[i] = (producer[i] + producer[i + 1]) / 2.0


@proc
def blur2d_compute_root(n: size, consumer: i8[n, n],
                        sin: i8[n + 1, n + 1]):
    assert n % 4 == 0
    producer: i8[n + 1, n + 1]
    for i in seq(0, n + 1):
        for j in seq(0, n + 1):
            producer[i, j] = sin[i, j]
    for i in seq(0, n):
        for j in seq(0, n):
            consumer[i, j] = (producer[i, j] + producer[i, j + 1] +
                              producer[i + 1, j] + producer[i + 1, j + 1]
                              ) / 4.0


def unroll_all(p, name):
    """Unroll every loop named ``name`` (``unroll_loop``)."""
    while True:
        try:
            c = p.find_loop(name)
        except SchedulingError:
            return p
        p = p.unroll_loop(c)


def inline_all(p, buf):
    """Exo's schedule: ``inline_assign`` the statement just before the
    consumer, once per write of ``buf``; each write is dropped as soon as
    no read of what it wrote is left, so the next ``consumer.prev()`` is
    the next write."""
    n = len(p.find(f"{buf}[_] = _", many=True))
    for _ in range(n):
        p = p.inline_assign(p.find("consumer[_] = _").prev())
    with pytest.raises(SchedulingError):
        p.find(f"{buf}[_] = _")        # every write is gone
    return p


def test_schedule_blur1d(equiv, same_text):
    p = blur1d_compute_root
    procs = []
    p = compute_at(p, p.find("producer = _"), p.find_loop("i #1"), width=2)
    procs.append(p.rename("blur1d_compute_at_store_root"))
    p = store_at(p, "producer", p.find_loop("i"), size=2, offset="i")
    procs.append(p.rename("blur1d_compute_at"))
    p = unroll_all(p, "ii")
    p = inline_all(p, "producer")
    p = p.delete_buffer("producer : _").simplify()
    procs.append(p.rename("blur1d_inline"))
    same_text(_Joined(procs), GOLDEN_1D)
    for q in procs:
        equiv(blur1d_compute_root, q, [{"n": 1}, {"n": 5}])
    # the whole i8 range, sums far outside i8 included
    rng = np.random.default_rng(3)
    inp = rng.integers(-128, 128, size=16).astype(np.int8)
    inp[:8] = [127] * 6 + [-128] * 2
    outs = []
    for q in (blur1d_compute_root, procs[-1]):
        for run in (q.interpret, q.compile()):
            out = np.zeros(10, np.int8)
            run(10, out, inp.copy())
            outs.append(out)
    for out in outs[1:]:
        np.testing.assert_array_equal(out, outs[0])


def test_schedule_blur2d(equiv, same_text):
    b = blur2d_compute_root
    procs = []
    p = compute_at(b, b.find("producer = _"), b.find_loop("i #1"), width=2)
    procs.append(p.rename("blur2d_compute_at_i_store_root"))
    pj = p.reorder("ii", "j")
    pj = compute_at(pj, pj.find_loop("j"), pj.find_loop("j #1"), width=2)
    procs.append(pj.rename("blur2d_compute_at_j_store_root"))
    procs.append(store_at(p, "producer", "i", size=2, offset="i")
                 .rename("blur2d_compute_at_i"))
    q = store_at(pj, "producer", "i", size=2, offset="i")
    procs.append(q.simplify().rename("blur2d_compute_at_j_store_at_i"))
    q = store_at(q, "producer", "j", dim=1, size=2, offset="j")
    q = unroll_all(unroll_all(q, "ji"), "ii")
    q = inline_all(q, "producer")
    q = q.delete_buffer("producer : _")
    procs.append(q.rename("blur2d_inline"))
    same_text(_Joined(procs), GOLDEN_2D)
    for r in procs:
        equiv(blur2d_compute_root, r, [{"n": 4}])


def test_unsafe_variants_are_refused():
    b = blur2d_compute_root
    p = compute_at(b, b.find("producer = _"), b.find_loop("i #1"), width=2)
    with pytest.raises(SchedulingError):      # a block of one row is short
        compute_at(b, b.find("producer = _"), b.find_loop("i #1"), width=1)
    with pytest.raises(SchedulingError):      # a row per iteration: too few
        store_at(p, "producer", "i", size=1, offset="i")
    with pytest.raises(SchedulingError):      # the window starts at row i
        store_at(p, "producer", "i", size=2, offset="i + 1")
    with pytest.raises(SchedulingError):      # each i needs rows i, i + 1
        store_at(p.reorder("ii", "j"), "producer", "j", dim=1, size=2,
                 offset="j")


def test_inlining_a_value_i8_does_not_hold_is_refused():
    @proc
    def blur1d_halves(n: size, consumer: i8[n], inp: i8[n + 6]):
        producer: i8[n + 1]
        for i in seq(0, n + 1):
            producer[i] = (inp[i] + inp[i + 1] + inp[i + 2] + inp[i + 3] +
                           inp[i + 4] + inp[i + 5]) / 2.0
        for i in seq(0, n):
            consumer[i] = (producer[i] + producer[i + 1]) / 2.0
    p = compute_at(blur1d_halves, blur1d_halves.find("producer = _"),
                   blur1d_halves.find_loop("i #1"), width=2)
    p = store_at(p, "producer", p.find_loop("i"), size=2, offset="i")
    p = unroll_all(p, "ii")
    with pytest.raises(SchedulingError, match=r"exact value.*-384, 381"):
        inline_all(p, "producer")     # a sum / 2 wraps when stored to i8


def blur2d_tiled_schedules():
    """Exo's tiled blur2d: the consumer tiled 4 x 4, the producer computed
    at each tile loop in turn (``io``, ``jo``, ``ii``, ``ji``), then stored
    at ``ji``. Exo computes at an inner loop in one call; here each level
    is one more ``compute_at`` of the producer's loop there (after a
    ``reorder`` brings it outside)."""
    b = blur2d_compute_root
    pt = tile(b, "i #1", "j #1", 4, 4, tail="perfect")
    procs = [pt.rename("blur2d_tiled")]
    p = compute_at(pt, pt.find("producer = _"), pt.find_loop("io"), width=5)
    procs.append(p.rename("blur2d_tiled_compute_at_io"))
    p = p.reorder("i", "j")
    p = compute_at(p, p.find_loop("j"), p.find_loop("jo"), width=5)
    procs.append(p.rename("blur2d_tiled_compute_at_jo"))
    p = p.reorder("j", "i")
    p = compute_at(p, p.find_loop("i"), p.find_loop("ii"), width=2)
    procs.append(p.rename("blur2d_tiled_compute_at_ii"))
    p = p.reorder("i", "j")
    p = compute_at(p, p.find_loop("j"), p.find_loop("ji"), width=2)
    procs.append(p.rename("blur2d_tiled_compute_at_ji"))
    p = store_at(p, "producer", "ji", size=2, offset="4 * io + ii")
    p = store_at(p, "producer", "ji", dim=1, size=2, offset="4 * jo + ji")
    procs.append(p.rename("blur2d_tiled_compute_at_and_store_at_ji"))
    return procs


def test_schedule_tiled_blur2d(equiv, same_text):
    procs = blur2d_tiled_schedules()
    same_text(_Joined(procs), GOLDEN_TILED)
    for r in procs:
        equiv(blur2d_compute_root, r, [{"n": 4}, {"n": 8}])


def test_tiled_compute_at_unsafe_variants_are_refused():
    pt = tile(blur2d_compute_root, "i #1", "j #1", 4, 4, tail="perfect")
    with pytest.raises(SchedulingError):      # a tile reads 5 rows, not 4
        compute_at(pt, pt.find("producer = _"), pt.find_loop("io"), width=4)

    @proc
    def mirrored(n: size, consumer: i8[n, n], sin: i8[n + 1, n + 1]):
        assert n % 4 == 0
        producer: i8[n + 1, n + 1]
        for i in seq(0, n + 1):
            for j in seq(0, n + 1):
                producer[i, j] = sin[i, j]
        for i in seq(0, n):
            for j in seq(0, n):
                consumer[i, j] = producer[i, j] + producer[n - i, j]
    mt = tile(mirrored, "i #1", "j #1", 4, 4, tail="perfect")
    with pytest.raises(SchedulingError):      # rows of other tiles are read
        compute_at(mt, mt.find("producer = _"), mt.find_loop("io"))


def test_compute_at_with_prologue(same_text):
    @proc
    def foo():
        producer: i8[11, 11]
        for y in seq(0, 11):
            for x in seq(0, 11):
                producer[y, x] = 1.0
        consumer: i8[10, 10]
        for y in seq(0, 10):
            for x in seq(0, 10):
                consumer[y, x] = (producer[y, x] + producer[y, x + 1] +
                                  producer[y + 1, x] + producer[y + 1, x + 1])
    q = compute_at(foo, foo.find("producer = _"), foo.find_loop("x #1"),
                   with_prologue=True)
    same_text(q, """
def foo():
    producer: i8[11, 11] @ DRAM
    consumer: i8[10, 10] @ DRAM
    for y in seq(0, 10):
        for yi in seq(0, 2):
            producer[y + yi, 0] = 1.0
        for x in seq(0, 10):
            for yi in seq(0, 2):
                producer[y + yi, x + 1] = 1.0
            consumer[y, x] = (producer[y, x] + producer[y, x + 1] +
                              producer[y + 1, x] + producer[y + 1, x + 1])""")


@proc
def sliding(inp: i8[11, 12], out: i8[10, 10]):
    producer: i8[11, 11]
    for y in seq(0, 11):
        for x in seq(0, 11):
            producer[y, x] = inp[y, x] * 2.0
    for y in seq(0, 10):
        for x in seq(0, 10):
            out[y, x] = (producer[y, x] + producer[y, x + 1] +
                         producer[y + 1, x] - producer[y + 1, x + 1])


def test_compute_at_with_prologue_equivalence(equiv, same_text):
    q = compute_at(sliding, "y", sliding.find_loop("x #1"),
                   with_prologue=True)
    same_text(q, """
def sliding(inp: i8[11, 12] @ DRAM, out: i8[10, 10] @ DRAM):
    producer: i8[11, 11] @ DRAM
    for y in seq(0, 10):
        for yi in seq(0, 2):
            producer[y + yi, 0] = inp[y + yi, 0] * 2.0
        for x in seq(0, 10):
            for yi in seq(0, 2):
                producer[y + yi, x + 1] = inp[y + yi, x + 1] * 2.0
            out[y, x] = (producer[y, x] + producer[y, x + 1] +
                         producer[y + 1, x] - producer[y + 1, x + 1])""")
    equiv(sliding, q, [{}])


def test_compute_at_with_prologue_unsafe_variants_are_refused():
    @proc
    def clobber(inp: i8[11, 12], out: i8[10, 10]):
        producer: i8[11, 11]
        for y in seq(0, 11):
            for x in seq(0, 11):
                producer[y, x] = inp[y, x] * 2.0
        for y in seq(0, 10):
            for x in seq(0, 10):
                out[y, x] = producer[y, x] + producer[y, x + 1]
                inp[y, x + 2] = 0.0
    # iteration x would compute column x + 1 from what x - 1 overwrote
    with pytest.raises(SchedulingError, match="cannot be fused"):
        compute_at(clobber, "y", clobber.find_loop("x #1"),
                   with_prologue=True)

    @proc
    def strided(inp: i8[11, 21], out: i8[10, 10]):
        producer: i8[11, 21]
        for y in seq(0, 11):
            for x in seq(0, 21):
                producer[y, x] = inp[y, x]
        for y in seq(0, 10):
            for x in seq(0, 10):
                out[y, x] = producer[y, 2 * x] + producer[y + 1, 2 * x + 1]
    with pytest.raises(SchedulingError, match="one new producer value"):
        compute_at(strided, "y", strided.find_loop("x #1"),
                   with_prologue=True)


class _Joined:
    """Procedures printed one after another, as Exo's golden files hold
    them."""

    def __init__(self, procs):
        self.procs = procs

    def __str__(self):
        return "\n\n".join(str(p) for p in self.procs)


GOLDEN_1D = """
def blur1d_compute_at_store_root(n: size, consumer: i8[n] @ DRAM,
                                 inp: i8[n + 6] @ DRAM):
    producer: i8[n + 1] @ DRAM
    for i in seq(0, n):
        for ii in seq(0, 2):
            producer[i + ii] = ((inp[i + ii] + inp[i + ii + 1] +
                                 inp[i + ii + 2] + inp[i + ii + 3] +
                                 inp[i + ii + 4] + inp[i + ii + 5]) / 6.0)
        consumer[i] = (producer[i] + producer[i + 1]) / 2.0

def blur1d_compute_at(n: size, consumer: i8[n] @ DRAM, inp: i8[n + 6] @ DRAM):
    for i in seq(0, n):
        producer: i8[2] @ DRAM
        for ii in seq(0, 2):
            producer[ii] = ((inp[i + ii] + inp[i + ii + 1] + inp[i + ii + 2] +
                             inp[i + ii + 3] + inp[i + ii + 4] +
                             inp[i + ii + 5]) / 6.0)
        consumer[i] = (producer[0] + producer[1]) / 2.0

def blur1d_inline(n: size, consumer: i8[n] @ DRAM, inp: i8[n + 6] @ DRAM):
    for i in seq(0, n):
        consumer[i] = (((inp[i] + inp[i + 1] + inp[i + 2] + inp[i + 3] +
                         inp[i + 4] + inp[i + 5]) / 6.0 +
                        (inp[i + 1] + inp[i + 2] + inp[i + 3] + inp[i + 4] +
                         inp[i + 5] + inp[i + 6]) / 6.0) / 2.0)"""

GOLDEN_2D = """
def blur2d_compute_at_i_store_root(n: size, consumer: i8[n, n] @ DRAM,
                                   sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    producer: i8[n + 1, n + 1] @ DRAM
    for i in seq(0, n):
        for ii in seq(0, 2):
            for j in seq(0, n + 1):
                producer[i + ii, j] = sin[i + ii, j]
        for j in seq(0, n):
            consumer[i, j] = ((producer[i, j] + producer[i, j + 1] +
                               producer[i + 1, j] + producer[i + 1, j + 1]) /
                              4.0)

def blur2d_compute_at_j_store_root(n: size, consumer: i8[n, n] @ DRAM,
                                   sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    producer: i8[n + 1, n + 1] @ DRAM
    for i in seq(0, n):
        for j in seq(0, n):
            for ji in seq(0, 2):
                for ii in seq(0, 2):
                    producer[i + ii, j + ji] = sin[i + ii, j + ji]
            consumer[i, j] = ((producer[i, j] + producer[i, j + 1] +
                               producer[i + 1, j] + producer[i + 1, j + 1]) /
                              4.0)

def blur2d_compute_at_i(n: size, consumer: i8[n, n] @ DRAM,
                        sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    for i in seq(0, n):
        producer: i8[2, n + 1] @ DRAM
        for ii in seq(0, 2):
            for j in seq(0, n + 1):
                producer[ii, j] = sin[i + ii, j]
        for j in seq(0, n):
            consumer[i, j] = ((producer[0, j] + producer[0, j + 1] +
                               producer[1, j] + producer[1, j + 1]) / 4.0)

def blur2d_compute_at_j_store_at_i(n: size, consumer: i8[n, n] @ DRAM,
                                   sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    for i in seq(0, n):
        producer: i8[2, n + 1] @ DRAM
        for j in seq(0, n):
            for ji in seq(0, 2):
                for ii in seq(0, 2):
                    producer[ii, j + ji] = sin[i + ii, j + ji]
            consumer[i, j] = ((producer[0, j] + producer[0, j + 1] +
                               producer[1, j] + producer[1, j + 1]) / 4.0)

def blur2d_inline(n: size, consumer: i8[n, n] @ DRAM,
                  sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    for i in seq(0, n):
        for j in seq(0, n):
            consumer[i, j] = ((sin[i, j] + sin[i, j + 1] + sin[i + 1, j] +
                               sin[i + 1, j + 1]) / 4.0)"""

GOLDEN_TILED = """
def blur2d_tiled(n: size, consumer: i8[n, n] @ DRAM,
                 sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    producer: i8[n + 1, n + 1] @ DRAM
    for i in seq(0, n + 1):
        for j in seq(0, n + 1):
            producer[i, j] = sin[i, j]
    for io in seq(0, n / 4):
        for jo in seq(0, n / 4):
            for ii in seq(0, 4):
                for ji in seq(0, 4):
                    consumer[4 * io + ii, 4 * jo + ji] = (
                        (producer[4 * io + ii, 4 * jo + ji] +
                         producer[4 * io + ii, 4 * jo + ji + 1] +
                         producer[4 * io + ii + 1, 4 * jo + ji] +
                         producer[4 * io + ii + 1, 4 * jo + ji + 1]) / 4.0)

def blur2d_tiled_compute_at_io(n: size, consumer: i8[n, n] @ DRAM,
                               sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    producer: i8[n + 1, n + 1] @ DRAM
    for io in seq(0, n / 4):
        for i in seq(0, 5):
            for j in seq(0, n + 1):
                producer[4 * io + i, j] = sin[4 * io + i, j]
        for jo in seq(0, n / 4):
            for ii in seq(0, 4):
                for ji in seq(0, 4):
                    consumer[4 * io + ii, 4 * jo + ji] = (
                        (producer[4 * io + ii, 4 * jo + ji] +
                         producer[4 * io + ii, 4 * jo + ji + 1] +
                         producer[4 * io + ii + 1, 4 * jo + ji] +
                         producer[4 * io + ii + 1, 4 * jo + ji + 1]) / 4.0)

def blur2d_tiled_compute_at_jo(n: size, consumer: i8[n, n] @ DRAM,
                               sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    producer: i8[n + 1, n + 1] @ DRAM
    for io in seq(0, n / 4):
        for jo in seq(0, n / 4):
            for j in seq(0, 5):
                for i in seq(0, 5):
                    producer[4 * io + i, 4 * jo + j] =
                        sin[4 * io + i, 4 * jo + j]
            for ii in seq(0, 4):
                for ji in seq(0, 4):
                    consumer[4 * io + ii, 4 * jo + ji] = (
                        (producer[4 * io + ii, 4 * jo + ji] +
                         producer[4 * io + ii, 4 * jo + ji + 1] +
                         producer[4 * io + ii + 1, 4 * jo + ji] +
                         producer[4 * io + ii + 1, 4 * jo + ji + 1]) / 4.0)

def blur2d_tiled_compute_at_ii(n: size, consumer: i8[n, n] @ DRAM,
                               sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    producer: i8[n + 1, n + 1] @ DRAM
    for io in seq(0, n / 4):
        for jo in seq(0, n / 4):
            for ii in seq(0, 4):
                for i in seq(0, 2):
                    for j in seq(0, 5):
                        producer[4 * io + ii + i, 4 * jo + j] =
                            sin[4 * io + ii + i, 4 * jo + j]
                for ji in seq(0, 4):
                    consumer[4 * io + ii, 4 * jo + ji] = (
                        (producer[4 * io + ii, 4 * jo + ji] +
                         producer[4 * io + ii, 4 * jo + ji + 1] +
                         producer[4 * io + ii + 1, 4 * jo + ji] +
                         producer[4 * io + ii + 1, 4 * jo + ji + 1]) / 4.0)

def blur2d_tiled_compute_at_ji(n: size, consumer: i8[n, n] @ DRAM,
                               sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    producer: i8[n + 1, n + 1] @ DRAM
    for io in seq(0, n / 4):
        for jo in seq(0, n / 4):
            for ii in seq(0, 4):
                for ji in seq(0, 4):
                    for j in seq(0, 2):
                        for i in seq(0, 2):
                            producer[4 * io + ii + i, 4 * jo + ji + j] =
                                sin[4 * io + ii + i, 4 * jo + ji + j]
                    consumer[4 * io + ii, 4 * jo + ji] = (
                        (producer[4 * io + ii, 4 * jo + ji] +
                         producer[4 * io + ii, 4 * jo + ji + 1] +
                         producer[4 * io + ii + 1, 4 * jo + ji] +
                         producer[4 * io + ii + 1, 4 * jo + ji + 1]) / 4.0)

def blur2d_tiled_compute_at_and_store_at_ji(n: size, consumer: i8[n, n] @ DRAM,
                                            sin: i8[n + 1, n + 1] @ DRAM):
    assert n % 4 == 0
    for io in seq(0, n / 4):
        for jo in seq(0, n / 4):
            for ii in seq(0, 4):
                for ji in seq(0, 4):
                    producer: i8[2, 2] @ DRAM
                    for j in seq(0, 2):
                        for i in seq(0, 2):
                            producer[i, j] =
                                sin[4 * io + ii + i, 4 * jo + ji + j]
                    consumer[4 * io + ii, 4 * jo + ji] = (
                        (producer[0, 0] + producer[0, 1] + producer[1, 0] +
                         producer[1, 1]) / 4.0)"""
