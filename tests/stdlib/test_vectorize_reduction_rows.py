"""stdlib.vectorize_reduction_rows: a matvec's rows in blocks, each row its
own registers of partial sums, the operand that does not vary with the
rows (``x``) loaded once per step for the whole block, the rows the blocks
leave vectorized one at a time. Printed result, equivalence on random
inputs (interpreted and compiled, ``m`` a multiple of the block or not),
and a rejected case per condition."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.hw_libs import avx2, avx512
from exo_hl.stdlib import vectorize_reduction_rows


@proc
def matvec16(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    assert n % 16 == 0
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


@proc
def matvec_xa(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    assert n % 8 == 0
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += x[j] * A[i, j]


def _check(p, m, n, seed):
    """``p`` interpreted and compiled against numpy: small integers (every
    order of the sum is exact: equal) and random floats (within rounding)."""
    rng = np.random.default_rng(seed)
    fast = p.compile()
    for exact in (True, False):
        if exact:
            A = rng.integers(-4, 5, (m, n)).astype(np.float32)
            x = rng.integers(-4, 5, n).astype(np.float32)
        else:
            A = rng.standard_normal((m, n)).astype(np.float32)
            x = rng.standard_normal(n).astype(np.float32)
        y0 = rng.integers(-4, 5, m).astype(np.float32)
        for run in (p.interpret, fast):
            y = y0.copy()
            run(m=m, n=n, A=A, x=x, y=y)
            if exact:
                assert np.array_equal(y, y0 + A @ x), (run, m)
            else:
                assert np.allclose(y, y0 + A @ x, rtol=1e-5, atol=1e-4)


def test_rows_printed_and_equal_to_numpy_avx512():
    p = vectorize_reduction_rows(matvec16, 'i', 4, 'j', 16, avx512.AVX512,
                                 avx512.INSTRS)
    text = str(p)
    block, rest = text.split("for ii in seq(0, m % 4):")
    assert "for io in seq(0, m / 4):" in block
    for k in range(4):                      # one register of sums per row
        assert f"acc_{k}: f32[16] @ AVX512" in block, text
        assert f"mm512_setzero_ps(acc_{k}[0:16])" in block, text
    # x loaded once per step of jo, shared by the four rows' FMAs
    assert block.count("mm512_loadu_ps(x_vec[0:16], x[16 * jo:16 * jo + "
                       "16])") == 1, text
    assert block.count("x_vec[0:16])") == 4, text       # 4 FMAs read it
    assert "mm512_loadu_ps(A_vec_1[0:16], A[4 * io + 1, 16 * jo:16 * jo " \
           "+ 16])" in block, text
    assert "mm512_fmadd_ps(acc_3[0:16], A_vec_3[0:16], x_vec[0:16])" \
        in block, text
    assert "y[4 * io + 3] += acc_lanes_3[ji]" in block, text
    # the rest rows: vectorize_reduction, one row at a time
    assert "mm512_fmadd_ps(acc[0:16], A_vec_[0:16], x_vec_[0:16])" in rest
    for m in (1, 4, 7):                     # all rest, no rest, both
        _check(p, m, 48, m)


@proc
def matvec_m4(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    assert n % 8 == 0 and m % 4 == 0
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


@proc
def batched(b: size, m: size, n: size, A: f32[b, m, n], x: f32[b, n],
            y: f32[b, m]):
    assert n % 8 == 0
    for k in seq(0, b):
        y[k, 0] = 0.0
        for i in seq(0, m):
            for j in seq(0, n):
                y[k, i] += A[k, i, j] * x[k, j]


@proc
def two_nests(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m],
              z: f32[m]):
    assert n % 8 == 0
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]
    for i in seq(0, m):
        for j in seq(0, n):
            z[i] += A[i, j] * x[j]


@proc
def in_else(k: size, m: size, n: size, A: f32[m, n], x: f32[n],
            y: f32[m]):
    assert n % 8 == 0
    if k > 2:
        for i in seq(0, m):
            y[i] = 0.0
    else:
        for i in seq(0, m):
            for j in seq(0, n):
                y[i] += A[i, j] * x[j]


def test_rows_avx2_operand_order_rest_and_nesting():
    # x read first, a block of three rows
    p = vectorize_reduction_rows(matvec_xa, 'i', 3, 'j', 8, avx2.AVX2,
                                 avx2.INSTRS)
    text = str(p)
    assert "for ii in seq(0, m % 3):" in text
    assert "mm256_fmadd_ps(acc_2[0:8], x_vec[0:8], A_vec_2[0:8])" in text
    for m in (2, 6, 8):
        _check(p, m, 24, 10 + m)
    # m a proven multiple of the block: no rest loop
    p = vectorize_reduction_rows(matvec_m4, 'i', 4, 'j', 8, avx2.AVX2,
                                 avx2.INSTRS)
    text = str(p)
    assert "seq(0, m % 4)" not in text and "acc_3: f32[8] @ AVX2" in text, text
    _check(p, 8, 16, 3)
    # the rows loop inside another loop
    p = vectorize_reduction_rows(batched, 'i', 2, 'j', 8, avx2.AVX2,
                                 avx2.INSTRS)
    assert "y[k, 2 * io + 1] += acc_lanes_1[ji]" in str(p), str(p)
    rng = np.random.default_rng(5)
    A = rng.integers(-3, 4, (2, 5, 16)).astype(np.float32)
    x = rng.integers(-3, 4, (2, 16)).astype(np.float32)
    want = np.ones((2, 5), np.float32)
    want[:, 0] = 0
    want += np.einsum('kij,kj->ki', A, x)
    for run in (p.interpret, p.compile()):
        y = np.ones((2, 5), np.float32)
        run(b=2, m=5, n=16, A=A, x=x, y=y)
        assert np.array_equal(y, want)
    # the second of two nests, by pattern ('j' is looked up in 'i #1') or
    # by cursors: the first nest is left as it was
    p = vectorize_reduction_rows(two_nests, 'i #1', 2, 'j', 8, avx2.AVX2,
                                 avx2.INSTRS)
    q = vectorize_reduction_rows(two_nests, two_nests.find_loop('i #1'), 2,
                                 two_nests.find_loop('j #1'), 8, avx2.AVX2,
                                 avx2.INSTRS)
    assert str(p) == str(q)
    first = "\n".join(str(two_nests).splitlines()[:6])
    assert str(p).startswith(first) and "z[2 * io + 1] +=" in str(p), str(p)
    A = rng.integers(-3, 4, (5, 16)).astype(np.float32)
    x = rng.integers(-3, 4, 16).astype(np.float32)
    for run in (p.interpret, p.compile()):
        y, z = np.ones(5, np.float32), np.ones(5, np.float32)
        run(m=5, n=16, A=A, x=x, y=y, z=z)
        assert np.array_equal(y, 1 + A @ x) and np.array_equal(z, y)
    # in an else branch: its rest rows are vectorized too (the rest loop
    # was looked for among the then branch's statements)
    p = vectorize_reduction_rows(in_else, 'i #1', 4, 'j', 8, avx2.AVX2,
                                 avx2.INSTRS)
    rest = str(p).split("for ii in seq(0, m % 4):")[1]
    assert "mm256_fmadd_ps(acc[0:8]" in rest, str(p)
    A = rng.integers(-3, 4, (6, 16)).astype(np.float32)
    for run in (p.interpret, p.compile()):
        y = np.ones(6, np.float32)
        run(k=1, m=6, n=16, A=A, x=x, y=y)
        assert np.array_equal(y, 1 + A @ x)


@proc
def chained(m: size, n: size, A: f32[m, n], y: f32[m + 1]):
    assert n % 8 == 0
    for i in seq(0, m):
        for j in seq(0, n):
            y[i + 1] += A[i, j] * y[i]


@proc
def any_n(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


@proc
def reset_first(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    assert n % 8 == 0
    for i in seq(0, m):
        y[i] = 0.0
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


@proc
def not_a_sum(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m, n]):
    assert n % 8 == 0
    for i in seq(0, m):
        for j in seq(0, n):
            y[i, j] += A[i, j] * x[j]


def _rows(p, *args):
    i, rows, j = args or ('i', 4, 'j')
    return vectorize_reduction_rows(p, i, rows, j, 8, avx2.AVX2,
                                    avx2.INSTRS)


def test_rows_rejections():
    # a row reads what an earlier row of its block writes: the blocks
    # would read every row's input before any row's sum is added
    with pytest.raises(SchedulingError, match="a row reads what an earlier "
                       "row of the block writes") as e:
        _rows(chained)
    assert "fission_after" in str(e.value)        # the refused step, too
    # j's trip count not a proven multiple of the width
    with pytest.raises(SchedulingError, match="divisible by 8"):
        _rows(any_n)
    # the rows loop holds more than the reduction loop
    with pytest.raises(SchedulingError, match="must be exactly the loop"):
        _rows(reset_first)
    # the inner loop is not a reduction into one location
    with pytest.raises(SchedulingError, match="one accumulation"):
        _rows(not_a_sum)
    # the loops swapped (j does not contain i)
    with pytest.raises(SchedulingError, match="no loop 'i' inside loop 'j'"):
        _rows(matvec16, 'j', 4, 'i')
    for bad in (0, -1, 2.0, True):
        with pytest.raises(SchedulingError, match="positive int"):
            _rows(matvec16, 'i', bad, 'j')
    with pytest.raises(SchedulingError):
        _rows(matvec16, 3, 4, 'j')
    with pytest.raises(SchedulingError, match="is not a loop in 'i'"):
        _rows(matvec16, 'i', 4, 'y[_] += _')
    with pytest.raises(SchedulingError, match="no loop 'k' inside loop 'i'"):
        _rows(matvec16, 'i', 4, 'k')
    # a cursor on a loop that is not the rows loop's body
    with pytest.raises(SchedulingError, match="must be exactly the loop"):
        _rows(matvec16, 'i', 4, matvec16.find_loop('i'))
