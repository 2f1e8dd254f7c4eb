"""vectorize beyond element-wise loops over whole buffers: literals and
loop-invariant scalars broadcast into registers, stencils (one register per
access), and what it says about a reduction; the ``hoist`` and
``bind_const`` helpers it uses."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, f32, f64, proc, seq, size
from exo_hl.hw_libs import avx2, avx512
from exo_hl.stdlib import bind_const, hoist, vectorize


def _run_all(p, **args):
    """``p`` interpreted and compiled on copies of ``args``: both results."""
    outs = []
    for run in (p.interpret, p.compile()):
        a = {k: (v.copy() if isinstance(v, np.ndarray) else v)
             for k, v in args.items()}
        run(**a)
        outs.append(a)
    return outs


@proc
def scale(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 0.5


@pytest.mark.parametrize("lib,width", [(avx2, 8), (avx512, 16)])
def test_scale_by_a_literal(lib, width, same_text):
    p = vectorize(scale, 'i', width, lib.AVX2 if lib is avx2 else
                  lib.AVX512, lib.INSTRS, tail='cut')
    text = str(p)
    assert "c: f32 @ DRAM\n    c = 0.5\n" in text       # bound, at the top
    pre = "mm256" if lib is avx2 else "mm512"
    assert f"{pre}_set1_scalar_ps(c_bcst[0:{width}], c)" in text, text
    assert f"{pre}_mul_ps(y_vec[0:{width}], x_vec[0:{width}], " \
           f"c_bcst[0:{width}])" in text, text
    for n in (1, width, 3 * width + 5):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        for out in _run_all(p, n=n, x=x, y=np.zeros(n, np.float32)):
            assert np.array_equal(out["y"], x * np.float32(0.5))


@proc
def scale_by(n: size, c: f32, x: f32[n], y: f32[n]):
    assert n % 8 == 0
    for i in seq(0, n):
        y[i] = c * x[i]


def test_scale_by_a_scalar_argument(same_text):
    p = vectorize(scale_by, 'i', 8, avx2.AVX2, avx2.INSTRS)
    same_text(p, """
def scale_by(n: size, c: f32 @ DRAM, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 8 == 0
    for io in seq(0, n / 8):
        c_bcst: f32[8] @ AVX2
        mm256_set1_scalar_ps(c_bcst[0:8], c)
        y_vec: f32[8] @ AVX2
        x_vec: f32[8] @ AVX2
        mm256_loadu_ps(x_vec[0:8], x[8 * io:8 * io + 8])
        mm256_mul_ps(y_vec[0:8], c_bcst[0:8], x_vec[0:8])
        mm256_storeu_ps(y[8 * io:8 * io + 8], y_vec[0:8])""")
    x = np.arange(16, dtype=np.float32) - 5
    for out in _run_all(p, n=16, c=-1.5, x=x, y=np.zeros(16, np.float32)):
        assert np.array_equal(out["y"], np.float32(-1.5) * x)


@proc
def blur3x3(h: size, w: size, x: f32[h + 2, w + 2], y: f32[h, w]):
    for i in seq(0, h):
        for j in seq(0, w):
            y[i, j] = (x[i, j] + x[i, j + 1] + x[i, j + 2] + x[i + 1, j]
                       + x[i + 1, j + 1] + x[i + 1, j + 2] + x[i + 2, j]
                       + x[i + 2, j + 1] + x[i + 2, j + 2]) * 0.125


def _blur_np(x):
    h, w = x.shape[0] - 2, x.shape[1] - 2
    s = np.zeros((h, w), np.float32)
    for di in range(3):
        for dj in range(3):
            s = (s + x[di:di + h, dj:dj + w]).astype(np.float32)
    return (s * np.float32(0.125)).astype(np.float32)


@pytest.mark.parametrize("lib,width", [(avx2, 8), (avx512, 16)])
def test_stencil_3x3_one_register_per_access(lib, width):
    mem = lib.AVX2 if lib is avx2 else lib.AVX512
    p = vectorize(blur3x3, 'j', width, mem, lib.INSTRS, tail='cut')
    text = str(p)
    pre = "mm256" if lib is avx2 else "mm512"
    assert text.count(f"{pre}_loadu_ps(") == 9, text      # one per offset
    assert f"{pre}_set1_scalar_ps(" in text
    h, w = 5, 2 * width + 3
    x = np.random.default_rng(3).integers(-50, 50, (h + 2, w + 2)
                                          ).astype(np.float32)
    for out in _run_all(p, h=h, w=w, x=x, y=np.zeros((h, w), np.float32)):
        assert np.array_equal(out["y"], _blur_np(x))


@proc
def matvec(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


def test_a_reduction_is_named_with_what_to_do():
    with pytest.raises(SchedulingError) as e:
        vectorize(matvec, 'j', 8, avx2.AVX2, avx2.INSTRS, tail='cut')
    msg = str(e.value)
    assert "is a reduction" in msg and "y[i] +=" in msg
    assert "mm256_reduce_add_ps" in msg and "partial sum per lane" in msg
    assert "vectorize_reduction(p, 'j', ...)" in msg
    assert "(0)" not in msg and "i == i" not in msg


def test_a_loop_with_a_loop_inside_is_named_with_what_to_do():
    """The outer loop of a matvec: refused up front, naming the inner loop
    and what to vectorize instead (was 'the body of loop 'ii' must be plain
    assignments', about a loop the user never named)."""
    for tail in ("cut", "mask"):
        with pytest.raises(SchedulingError) as e:
            vectorize(matvec, 'i', 8, avx2.AVX2, avx2.INSTRS, tail=tail)
        msg = str(e.value)
        assert "the body of loop 'i' holds the loop 'j'" in msg, msg
        assert "Vectorize 'j' instead (vectorize_reduction" in msg, msg
        assert "'ii'" not in msg, msg


@proc
def shifted(n: size, x: f32[n + 1], y: f32[n]):
    for i in seq(0, n):
        y[i] = select(x[i], x[i + 1], x[i], x[i + 1])


def test_a_stencil_no_instruction_computes_is_named():
    """``select`` has no AVX2 instruction here: the message says it met a
    stencil, and what to do."""
    with pytest.raises(SchedulingError) as e:
        vectorize(shifted, 'i', 8, avx2.AVX2, avx2.INSTRS, tail='cut')
    msg = str(e.value)
    assert "is a stencil (x is read at 2 offsets" in msg
    assert "no instruction for the loop below" in msg
    assert "y_vec[ii] = select(x_ld[ii], x_ld_1[ii]" in msg   # that loop
    assert "(0)" not in msg and "i == i" not in msg        # no internals


# ---------------------------------------------------------------------------
# hoist and bind_const

@proc
def affine(n: size, m: size, x: f32[n, m], y: f32[n, m]):
    for i in seq(0, n):
        for j in seq(0, m):
            y[i, j] = x[i, j] * 0.5 + 1.0


def test_bind_const_binds_at_the_top(same_text, equiv):
    p = bind_const(affine, affine.find('0.5'), 'half')
    p = bind_const(p, p.find('1.0'), 'one')
    same_text(p, """
def affine(n: size, m: size, x: f32[n, m] @ DRAM, y: f32[n, m] @ DRAM):
    half: f32 @ DRAM
    half = 0.5
    one: f32 @ DRAM
    one = 1.0
    for i in seq(0, n):
        for j in seq(0, m):
            y[i, j] = x[i, j] * half + one""")
    equiv(affine, p, [{"n": 2, "m": 3}, {"n": 1, "m": 1}])


@proc
def named_before(n: size, x: f32[n], y: f64[n], z: f32[n]):
    for i in seq(0, n):
        half: f64
        half = 0.1
        y[i] = half * 3.0
    for j in seq(0, n):
        z[j] = x[j] * 0.5


def test_bind_const_changes_only_its_own_binding(same_text, equiv):
    """Another nest's scalar of the same name is left alone: bind_const
    found its binding by name, so it made the first nest's f64 ``half``
    an f32 (y changed) and hoisted that one, leaving its own in the
    loop."""
    p = bind_const(named_before, named_before.find('0.5'), 'half')
    same_text(p, """
def named_before(n: size, x: f32[n] @ DRAM, y: f64[n] @ DRAM,
                 z: f32[n] @ DRAM):
    for i in seq(0, n):
        half: f64 @ DRAM
        half = 0.1
        y[i] = half * 3.0
    half: f32 @ DRAM
    half = 0.5
    for j in seq(0, n):
        z[j] = x[j] * half""")
    equiv(named_before, p, [{"n": 3}])
    x = np.float32([1.0, 3.0, 7.0])
    ys = [np.zeros(3, np.float64) for _ in range(2)]
    for q, y in zip((named_before, p), ys):
        q.interpret(3, x, y, np.zeros(3, np.float32))
    assert ys[0].tobytes() == ys[1].tobytes()
    with pytest.raises(SchedulingError, match="expected an expression"):
        bind_const(named_before, named_before.find_loop('i'), 'c')


@proc
def with_scalar(n: size, a: f32[4], x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = a[2] * 3.0
        y[i] = x[i] * t


def test_hoist_moves_an_invariant_assignment_out(same_text, equiv):
    p = hoist(with_scalar, 't = _')
    same_text(p, """
def with_scalar(n: size, a: f32[4] @ DRAM, x: f32[n] @ DRAM,
                y: f32[n] @ DRAM):
    t: f32 @ DRAM
    t = a[2] * 3.0
    for i in seq(0, n):
        y[i] = x[i] * t""")
    equiv(with_scalar, p, [{"n": 1}, {"n": 5}])


@proc
def varying(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i]
        y[i] = t


@proc
def in_if(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if i < 2:
            t: f32
            t = 2.0
            y[i] = x[i] * t


@proc
def maybe_empty(n: size, x: f32[n], y: f32[n]):
    for i in seq(1, n):
        t: f32
        t = 2.0
        y[0] = x[0] * t


@proc
def written_later(n: size, x: f32[n], y: f32[n]):
    t: f32
    t = 0.0
    for i in seq(0, n):
        y[i] = t
        t = 2.0


def test_hoist_rejections():
    with pytest.raises(SchedulingError):          # varies with the loop
        hoist(varying, 't = _')
    with pytest.raises(SchedulingError, match="inside an if"):
        hoist(in_if, 't = _')
    with pytest.raises(SchedulingError, match="zero times"):
        hoist(maybe_empty, 't = _')
    with pytest.raises(SchedulingError):          # read before, each trip
        hoist(written_later, 't = 2.0')
    with pytest.raises(SchedulingError, match="assignment to a scalar"):
        hoist(varying, 'y[_] = _')


# ---------------------------------------------------------------------------
# vectorize_reduction: a matvec with vector accumulators

from exo_hl.stdlib import vectorize_reduction  # noqa: E402


@proc
def matvec16(m: size, n: size, A: f32[m, n], x: f32[n], y: f32[m]):
    assert n % 16 == 0
    for i in seq(0, m):
        for j in seq(0, n):
            y[i] += A[i, j] * x[j]


@pytest.mark.parametrize("lib,width", [(avx2, 8), (avx512, 16)])
def test_vectorize_reduction_of_a_matvec(lib, width):
    mem = lib.AVX2 if lib is avx2 else lib.AVX512
    pre = "mm256" if lib is avx2 else "mm512"
    p = vectorize_reduction(matvec16, 'j', width, mem, lib.INSTRS)
    text = str(p)
    for needle in (f"acc: f32[{width}] @ {mem.__name__}",
                   f"{pre}_setzero_ps(acc[0:{width}])",
                   f"{pre}_fmadd_ps(acc[0:{width}], A_vec[0:{width}], "
                   f"x_vec[0:{width}])",
                   f"{pre}_storeu_ps(acc_lanes[0:{width}], acc[0:{width}])",
                   f"y[i] += acc_lanes[ji]"):
        assert needle in text, text
    rng = np.random.default_rng(width)
    m, n = 5, 64
    # small integers: every order of the sum is exact, so all agree
    A = rng.integers(-4, 5, (m, n)).astype(np.float32)
    x = rng.integers(-4, 5, n).astype(np.float32)
    y = rng.integers(-4, 5, m).astype(np.float32)
    for out in _run_all(p, m=m, n=n, A=A, x=x, y=y):
        assert np.array_equal(out["y"], y + A @ x)
    # random floats: another order of the additions, within rounding
    A = rng.standard_normal((m, n)).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    for out in _run_all(p, m=m, n=n, A=A, x=x, y=y):
        assert np.allclose(out["y"], y + A @ x, rtol=1e-5, atol=1e-5)


def test_vectorize_reduction_rejections():
    with pytest.raises(SchedulingError, match="one accumulation"):
        vectorize_reduction(scale, 'i', 8, avx2.AVX2, avx2.INSTRS)
    with pytest.raises(SchedulingError):       # n % 8 is not known
        vectorize_reduction(matvec, 'j', 8, avx2.AVX2, avx2.INSTRS)
