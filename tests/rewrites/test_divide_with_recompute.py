"""divide_with_recompute: overlapping blocks whose overlap is recomputed,
and the fusion of such a producer into its consumer (proven: the
overlapping iterations store equal values)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size


@proc
def blur(n: size, inp: f32[4 * n + 2, 3], bx: f32[4 * n + 2, 3],
         out: f32[4 * n, 3]):
    for y in seq(0, 4 * n + 2):
        for x in seq(0, 3):
            bx[y, x] = inp[y, x] * 2.0 + 1.0
    for y in seq(0, 4 * n):
        for x in seq(0, 3):
            out[y, x] = bx[y, x] + bx[y + 1, x] + bx[y + 2, x]


@proc
def accumulate(n: size, x: f32[n], s: f32[1]):
    for i in seq(0, n):
        s[0] += x[i]


@proc
def chain(n: size, x: f32[n + 1]):
    for i in seq(0, n):
        x[i + 1] = x[i] * 2.0


@proc
def offset(n: size, x: f32[n + 3], y: f32[n + 3]):
    assert n >= 6
    for i in seq(3, n + 3):
        y[i] = x[i] + 1.0


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = blur.divide_with_recompute("y", "n", 4, ["yo", "yi"])
    assert str(p).splitlines()[2:6] == [
        "    for yo in seq(0, n):",
        "        for yi in seq(0, 6):",
        "            for x in seq(0, 3):",
        "                bx[4 * yo + yi, x] = inp[4 * yo + yi, x] * 2.0 + 1.0",
    ]
    assert_roundtrip(p)
    equiv(blur, p, [{"n": 1}, {"n": 3}])


def test_nonzero_lo_and_symbolic_outer_hi(equiv):
    p = offset.divide_with_recompute("i", 2, 3, ["io", "ii"])
    assert "for ii in seq(0, n - 3):" in str(p)
    equiv(offset, p, [{"n": 6}, {"n": 9}])


def test_fuse_recomputed_producer_into_consumer(equiv, assert_roundtrip):
    p = blur.divide_with_recompute("y", "n", 4, ["yo", "yi"])
    p = p.split("y", 4, "yo", "yi", tail="perfect")
    p = p.fuse_loop("yo", "yo #1")
    assert str(p).count("for yo in") == 1
    assert_roundtrip(p)
    equiv(blur, p, [{"n": 1}, {"n": 2}, {"n": 4}])


def test_fusion_without_recompute_still_rejected():
    # blocks of 4 rows without the overlap: consumer block yo reads rows
    # 4*yo+4, 4*yo+5 that only producer block yo+1 writes, later
    p = blur.cut_loop("y", "4 * n").split("y", 4, "yo", "yi", tail="perfect")
    p = p.split("y #1", 4, "yo", "yi", tail="perfect")
    with pytest.raises(SchedulingError, match="not be written in the "
                       "reading iteration|directly follow"):
        p.fuse_loop("yo", "yo #1")
    q = blur.split("y", 4, "yo", "yi", tail="guard")
    q = q.split("y", 4, "yo", "yi", tail="perfect")
    with pytest.raises(SchedulingError, match="bounds|cannot be fused"):
        q.fuse_loop("yo", "yo #1")


def test_reject_not_idempotent():
    with pytest.raises(SchedulingError, match="not idempotent"):
        accumulate.divide_with_recompute("i", 1, 1, ["io", "ii"])


def test_reject_iterations_that_do_not_commute():
    with pytest.raises(SchedulingError, match="do not commute"):
        chain.divide_with_recompute("i", 1, 1, ["io", "ii"])


def test_reject_blocks_not_covering():
    # outer_hi * stride may exceed the trip count
    with pytest.raises(SchedulingError, match="cover"):
        blur.divide_with_recompute("y", "n + 1", 4, ["yo", "yi"])
    # outer_hi may be 0 (no block at all)
    with pytest.raises(SchedulingError, match="cover"):
        blur.divide_with_recompute("y", "n - 1", 4, ["yo", "yi"])


@pytest.mark.parametrize("args", [(0, ["a", "b"]), (2, ["a"]),
                                  (2, ["a", "a"]), (1.5, ["a", "b"])])
def test_reject_bad_arguments(args):
    stride, names = args
    with pytest.raises(SchedulingError):
        blur.divide_with_recompute("y", "n", stride, names)


@config
class DCfg:
    n: size


@proc
def cfg_hi(x: f32[8], y: f32[8]):
    DCfg.n = 8
    for i in seq(0, DCfg.n):
        y[i % 8] = x[i % 8]
        DCfg.n = 4


def test_reject_bounds_read_state_the_body_writes():
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg_hi.divide_with_recompute("i", 2, 4, ["io", "ii"])
