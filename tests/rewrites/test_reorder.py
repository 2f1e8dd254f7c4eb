"""reorder: loop interchange, accepted when iterations commute."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
         C: f32[M, N]):
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def wave(n: size, A: f32[n + 1, n + 1]):
    for i in seq(1, n + 1):
        for j in seq(0, n):
            A[i, j] = A[i - 1, j + 1]


@proc
def down(n: size, A: f32[n + 1, n]):
    for i in seq(1, n + 1):
        for j in seq(0, n):
            A[i, j] = A[i - 1, j] + 1.0


@proc
def total(n: size, m: size, x: f32[n, m], s: f32):
    for i in seq(0, n):
        for j in seq(0, m):
            s += x[i, j]


@proc
def tri(n: size, x: f32[n, n]):
    for i in seq(0, n):
        for j in seq(i, n):
            x[i, j] = 1.0


@proc
def not_nested(n: size, x: f32[n, n], y: f32[n]):
    for i in seq(0, n):
        y[i] = 0.0
        for j in seq(0, n):
            x[i, j] = 1.0


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = gemm.reorder("j", "k")
    assert str(p) == """\
def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
         C: f32[M, N] @ DRAM):
    for i in seq(0, M):
        for k in seq(0, K):
            for j in seq(0, N):
                C[i, j] += A[i, k] * B[k, j]"""
    assert_roundtrip(p)
    q = p.reorder("i")
    equiv(gemm, q, [{"M": 2, "N": 3, "K": 1}, {"M": 1, "N": 1, "K": 4}])


def test_default_inner_and_cursor():
    p = gemm.reorder(gemm.find_loop("i"))
    assert str(p).splitlines()[2:4] == ["    for j in seq(0, N):",
                                        "        for i in seq(0, M):"]


def test_carried_dependence_still_legal(equiv):
    equiv(down, down.reorder("i"), [{"n": 1}, {"n": 3}])


def test_reduction_reorders(equiv):
    equiv(total, total.reorder("i"), [{"n": 2, "m": 3}])


def test_reject_wavefront():
    with pytest.raises(SchedulingError) as e:
        wave.reorder("i")
    msg = str(e.value)
    assert "do not commute" in msg and "wave" in msg and "for i in" in msg


def test_reject_dependent_bounds():
    with pytest.raises(SchedulingError, match="depend on the outer"):
        tri.reorder("i")


def test_reject_not_perfectly_nested():
    with pytest.raises(SchedulingError, match="not perfectly nested"):
        not_nested.reorder("i")


def test_reject_wrong_inner():
    with pytest.raises(SchedulingError, match="directly nested"):
        gemm.reorder("i", "k")


def test_cursors_follow_their_loops():
    i, j = gemm.find_loop("i"), gemm.find_loop("j")
    k = gemm.find_loop("k")
    p = gemm.reorder(i)
    assert p.forward(i).path() == (("body", 0), ("body", 0))
    assert p.forward(j).path() == (("body", 0), )
    assert p.forward(k).path() == (("body", 0), ("body", 0), ("body", 0))
    # the forwarded cursor can drive the next rewrite
    q = p.reorder(p.forward(i))
    assert str(q).splitlines()[2:5] == str(p.reorder("i")).splitlines()[2:5]
