"""Every stdlib function, pointed at the second of two identical nests (by a
``'#k'`` pattern or by a cursor), transforms the second and leaves the first
unchanged (issue 33, item 6).

The stdlib re-found loops and buffers by bare name after its first step:
``vectorize`` and ``parallel_outer`` given ``'i #1'`` transformed the first
``i`` loop, ``compute_at`` into a second pipeline's loop fused the first
pipeline's loops, ``store_at`` given the second ``r`` loop sank into the
first. Each nest below is the body of an ``if k > 1`` of its own, so both
print alike (names are per scope) and the check is textual: statement 0 of
the result prints as before, statement 1 does not, and the result computes
what the procedure does. ``replace_all`` and ``repeat`` take no target
(``replace_all`` is covered through ``vectorize``'s region and its own
tests below)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, i8, proc, seq, size
from exo_hl.hw_libs.avx2 import AVX2, INSTRS
from exo_hl.stdlib import (compute_at, compute_root, inline_producer, pack,
                           parallel_outer, store_at, tile, unroll_and_jam,
                           vectorize)


@proc
def two_2d(k: size, M: size, N: size, x: f32[M, N], y: f32[M, N]):
    assert M % 4 == 0 and N % 4 == 0
    if k > 1:
        for i in seq(0, M):
            for j in seq(0, N):
                y[i, j] = x[i, j] * 2.0
    if k > 1:
        for i in seq(0, M):
            for j in seq(0, N):
                y[i, j] = x[i, j] * 2.0


@proc
def two_add(k: size, n: size, x: f32[n], y: f32[n], z: f32[n]):
    assert n % 8 == 0
    if k > 1:
        for i in seq(0, n):
            z[i] = x[i] + y[i]
    if k > 1:
        for i in seq(0, n):
            z[i] = x[i] + y[i]


@proc
def two_add_any(k: size, n: size, x: f32[n], y: f32[n], z: f32[n]):
    if k > 1:
        for i in seq(0, n):
            z[i] = x[i] + y[i]
    if k > 1:
        for i in seq(0, n):
            z[i] = x[i] + y[i]


@proc
def two_colsum(k: size, M: size, N: size, A: f32[M, N], s: f32[N]):
    if k > 1:
        for i in seq(0, M):
            for j in seq(0, N):
                s[j] += A[i, j]
    if k > 1:
        for i in seq(0, M):
            for j in seq(0, N):
                s[j] += A[i, j]


@proc
def two_pipelines(k: size, n: size, x: f32[n + 1], y: f32[n]):
    if k > 1:
        t: f32[n + 1]
        for i in seq(0, n + 1):
            t[i] = x[i] * 2.0
        for j in seq(0, n):
            y[j] = t[j] + t[j + 1]
    if k > 1:
        t: f32[n + 1]
        for i in seq(0, n + 1):
            t[i] = x[i] * 2.0
        for j in seq(0, n):
            y[j] = t[j] + t[j + 1]


@proc
def two_sliding(k: size, inp: i8[11, 12], out: i8[10, 10]):
    if k > 1:
        producer: i8[11, 11]
        for y in seq(0, 11):
            for x in seq(0, 11):
                producer[y, x] = inp[y, x] * 2.0
        for y in seq(0, 10):
            for x in seq(0, 10):
                out[y, x] = (producer[y, x] + producer[y, x + 1] +
                             producer[y + 1, x] - producer[y + 1, x + 1])
    if k > 1:
        producer: i8[11, 11]
        for y in seq(0, 11):
            for x in seq(0, 11):
                producer[y, x] = inp[y, x] * 2.0
        for y in seq(0, 10):
            for x in seq(0, 10):
                out[y, x] = (producer[y, x] + producer[y, x + 1] +
                             producer[y + 1, x] - producer[y + 1, x + 1])


@proc
def two_stored(k: size, n: size, x: f32[n, 2], y: f32[n]):
    if k > 1:
        t: f32[4]
        for r in seq(0, n):
            t[0] = x[r, 0]
            t[1] = x[r, 1]
            y[r] = t[0] + t[1]
    if k > 1:
        t: f32[4]
        for r in seq(0, n):
            t[0] = x[r, 0]
            t[1] = x[r, 1]
            y[r] = t[0] + t[1]


@proc
def two_fused(k: size, n: size, x: f32[n], y: f32[n]):
    if k > 1:
        t: f32[n]
        for i in seq(0, n):
            t[i] = x[i] * 2.0
            y[i] = t[i] + 1.0
    if k > 1:
        t: f32[n]
        for i in seq(0, n):
            t[i] = x[i] * 2.0
            y[i] = t[i] + 1.0


@proc
def two_gemm(k: size, M: size, K: size, A: f32[M, K], B: f32[K, 16],
             C: f32[M, 16]):
    if k > 1:
        for i in seq(0, M):
            for j in seq(0, 16):
                for kk in seq(0, K):
                    C[i, j] += A[i, kk] * B[kk, j]
    if k > 1:
        for i in seq(0, M):
            for j in seq(0, 16):
                for kk in seq(0, K):
                    C[i, j] += A[i, kk] * B[kk, j]


S2 = [{"k": 2, "M": 4, "N": 8}, {"k": 1, "M": 8, "N": 4}]
SV = [{"k": 2, "n": 16}, {"k": 1, "n": 8}]
SA = [{"k": 2, "n": 13}, {"k": 2, "n": 3}]
SP = [{"k": 2, "n": 5}, {"k": 1, "n": 2}]

# (name, procedure, by pattern, by cursor, sizes)
CASES = [
    ("tile-perfect", two_2d,
     lambda p: tile(p, "i #1", "j #1", 2, 4, tail="perfect"),
     lambda p: tile(p, p.find_loop("i #1"), p.find_loop("j #1"), 2, 4,
                    tail="perfect"), S2),
    ("tile-guard", two_2d,
     lambda p: tile(p, "i #1", "j #1", 3, 3, tail="guard"),
     lambda p: tile(p, p.find_loop("i #1"), p.find_loop("j #1"), 3, 3,
                    tail="guard"), S2),
    ("tile-cut", two_2d,
     lambda p: tile(p, "i #1", "j #1", 3, 3, tail="cut"),
     lambda p: tile(p, p.find_loop("i #1"), p.find_loop("j #1"), 3, 3,
                    tail="cut"), S2),
    ("vectorize-perfect", two_add,
     lambda p: vectorize(p, "i #1", 8, AVX2, INSTRS),
     lambda p: vectorize(p, p.find_loop("i #1"), 8, AVX2, INSTRS), SV),
    ("vectorize-cut", two_add_any,
     lambda p: vectorize(p, "i #1", 8, AVX2, INSTRS, tail="cut"),
     lambda p: vectorize(p, p.find_loop("i #1"), 8, AVX2, INSTRS,
                         tail="cut"), SA),
    ("vectorize-mask", two_add_any,
     lambda p: vectorize(p, "i #1", 8, AVX2, INSTRS, tail="mask"),
     lambda p: vectorize(p, p.find_loop("i #1"), 8, AVX2, INSTRS,
                         tail="mask"), SA),
    ("parallel_outer", two_colsum,
     lambda p: parallel_outer(p, "j #1"),
     lambda p: parallel_outer(p, p.find_loop("j #1")),
     [{"k": 2, "M": 3, "N": 4}]),
    ("unroll_and_jam", two_2d,
     lambda p: unroll_and_jam(p, "i #1", 2),
     lambda p: unroll_and_jam(p, p.find_loop("i #1"), 2), S2),
    ("compute_at", two_pipelines,
     lambda p: compute_at(p, "i #1", "j #1", width=2),
     lambda p: compute_at(p, p.find("t[_] = _ #1"), p.find_loop("j #1"),
                          width=2), SP),
    ("compute_at-prologue", two_sliding,
     lambda p: compute_at(p, "y #2", "x #3", with_prologue=True),
     lambda p: compute_at(p, p.find("producer[_] = _ #1"),
                          p.find_loop("x #3"), with_prologue=True),
     [{"k": 2}]),
    ("store_at", two_stored,
     lambda p: store_at(p, "t", "r #1"),
     lambda p: store_at(p, p.find("t : _ #1"), p.find_loop("r #1")), SP),
    ("store_at-resize", two_stored,
     lambda p: store_at(p, "t : _ #1", None, size=2),
     lambda p: store_at(p, p.find("t : _ #1"), None, size=2), SP),
    ("compute_root", two_fused,
     lambda p: compute_root(p, "t[_] = _ #1"),
     lambda p: compute_root(p, p.find("t[_] = _ #1")), SP),
    ("inline_producer", two_pipelines,
     lambda p: inline_producer(p, "i #1"),
     lambda p: inline_producer(p, p.find_loop("i #1")), SP),
    ("pack-row", two_gemm,
     lambda p: pack(p, "B[0:K, 0:16]", "i #1", "row"),
     lambda p: pack(p, "B[0:K, 0:16]", p.find_loop("i #1"), "row"),
     [{"k": 2, "M": 3, "K": 5}]),
    ("pack-transposed", two_gemm,
     lambda p: pack(p, "B[0:K, 0:16]", "i #1", "transposed"),
     lambda p: pack(p, "B[0:K, 0:16]", p.find_loop("i #1"), "transposed"),
     [{"k": 2, "M": 3, "K": 5}]),
]


@pytest.mark.parametrize("how", ["pattern", "cursor"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_transforms_the_second_nest_only(case, how, equiv):
    name, p, by_pattern, by_cursor, sizes = case
    q = (by_pattern if how == "pattern" else by_cursor)(p)
    body = list(q.body())
    assert len(body) == 2, str(q)
    assert body[0].text() == p.body()[0].text(), str(q)
    assert body[1].text() != p.body()[1].text(), str(q)
    equiv(p, q, sizes)
