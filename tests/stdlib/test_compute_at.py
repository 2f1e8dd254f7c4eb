"""compute_at: divide_with_recompute + fuse_loop, each checked."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import compute_at


@proc
def blur1d(n: size, x: f32[n + 2], y: f32[n]):
    assert n % 4 == 0
    t: f32[n + 2]
    for i in seq(0, n + 2):
        t[i] = x[i] * 2.0
    for j in seq(0, n):
        y[j] = t[j] + t[j + 1] + t[j + 2]


def test_compute_at_recomputes_per_tile(equiv, same_text):
    p = blur1d.split('j', 4, 'jo', 'ji', tail='perfect')
    q = compute_at(p, 'i', 'jo', width=6)
    same_text(q, """
def blur1d(n: size, x: f32[n + 2] @ DRAM, y: f32[n] @ DRAM):
    assert n % 4 == 0
    t: f32[n + 2] @ DRAM
    for jo in seq(0, n / 4):
        for ii in seq(0, 6):
            t[4 * jo + ii] = x[4 * jo + ii] * 2.0
        for ji in seq(0, 4):
            y[4 * jo + ji] = (t[4 * jo + ji] + t[4 * jo + ji + 1] +
                              t[4 * jo + ji + 2])""")
    equiv(blur1d, q, [{"n": 4}, {"n": 12}])


def test_compute_at_rejects_a_wrong_width():
    p = blur1d.split('j', 4, 'jo', 'ji', tail='perfect')
    with pytest.raises(SchedulingError):
        compute_at(p, 'i', 'jo', width=5)


@proc
def accum(n: size, x: f32[n + 2], y: f32[n]):
    assert n % 4 == 0
    t: f32[n + 2]
    for i in seq(0, n + 2):
        t[i] += x[i]
    for j in seq(0, n):
        y[j] = t[j] + t[j + 2]


def test_compute_at_rejects_a_producer_that_is_not_idempotent():
    # t[i] += x[i] recomputed in overlapping blocks would add twice
    p = accum.split('j', 4, 'jo', 'ji', tail='perfect')
    with pytest.raises(SchedulingError):
        compute_at(p, 'i', 'jo')


def test_compute_at_unsplit_consumer_computes_blocks_of_one(equiv,
                                                           same_text):
    # Exo's spelling: the producer's assignment, a consumer loop whose body
    # is not a tile loop: each iteration computes the 3 values it reads
    q = compute_at(blur1d, 't[_] = _', 'j', width=3)
    same_text(q, """
def blur1d(n: size, x: f32[n + 2] @ DRAM, y: f32[n] @ DRAM):
    assert n % 4 == 0
    t: f32[n + 2] @ DRAM
    for j in seq(0, n):
        for ii in seq(0, 3):
            t[j + ii] = x[j + ii] * 2.0
        y[j] = t[j] + t[j + 1] + t[j + 2]""")
    equiv(blur1d, q, [{"n": 4}, {"n": 8}])
    with pytest.raises(SchedulingError):
        compute_at(blur1d, 'i', 'j', width=2)


@proc
def _scale_row(n: size, v: [f32][n]):
    for i in seq(0, n):
        v[i] = v[i] * 3.0


@proc
def call_producer(N: size, x: f32[N, 4], y: f32[N]):
    for i in seq(0, N):
        _scale_row(4, x[i, 0:4])
    for i in seq(0, N):
        y[i] = x[i, 0]


@proc
def _acc_row(n: size, src: [f32][n], dst: [f32][n]):
    for i in seq(0, n):
        dst[i] += src[i]


@proc
def window_consumer(M: size, N: size, A: f32[M, N], B: f32[M, N]):
    for i in seq(0, M):
        for j in seq(0, N):
            B[i, j] = A[i, j] * 2.0
    for i in seq(0, M):
        _acc_row(N, B[i, 0:N], A[i, 0:N])


def test_compute_at_with_a_call_producer_or_a_window_consumer(equiv):
    """A producer starting with a call raised AttributeError, a consumer
    reading the buffer through a window IndexError (looking for the read
    stride); now the first is a SchedulingError and the second is done."""
    with pytest.raises(SchedulingError):
        compute_at(call_producer, call_producer.find_loop('i'),
                   call_producer.find_loop('i #1'))
    p = compute_at(window_consumer, window_consumer.find_loop('i'),
                   window_consumer.find_loop('i #1'))
    equiv(window_consumer, p, [{"M": 1, "N": 1}, {"M": 3, "N": 5}])
