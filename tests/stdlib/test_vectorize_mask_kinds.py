"""vectorize(tail='mask') and the bodies beyond lane-wise work (issue 34).

The masked last block stages every operand past the end of its buffer, so
it handles lane-wise bodies only. For a literal, a loop-invariant operand,
a stencil or a reduction it refuses, naming the kind it met and what to do;
what it proposes works (checked against numpy on a trip count that is not a
multiple of the width, interpreted and compiled). With the trip count
proven a multiple of the width there is no masked block, and the kinds are
vectorized as with tail='perfect'.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.hw_libs import avx2, avx512
from exo_hl.stdlib import vectorize, vectorize_reduction

LIB = (16, avx512.AVX512, avx512.INSTRS)


@proc
def scale(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 0.5


@proc
def axpy(n: size, a: f32, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += a * x[i]


@proc
def blur3(n: size, x: f32[n + 2], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] + x[i + 1] + x[i + 2]


@proc
def dot(n: size, x: f32[n], y: f32[n], r: f32[1]):
    for i in seq(0, n):
        r[0] += x[i] * y[i]


def _inputs(n):
    rng = np.random.default_rng(n)
    return {k: rng.integers(-4, 5, n + 2).astype(np.float32)
            for k in ("x", "y")}


def _scale_ref(x, y, n):
    return x[:n] * np.float32(0.5)


def _axpy_ref(x, y, n):
    return y[:n] + np.float32(1.5) * x[:n]


def _blur_ref(x, y, n):
    return x[:n] + x[1:n + 1] + x[2:n + 2]


CASES = [
    (scale, "a literal constant", "0.5 in 'y[i] = x[i] * 0.5'", _scale_ref),
    (axpy, "a loop-invariant operand", "a in 'y[i] += a * x[i]'", _axpy_ref),
    (blur3, "a stencil", "x is read at 3 offsets: x[i + 1], x[i + 2], x[i]",
     _blur_ref),
]


def _args(p, n, v):
    args = {"n": n, "x": v["x"][:n + 2 if p is blur3 else n].copy(),
            "y": v["y"][:n].copy()}
    if p is axpy:
        args["a"] = 1.5
    return args


@pytest.mark.parametrize("p,kind,detail,ref", CASES,
                         ids=[c[0].name() for c in CASES])
def test_mask_refuses_the_kind_and_cut_does_it(p, kind, detail, ref):
    with pytest.raises(SchedulingError) as e:
        vectorize(p, 'i', *LIB, tail='mask')
    msg = str(e.value)
    assert f"vectorize(tail='mask'): the body of loop 'i' is {kind} " \
           f"({detail}" in msg, msg
    assert f"use tail='cut' (the vector loop handles {kind}" in msg, msg
    # what it proposes works
    q = vectorize(p, 'i', *LIB, tail='cut')
    assert "mm512_" in str(q)
    n = 37
    v = _inputs(n)
    want = ref(v["x"], v["y"], n)
    for run in (q.interpret, q.compile()):
        args = _args(p, n, v)
        run(**args)
        np.testing.assert_array_equal(args["y"], want)


@proc
def dot16(n: size, x: f32[n], y: f32[n], r: f32[1]):
    assert n % 16 == 0
    for i in seq(0, n):
        r[0] += x[i] * y[i]


def test_mask_refuses_a_reduction_and_says_vectorize_reduction():
    with pytest.raises(SchedulingError) as e:
        vectorize(dot, 'i', *LIB, tail='mask')
    msg = str(e.value)
    assert ("the body of loop 'i' is a reduction ('r[0] += x[i] * y[i]' "
            "accumulates into a location that does not vary with 'i')") in msg
    assert "use vectorize_reduction(p, 'i', 16, ...)" in msg
    # what it proposes works, once the trip count is a multiple of 16
    q = vectorize_reduction(dot16, 'i', *LIB)
    assert "mm512_reduce_add_ps" in str(q) or "mm512_fmadd_ps" in str(q)
    x = np.arange(48, dtype=np.float32) % 7 - 3
    y = np.arange(48, dtype=np.float32) % 5 - 2
    for run in (q.interpret, q.compile()):
        r = np.zeros(1, np.float32)
        run(n=48, x=x, y=y, r=r)
        assert r[0] == np.dot(x, y)


@proc
def scale16(n: size, x: f32[n], y: f32[n]):
    assert n % 16 == 0
    for i in seq(0, n):
        y[i] = x[i] * 0.5


def test_mask_with_no_partial_block_vectorizes_a_literal():
    """No masked block to build: the literal is broadcast as with
    tail='perfect'."""
    q = vectorize(scale16, 'i', *LIB, tail='mask')
    text = str(q)
    assert "mm512_set1_scalar_ps(c_bcst[0:16], c)" in text, text
    assert "if " not in text, text
    x = np.arange(32, dtype=np.float32) - 7
    for run in (q.interpret, q.compile()):
        y = np.zeros(32, np.float32)
        run(n=32, x=x, y=y)
        np.testing.assert_array_equal(y, x * np.float32(0.5))


@proc
def square_in_longer(n: size, x: f32[16], y: f32[16]):
    assert n <= 16
    for i in seq(0, n):
        y[i] = x[i] * x[i]


@pytest.mark.parametrize("width,mem,instrs", [
    (8, avx2.AVX2, avx2.INSTRS), LIB])
def test_mask_in_buffers_longer_than_the_loop(width, mem, instrs):
    # the last block's windows lie inside the buffers (16 elements, n <=
    # 16), so no copy is guarded: the lanes come from the loop's own guard
    # (n - 8 * io); it was refused, 'found no guarded copy in the last
    # block (nothing to vectorize)' (audit 15b)
    p = vectorize(square_in_longer, "i", width, mem, instrs, tail="mask")
    text = str(p)
    assert f"prefix_mul_ps(n - {width} * io" in text, text
    for n in (1, 7, 8, 9, 15, 16):
        x = np.arange(16, dtype=np.float32) - 5.5
        for run in (p.interpret, p.compile()):
            y = np.full(16, -3.0, np.float32)
            run(n=n, x=x, y=y)
            want = np.full(16, -3.0, np.float32)
            want[:n] = x[:n] * x[:n]
            assert np.array_equal(y, want), (n, y)
