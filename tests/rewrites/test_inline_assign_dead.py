"""inline_assign drops the assignment once no read of what it wrote is left
(as Exo's does), also while other elements of the buffer are still read.

Exo's test_halide_ops blur1d schedule unrolls the producer loop, calls
``inline_assign`` twice on ``consumer.prev()`` and deletes the buffer; the
second call must find the first producer assignment, not the one already
inlined.
"""
from __future__ import annotations

from exo_hl import f32, i8, proc, seq, size


@proc
def blur1d(n: size, consumer: i8[n], inp: i8[n + 6]):
    for i in seq(0, n):
        producer: i8[2]
        for ii in seq(0, 2):
            producer[ii] = (inp[i + ii] + inp[i + ii + 1] + inp[i + ii + 2]
                            + inp[i + ii + 3] + inp[i + ii + 4]
                            + inp[i + ii + 5]) / 6.0
        consumer[i] = (producer[0] + producer[1]) / 2.0


def test_blur1d_inline_schedule(equiv):
    p = blur1d.unroll_loop("ii")
    q = p.inline_assign(p.find("consumer[_] = _").prev())
    # producer[1] = ... is gone although producer[0] is still read
    assert str(q).count("producer[") == 2
    assert "producer[1]" not in str(q)
    equiv(blur1d, q, [{"n": 1}, {"n": 5}])
    q = q.inline_assign(q.find("consumer[_] = _").prev())
    q = q.delete_buffer("producer: _").simplify()
    assert str(q).rstrip() == """\
def blur1d(n: size, consumer: i8[n] @ DRAM, inp: i8[n + 6] @ DRAM):
    for i in seq(0, n):
        consumer[i] = (((inp[i] + inp[i + 1] + inp[i + 2] + inp[i + 3] +
                         inp[i + 4] + inp[i + 5]) / 6.0 +
                        (inp[i + 1] + inp[i + 2] + inp[i + 3] + inp[i + 4] +
                         inp[i + 5] + inp[i + 6]) / 6.0) / 2.0)"""
    equiv(blur1d, q, [{"n": 1}, {"n": 5}])


def test_write_kept_while_another_iteration_reads_it(equiv):
    @proc
    def carried(n: size, x: f32[n], y: f32[n]):
        t: f32[n + 1]
        t[0] = 0.0
        for i in seq(0, n):
            t[i + 1] = x[i] * 2.0
            y[i] = t[i + 1] + t[i]     # t[i] is the previous iteration's
    q = carried.inline_assign("t[i + 1] = _")
    assert str(q).rstrip().splitlines()[-3:] == [
        "    for i in seq(0, n):",
        "        t[i + 1] = x[i] * 2.0",
        "        y[i] = x[i] * 2.0 + t[i]"]
    equiv(carried, q, [{"n": 1}, {"n": 4}])


def test_write_kept_while_a_window_or_scalar_read_may_see_it(equiv):
    @proc
    def windowed(x: f32[2], y: f32[2]):
        t: f32[2]
        t[0] = x[0]
        t[1] = x[1]
        y[0] = t[1]
        w = t[0:2]
        y[1] = w[0]
    q = windowed.inline_assign("t[1] = _")
    assert "t[1] = x[1]" in str(q)
    equiv(windowed, q, [{}])

    @proc
    def scalar(x: f32[2], y: f32[2]):
        s: f32
        s = x[0]
        y[0] = s
        x[0] = 1.0
        y[1] = s
    q = scalar.inline_assign("s = _")
    assert "s = x[0]" in str(q)
    equiv(scalar, q, [{}])
