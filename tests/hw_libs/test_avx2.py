"""The AVX2 library: every instruction's template does what its body says.

Each instruction is wrapped in a small procedure that moves data between
DRAM and registers; the wrapper runs through ``interpret()`` (the bodies)
and through ``compile()`` (the intrinsics) on the same random inputs, and
the results must be identical. f32 data are small integers, so fused and
unfused multiply-adds, and sums in any order, round the same way; ui16 data
cover the full range 0..65535, extremes included, so wrap-around, rounding
and overflow are all exercised. Masked loads and stores run for every tail
length 1..8 against sentinels.
"""
from __future__ import annotations

import re
import subprocess
import tempfile

import numpy as np
import pytest

from exo_hl import (DRAM, DRAM_STATIC, ExoTypeError, MemGenError,
                    SchedulingError, compile_procs, f32, f64, i16, proc, seq,
                    size, ui16)
from exo_hl.hw_libs.avx2 import (
    AVX2, INSTRS, mm256_add_epi16, mm256_add_ps, mm256_avg_epu16,
    mm256_broadcast_ss, mm256_fmadd_bcst_ps, mm256_fmadd_ps,
    mm256_loadu_epi16, mm256_loadu_ps, mm256_maskload_ps, mm256_maskstore_ps,
    mm256_max_ps, mm256_mean3_epu16, mm256_mean3_wrap_epu16, mm256_mul_ps, mm256_mulhi_epu16, mm256_prefix_add_ps,
    mm256_prefix_fmadd_bcst_ps, mm256_prefix_fmadd_ps, mm256_prefix_mul_ps,
    mm256_prefix_store_ps, mm256_reduce_add_ps,
    mm256_set1_epi16, mm256_setzero_ps, mm256_srli_epi16, mm256_storeu_epi16,
    mm256_storeu_ps, mm256_storeu_relu_ps, mm256_relu_ps,
    mm256_set1_scalar_ps)


# ---------------------------------------------------------------------------
# wrappers: DRAM in, registers, DRAM out (f32)

@proc
def w_copy(x: f32[8] @ DRAM, y: f32[8] @ DRAM):
    r: f32[8] @ AVX2
    mm256_loadu_ps(r, x[0:8])
    mm256_storeu_ps(y[0:8], r)


@proc
def w_maskload(m: size, x: f32[16] @ DRAM, y: f32[8] @ DRAM):
    """The tail x[4:4+m] into a register; all 8 lanes out."""
    assert m <= 8
    r: f32[8] @ AVX2
    mm256_maskload_ps(m, r, x[4:4 + m])
    mm256_storeu_ps(y[0:8], r)


@proc
def w_maskstore(m: size, x: f32[8] @ DRAM, y: f32[16] @ DRAM):
    """A register out to the tail y[4:4+m]; the rest of y is sentinels."""
    assert m <= 8
    r: f32[8] @ AVX2
    mm256_loadu_ps(r, x[0:8])
    mm256_maskstore_ps(m, y[4:4 + m], r)


@proc
def w_zero_bcst(x: f32[4] @ DRAM, y: f32[2, 8] @ DRAM):
    r: f32[8] @ AVX2
    mm256_setzero_ps(r)
    mm256_storeu_ps(y[0, 0:8], r)
    mm256_broadcast_ss(r, x[2:3])
    mm256_storeu_ps(y[1, 0:8], r)


@proc
def w_arith(x: f32[3, 8] @ DRAM, a: f32[4] @ DRAM, y: f32[5, 8] @ DRAM):
    """Every f32 arithmetic instruction once, on a 3-register array."""
    r: f32[3, 8] @ AVX2
    for i in seq(0, 3):
        mm256_loadu_ps(r[i, 0:8], x[i, 0:8])
    t: f32[8] @ AVX2
    u: f32[8] @ AVX2
    mm256_mul_ps(t, r[0, 0:8], r[1, 0:8])          # t = x0 * x1
    mm256_storeu_ps(y[0, 0:8], t)
    mm256_fmadd_ps(t, r[2, 0:8], r[0, 0:8])        # t += x2 * x0
    mm256_storeu_ps(y[1, 0:8], t)
    mm256_fmadd_bcst_ps(t, a[1:2], r[1, 0:8])      # t += a1 * x1
    mm256_storeu_ps(y[2, 0:8], t)
    mm256_add_ps(u, t, r[2, 0:8])                  # u = t + x2
    mm256_storeu_ps(y[3, 0:8], u)
    mm256_max_ps(t, u, r[1, 0:8])                  # t = max(u, x1)
    mm256_storeu_ps(y[4, 0:8], t)


@proc
def w_relu(x: f32[2, 8] @ DRAM, y: f32[2, 8] @ DRAM):
    r: f32[2, 8] @ AVX2
    for i in seq(0, 2):
        mm256_loadu_ps(r[i, 0:8], x[i, 0:8])
        mm256_storeu_relu_ps(y[i, 0:8], r[i, 0:8])


@proc
def w_max(a: f32[8] @ DRAM, b: f32[8] @ DRAM, y: f32[8] @ DRAM):
    ra: f32[8] @ AVX2
    rb: f32[8] @ AVX2
    rc: f32[8] @ AVX2
    mm256_loadu_ps(ra, a[0:8])
    mm256_loadu_ps(rb, b[0:8])
    mm256_max_ps(rc, ra, rb)
    mm256_storeu_ps(y[0:8], rc)


@proc
def w_reduce(m: size, x: f32[16] @ DRAM, s: f32[1] @ DRAM):
    """s[0] += the sum of the tail x[4:4+m] (masked load, then reduce)."""
    assert m <= 8
    r: f32[8] @ AVX2
    mm256_maskload_ps(m, r, x[4:4 + m])
    mm256_reduce_add_ps(s[0:1], r)


# ---------------------------------------------------------------------------
# wrappers (ui16)

@proc
def w_copy16(x: ui16[16] @ DRAM, y: ui16[16] @ DRAM):
    r: ui16[16] @ AVX2
    mm256_loadu_epi16(r, x[0:16])
    mm256_storeu_epi16(y[0:16], r)


@proc
def w_int(a: ui16[16] @ DRAM, b: ui16[16] @ DRAM, c: ui16[2] @ DRAM,
          y: ui16[5, 16] @ DRAM):
    """Every ui16 instruction once."""
    ra: ui16[16] @ AVX2
    rb: ui16[16] @ AVX2
    t: ui16[16] @ AVX2
    mm256_loadu_epi16(ra, a[0:16])
    mm256_loadu_epi16(rb, b[0:16])
    mm256_add_epi16(t, ra, rb)                      # wraps
    mm256_storeu_epi16(y[0, 0:16], t)
    mm256_avg_epu16(t, ra, rb)                      # (a + b + 1) >> 1
    mm256_storeu_epi16(y[1, 0:16], t)
    mm256_mulhi_epu16(t, ra, rb)                    # (a * b) >> 16
    mm256_storeu_epi16(y[2, 0:16], t)
    mm256_srli_epi16(5, t, ra)                      # a >> 5
    mm256_storeu_epi16(y[3, 0:16], t)
    mm256_set1_epi16(t, c[1:2])                     # c1 everywhere
    mm256_storeu_epi16(y[4, 0:16], t)


@proc
def w_srli(k: size, x: ui16[16] @ DRAM, y: ui16[16] @ DRAM):
    assert k <= 15
    r: ui16[16] @ AVX2
    q: ui16[16] @ AVX2
    mm256_loadu_epi16(r, x[0:16])
    mm256_srli_epi16(k, q, r)
    mm256_storeu_epi16(y[0:16], q)


@proc
def div3(n: size, x: ui16[n, 16] @ DRAM, y: ui16[n, 16] @ DRAM):
    """y = x // 3 as mulhi(x, 43691) >> 1, a register of 16 at a time."""
    c: ui16[1] @ DRAM_STATIC
    c[0] = 43691
    k: ui16[16] @ AVX2
    mm256_set1_epi16(k, c[0:1])
    for r in seq(0, n):
        v: ui16[16] @ AVX2
        h: ui16[16] @ AVX2
        q: ui16[16] @ AVX2
        mm256_loadu_epi16(v, x[r, 0:16])
        mm256_mulhi_epu16(h, v, k)
        mm256_srli_epi16(1, q, h)
        mm256_storeu_epi16(y[r, 0:16], q)


@proc
def box_blur3x3(H: size, W: size, inp: ui16[H + 2, W + 2] @ DRAM,
                out: ui16[H, W] @ DRAM):
    """A separable 3x3 box blur: each row of three averaged (sum, then
    divided by 3 exactly with mulhi + shift), then each column of three.
    Exact while a sum of three pixels fits in 16 bits (pixels <= 21845)."""
    assert W % 16 == 0
    c: ui16[1] @ DRAM_STATIC
    c[0] = 43691
    third: ui16[16] @ AVX2
    mm256_set1_epi16(third, c[0:1])
    for y in seq(0, H):
        for xo in seq(0, W / 16):
            rows: ui16[3, 16] @ AVX2
            for dy in seq(0, 3):
                v: ui16[3, 16] @ AVX2
                for dx in seq(0, 3):
                    mm256_loadu_epi16(
                        v[dx, 0:16],
                        inp[y + dy, 16 * xo + dx:16 * xo + dx + 16])
                s: ui16[2, 16] @ AVX2
                mm256_add_epi16(s[0, 0:16], v[0, 0:16], v[1, 0:16])
                mm256_add_epi16(s[1, 0:16], s[0, 0:16], v[2, 0:16])
                h: ui16[16] @ AVX2
                mm256_mulhi_epu16(h, s[1, 0:16], third)
                mm256_srli_epi16(1, rows[dy, 0:16], h)
            t: ui16[2, 16] @ AVX2
            mm256_add_epi16(t[0, 0:16], rows[0, 0:16], rows[1, 0:16])
            mm256_add_epi16(t[1, 0:16], t[0, 0:16], rows[2, 0:16])
            hv: ui16[16] @ AVX2
            q: ui16[16] @ AVX2
            mm256_mulhi_epu16(hv, t[1, 0:16], third)
            mm256_srli_epi16(1, q, hv)
            mm256_storeu_epi16(out[y, 16 * xo:16 * xo + 16], q)


@proc
def w_prefix(m: size, x: f32[3, 8] @ DRAM, a: f32[4] @ DRAM,
             y: f32[4, 8] @ DRAM, z: f32[16] @ DRAM):
    """Every prefix (first m lanes) instruction once; every lane of the
    registers out (lanes m..7 must keep the destination's values), and
    the prefix store into z[4:4+m] between sentinels."""
    assert m <= 8
    r: f32[3, 8] @ AVX2
    for i in seq(0, 3):
        mm256_loadu_ps(r[i, 0:8], x[i, 0:8])
    t: f32[8] @ AVX2
    mm256_loadu_ps(t, x[2, 0:8])
    mm256_prefix_add_ps(m, t, r[0, 0:8], r[1, 0:8])      # t = x0 + x1
    mm256_storeu_ps(y[0, 0:8], t)
    mm256_prefix_mul_ps(m, t, r[1, 0:8], r[2, 0:8])      # t = x1 * x2
    mm256_storeu_ps(y[1, 0:8], t)
    mm256_prefix_fmadd_ps(m, t, r[0, 0:8], r[2, 0:8])    # t += x0 * x2
    mm256_storeu_ps(y[2, 0:8], t)
    mm256_prefix_fmadd_bcst_ps(m, t, a[1:2], r[1, 0:8])  # t += a1 * x1
    mm256_storeu_ps(y[3, 0:8], t)
    mm256_prefix_store_ps(m, z[4:4 + m], t)



@proc
def w_mean3(n: size, a: ui16[n, 16] @ DRAM, b: ui16[n, 16] @ DRAM,
            c: ui16[n, 16] @ DRAM, y: ui16[n, 16] @ DRAM):
    for r in seq(0, n):
        ra: ui16[16] @ AVX2
        rb: ui16[16] @ AVX2
        rc: ui16[16] @ AVX2
        rm: ui16[16] @ AVX2
        mm256_loadu_epi16(ra, a[r, 0:16])
        mm256_loadu_epi16(rb, b[r, 0:16])
        mm256_loadu_epi16(rc, c[r, 0:16])
        mm256_mean3_epu16(rm, ra, rb, rc)
        mm256_storeu_epi16(y[r, 0:16], rm)



@proc
def w_mean3_wrap(n: size, a: ui16[n, 16] @ DRAM, b: ui16[n, 16] @ DRAM,
                 c: ui16[n, 16] @ DRAM, y: ui16[n, 16] @ DRAM):
    for r in seq(0, n):
        ra: ui16[16] @ AVX2
        rb: ui16[16] @ AVX2
        rc: ui16[16] @ AVX2
        rm: ui16[16] @ AVX2
        mm256_loadu_epi16(ra, a[r, 0:16])
        mm256_loadu_epi16(rb, b[r, 0:16])
        mm256_loadu_epi16(rc, c[r, 0:16])
        mm256_mean3_wrap_epu16(rm, ra, rb, rc)
        mm256_storeu_epi16(y[r, 0:16], rm)


@proc
def w_set1_scalar_relu(c: f32, x: f32[8] @ DRAM, y: f32[2, 8] @ DRAM):
    r: f32[8] @ AVX2
    mm256_set1_scalar_ps(r, c)
    mm256_storeu_ps(y[0, 0:8], r)
    mm256_loadu_ps(r, x[0:8])
    t: f32[8] @ AVX2
    mm256_relu_ps(t, r)
    mm256_storeu_ps(y[1, 0:8], t)


WRAPPERS = (w_set1_scalar_relu, w_copy, w_maskload, w_maskstore, w_zero_bcst, w_arith, w_max,
            w_relu,
            w_reduce, w_copy16, w_int, w_srli, div3, box_blur3x3, w_prefix,
            w_mean3, w_mean3_wrap)


# ---------------------------------------------------------------------------
# helpers

def _ints(rng, *shape):
    return rng.integers(-8, 9, shape).astype(np.float32)


def _u16(rng, *shape):
    """Full-range ui16 data, with 0 and 65535 always among them."""
    v = rng.integers(0, 1 << 16, shape).astype(np.uint16)
    flat = v.reshape(-1)
    flat[:2] = (0, 65535)
    return v


def _both(p, **args):
    """Run ``p`` by interpreter and by compiled C on copies; both results."""
    fast = p.compile()
    outs = []
    for run in (p.interpret, fast):
        a = {k: (v.copy() if isinstance(v, np.ndarray) else v)
             for k, v in args.items()}
        run(**a)
        outs.append(a)
    return outs


def _bits(a):
    """The bit patterns of an array (NaN == NaN, -0.0 != +0.0)."""
    return a.view(np.uint32) if a.dtype == np.float32 else a


def _assert_same(outs, *names):
    ref, got = outs
    for n in names:
        assert np.array_equal(_bits(ref[n]), _bits(got[n])), \
            (n, ref[n], got[n])


# ---------------------------------------------------------------------------
# features

def test_cpu_features_are_declared():
    assert AVX2.cpu_features == frozenset({"avx2"})
    fma = {mm256_fmadd_ps, mm256_fmadd_bcst_ps, mm256_prefix_fmadd_ps,
           mm256_prefix_fmadd_bcst_ps}
    for p in INSTRS:
        want = {"avx2", "fma"} if p in fma else {"avx2"}
        assert p.cpu_features() == frozenset(want), p.name()
    assert w_arith.cpu_features() == frozenset({"avx2", "fma"})
    assert w_int.cpu_features() == frozenset({"avx2"})
    assert 'EXO_HL_TARGET("avx2")' in w_int.c_code_str()
    assert 'EXO_HL_TARGET("avx2,fma")' in w_arith.c_code_str()


# ---------------------------------------------------------------------------
# f32

def test_loadu_storeu():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(8).astype(np.float32)
    outs = _both(w_copy, x=x, y=np.zeros(8, np.float32))
    _assert_same(outs, "y")
    assert np.array_equal(outs[1]["y"], x)


@pytest.mark.parametrize("m", range(1, 9))
def test_masked_load_zeroes_the_tail(m):
    rng = np.random.default_rng(m)
    x = np.full(16, np.nan, np.float32)   # around the tail: NaN
    x[4:4 + m] = _ints(rng, m)
    outs = _both(w_maskload, m=m, x=x, y=np.full(8, 99, np.float32))
    _assert_same(outs, "y")
    want = np.zeros(8, np.float32)
    want[:m] = x[4:4 + m]
    assert np.array_equal(_bits(outs[1]["y"]), _bits(want))


@pytest.mark.parametrize("m", range(1, 9))
def test_masked_store_writes_only_m_elements(m):
    rng = np.random.default_rng(10 + m)
    x = _ints(rng, 8)
    y = np.full(16, 99, np.float32)       # sentinels on both sides
    outs = _both(w_maskstore, m=m, x=x, y=y)
    _assert_same(outs, "y")
    want = y.copy()
    want[4:4 + m] = x[:m]
    assert np.array_equal(outs[1]["y"], want)
    assert np.all(outs[1]["y"][:4] == 99) and np.all(outs[1]["y"][4 + m:]
                                                     == 99)


@pytest.mark.parametrize("m", range(1, 9))
def test_prefix_instructions_change_only_m_lanes(m):
    rng = np.random.default_rng(20 + m)
    x, a = _ints(rng, 3, 8), _ints(rng, 4)
    z = np.full(16, 99, np.float32)
    outs = _both(w_prefix, m=m, x=x, a=a, y=np.zeros((4, 8), np.float32),
                 z=z)
    _assert_same(outs, "y", "z")
    t = x[2].copy()
    want = []
    for new in (lambda t: x[0] + x[1], lambda t: x[1] * x[2],
                lambda t: t + x[0] * x[2], lambda t: t + a[1] * x[1]):
        t = np.where(np.arange(8) < m, new(t), t).astype(np.float32)
        want.append(t)
    assert np.array_equal(outs[1]["y"], np.array(want))
    zw = z.copy()
    zw[4:4 + m] = t[:m]
    assert np.array_equal(outs[1]["z"], zw)


def test_setzero_and_broadcast():
    x = np.array([1, 2, 3.5, 4], np.float32)
    outs = _both(w_zero_bcst, x=x, y=np.full((2, 8), 5, np.float32))
    _assert_same(outs, "y")
    assert np.array_equal(outs[1]["y"], np.stack([np.zeros(8),
                                                  np.full(8, 3.5)]))


def test_arithmetic_instructions():
    rng = np.random.default_rng(7)
    x, a, y = _ints(rng, 3, 8), _ints(rng, 4), _ints(rng, 5, 8)
    outs = _both(w_arith, x=x, a=a, y=y)
    _assert_same(outs, "y")
    t0 = x[0] * x[1]
    t1 = t0 + x[2] * x[0]
    t2 = t1 + a[1] * x[1]
    u = t2 + x[2]
    want = np.array([t0, t1, t2, u, np.maximum(u, x[1])])
    assert np.array_equal(outs[1]["y"], want)


def test_fma_rounds_once_where_its_body_rounds_twice():
    """The documented exception (docs/semantics.md): with x2 = 1 + 2**-23,
    x0 = 1 - 2**-24 and t = x0 * x1 = -1, the body's x2 * x0 rounds to 1
    and t becomes 0; the FMA gives the exact 2**-24 - 2**-47."""
    x = np.ones((3, 8), np.float32)
    x[0] = 1 - 2.0**-24
    x[1] = -1 / x[0].astype(np.float64)   # x0 * x1 rounds to -1
    x[2] = 1 + 2.0**-23
    a = np.zeros(4, np.float32)
    outs = _both(w_arith, x=x, a=a, y=np.zeros((5, 8), np.float32))
    t0 = outs[1]["y"][0]
    assert (t0 == -1).all() and (outs[0]["y"][0] == -1).all()
    assert (outs[0]["y"][1] == 0).all()                   # interpret: twice
    fused = np.float32(np.float64(x[2, 0]) * np.float64(x[0, 0]) - 1)
    assert fused == np.float32(2.0**-24 - 2.0**-47)
    assert (outs[1]["y"][1] == fused).all()               # C: once


def test_max_is_vmaxps_on_nan_and_signed_zeros():
    """vmaxps returns its second operand unless the first is greater: on
    equal values (+0/-0) and when either is NaN. The body says the same."""
    nan = np.float32(np.nan)
    a = np.array([1, -1, 0.0, -0.0, nan, 2, nan, -3], np.float32)
    b = np.array([-1, 1, -0.0, 0.0, 5, nan, nan, -3], np.float32)
    outs = _both(w_max, a=a, b=b, y=np.zeros(8, np.float32))
    _assert_same(outs, "y")
    want = np.where(a > b, a, b)
    assert np.array_equal(_bits(outs[1]["y"]), _bits(want))


def test_storeu_relu():
    """The ReLU store equals its body (``relu``) on values of both signs,
    and is ``vmaxps(x, +0.0)``: -0.0 and NaN store +0.0, as C's
    ``x > 0 ? x : 0``."""
    rng = np.random.default_rng(3)
    x = _ints(rng, 2, 8)
    x[0, :3] = [0.0, -0.0, -1.5]
    outs = _both(w_relu, x=x, y=np.full((2, 8), 7, np.float32))
    assert np.array_equal(outs[0]["y"], outs[1]["y"])      # -0.0 == +0.0
    assert np.array_equal(outs[1]["y"], np.maximum(x, 0))
    nan = np.float32(np.nan)
    x = np.array([[nan, -0.0, -2, 2, 0.5, -0.5, 1e30, -1e30]] * 2,
                 np.float32)
    y = np.zeros((2, 8), np.float32)
    w_relu.compile()(x=x, y=y)
    want = np.array([0, 0, 0, 2, 0.5, 0, 1e30, 0], np.float32)
    assert np.array_equal(_bits(y[0]), _bits(want))


def test_relu_store_is_selected_for_a_relu_loop():
    """``replace`` picks the ReLU store for ``out = relu(reg)``, and not
    for a plain copy (the bodies differ)."""
    @proc
    def relu8(x: f32[8] @ DRAM, y: f32[8] @ DRAM):
        r: f32[8] @ AVX2
        mm256_loadu_ps(r, x[0:8])
        for i in seq(0, 8):
            y[i] = relu(r[i])
    p = relu8.replace(relu8.find_loop('i'), mm256_storeu_relu_ps)
    assert "mm256_storeu_relu_ps(y[0:8], r[0:8])" in str(p)
    with pytest.raises(SchedulingError):
        relu8.replace(relu8.find_loop('i'), mm256_storeu_ps)
    x = np.arange(-4, 4, dtype=np.float32)
    y = np.zeros(8, np.float32)
    p.compile()(x=x, y=y)
    assert np.array_equal(y, np.maximum(x, 0))


@pytest.mark.parametrize("m", range(1, 9))
def test_reduce_add(m):
    rng = np.random.default_rng(20 + m)
    x = np.full(16, np.nan, np.float32)
    x[4:4 + m] = _ints(rng, m)
    s = np.array([3], np.float32)
    outs = _both(w_reduce, m=m, x=x, s=s)
    _assert_same(outs, "s")
    assert outs[1]["s"][0] == 3 + x[4:4 + m].sum()


def test_reduce_add_adds_in_lane_order_as_its_body():
    """The C summed pairwise (halves, then horizontal adds): on 1e8, 1,
    -1e8, 1 the body gives 1.0 and the C gave 0.0."""
    x = np.zeros(16, np.float32)
    x[4:12] = [1e8, 1, -1e8, 1, 0, 0, 0, 0]
    outs = _both(w_reduce, m=8, x=x, s=np.zeros(1, np.float32))
    assert outs[0]["s"][0] == 1.0
    _assert_same(outs, "s")


# ---------------------------------------------------------------------------
# ui16, on full-range data

def test_loadu_storeu_epi16():
    x = _u16(np.random.default_rng(2), 16)
    outs = _both(w_copy16, x=x, y=np.zeros(16, np.uint16))
    _assert_same(outs, "y")
    assert np.array_equal(outs[1]["y"], x)


@pytest.mark.parametrize("seed", range(4))
def test_integer_instructions_full_range(seed):
    rng = np.random.default_rng(100 + seed)
    a, b, c = _u16(rng, 16), _u16(rng, 16), _u16(rng, 2)
    if seed == 0:     # the extremes in every pairing
        a[:4], b[:4] = (0, 0, 65535, 65535), (0, 65535, 0, 65535)
    outs = _both(w_int, a=a, b=b, c=c, y=np.zeros((5, 16), np.uint16))
    _assert_same(outs, "y")
    A, B = a.astype(np.int64), b.astype(np.int64)
    want = [(A + B) % 65536, (A + B + 1) >> 1, (A * B) >> 16, A >> 5,
            np.full(16, c[1])]
    assert np.array_equal(outs[1]["y"], np.array(want))


def test_shift_by_every_count():
    x = _u16(np.random.default_rng(3), 16)
    fast = w_srli.compile()
    for k in range(1, 16):
        ref, got = np.zeros(16, np.uint16), np.zeros(16, np.uint16)
        w_srli.interpret(k=k, x=x, y=ref)
        fast(k=k, x=x, y=got)
        assert np.array_equal(ref, got) and np.array_equal(got, x >> k), k


def test_division_by_3_is_exact_for_every_ui16():
    """mulhi(x, 43691) >> 1 == x // 3 for all 65536 values (the identity
    the blur relies on), by the intrinsics and by the bodies."""
    x = np.arange(1 << 16, dtype=np.uint16).reshape(4096, 16)
    outs = _both(div3, n=4096, x=x, y=np.zeros_like(x))
    _assert_same(outs, "y")
    assert np.array_equal(outs[1]["y"], x // 3)


def test_mean3_is_exact_on_the_full_range():
    """(a + b + c) / 3 with an 18-bit sum, on 16-bit lanes: every pair of
    low-two-bit patterns with extreme and random high parts, and random
    full-range data; by the intrinsics and by the body."""
    rng = np.random.default_rng(7)
    n = 64
    a, b, c = (_u16(rng, n, 16) for _ in range(3))
    lows = np.array([(x, y, z) for x in range(4) for y in range(4)
                     for z in range(4)], np.uint16)        # 64 patterns
    for k, v in enumerate((a, b, c)):
        v[:16] = (v[:16] & 0xFFFC) | lows[:16, k, None]
        v[16:32] = 65532 | lows[16:32, k, None]            # largest sums
        v[32:48] = lows[32:48, k, None]                     # smallest
    outs = _both(w_mean3, n=n, a=a, b=b, c=c, y=np.zeros_like(a))
    _assert_same(outs, "y")
    want = (a.astype(np.int64) + b + c) // 3
    assert np.array_equal(outs[1]["y"], want)


def test_mean3_wrap_is_exact_on_every_wrapped_sum():
    """((a + b + c) % 65536) / 3 in four 16-bit operations: every one of
    the 65536 wrapped sums (a runs over all of them, b + c adds 0 or wraps
    past 65536), and random full-range data; by the intrinsics and by the
    body, against numpy's uint16 arithmetic (which wraps)."""
    x = np.arange(1 << 16, dtype=np.uint16).reshape(4096, 16)
    rng = np.random.default_rng(5)
    for b, c in ((np.zeros_like(x), np.zeros_like(x)),
                 (np.full_like(x, 65535), np.full_like(x, 1)),
                 (_u16(rng, 4096, 16), _u16(rng, 4096, 16))):
        outs = _both(w_mean3_wrap, n=4096, a=x, b=b, c=c,
                     y=np.zeros_like(x))
        _assert_same(outs, "y")
        assert np.array_equal(outs[1]["y"], (x + b + c) // np.uint16(3))
    # the zero row above covered every 16-bit value: x / 3 exactly
    assert np.array_equal(
        ((x.astype(np.uint32) * 43691) >> 17).astype(np.uint16), x // 3)


@proc
def mean3_loop(a: ui16[16], b: ui16[16], c: ui16[16], y: ui16[16]):
    for i in seq(0, 16):
        y[i] = ((a[i] + b[i] + c[i]) % 65536) / 3


@proc
def mean3_exact_loop(a: ui16[16], b: ui16[16], c: ui16[16], y: ui16[16]):
    for i in seq(0, 16):
        y[i] = (a[i] + b[i] + c[i]) / 3


def _in_registers(p):
    for n in "abcy":
        p = p.stage_mem(p.find_loop('i'), f"{n}[0:16]", f"r{n}")
        p = p.set_memory(f"r{n}", AVX2)
    for n in "abc":
        p = p.replace(p.find(f"r{n}[_] = _").parent(), mm256_loadu_epi16)
    return p.replace(p.find("_ = ry[_]").parent(), mm256_storeu_epi16)


def test_mean3_wrap_replaces_its_expression_only():
    """``replace`` proves the wrapped mean from its body; the exact mean
    (no wrap: different above 65535) is refused."""
    p = _in_registers(mean3_loop)
    p = p.replace(p.find_loop('i'), mm256_mean3_wrap_epu16)
    assert "mm256_mean3_wrap_epu16(ry[0:16], ra[0:16], rb[0:16], rc[0:16])" \
        in str(p)
    rng = np.random.default_rng(9)
    a, b, c = (_u16(rng, 16) for _ in range(3))
    outs = _both(p, a=a, b=b, c=c, y=np.zeros(16, np.uint16))
    _assert_same(outs, "y")
    assert np.array_equal(outs[1]["y"], (a + b + c) // np.uint16(3))
    q = _in_registers(mean3_exact_loop)
    with pytest.raises(SchedulingError):
        q.replace(q.find_loop('i'), mm256_mean3_wrap_epu16)
    r = _in_registers(mean3_loop)
    with pytest.raises(SchedulingError):
        r.replace(r.find_loop('i'), mm256_mean3_epu16)


def test_mulhi_by_21846_is_not_division_by_3():
    """Why the library divides with 43691 and a shift: the one-step
    multiplier 21846 is exact only below 32768."""
    x = np.arange(1 << 16, dtype=np.int64)
    wrong = np.nonzero((x * 21846) >> 16 != x // 3)[0]
    assert wrong.size == 10923 and wrong.min() == 32768 and 65534 in wrong
    assert np.array_equal(((x * 43691) >> 16) >> 1, x // 3)


def test_box_blur_3x3():
    rng = np.random.default_rng(4)
    H, W = 3, 32
    inp = rng.integers(0, 21846, (H + 2, W + 2)).astype(np.uint16)
    inp[0, :3] = 21845
    outs = _both(box_blur3x3, H=H, W=W, inp=inp,
                 out=np.zeros((H, W), np.uint16))
    _assert_same(outs, "out")
    v = inp.astype(np.int64)
    bx = (v[:, 0:W] + v[:, 1:W + 1] + v[:, 2:W + 2]) // 3
    want = (bx[0:H] + bx[1:H + 1] + bx[2:H + 2]) // 3
    assert np.array_equal(outs[1]["out"], want)


def test_integer_bodies_as_plain_c():
    """The bodies' formulas compiled as ordinary C (no registers) agree
    with the instructions' definitions on the full range: nothing
    overflows ``int`` and the divisions round as the instructions do."""
    @proc
    def formulas(a: ui16[16] @ DRAM, b: ui16[16] @ DRAM,
                 y: ui16[4, 16] @ DRAM):
        for i in seq(0, 16):
            y[0, i] = a[i] + b[i]
            y[1, i] = (a[i] + b[i] + 1) / 2
            y[2, i] = (a[i] / 256 * b[i] +
                       (a[i] - a[i] / 256 * 256) * b[i] / 256) / 256
            y[3, i] = a[i] / 2 / 2 / 2
    rng = np.random.default_rng(6)
    for _ in range(4):
        a, b = _u16(rng, 16), _u16(rng, 16)
        outs = _both(formulas, a=a, b=b, y=np.zeros((4, 16), np.uint16))
        _assert_same(outs, "y")
        A, B = a.astype(np.int64), b.astype(np.int64)
        want = [(A + B) % 65536, (A + B + 1) >> 1, (A * B) >> 16, A >> 3]
        assert np.array_equal(outs[1]["y"], np.array(want))


# ---------------------------------------------------------------------------
# instruction selection

def test_replace_selects_f32_instructions():
    """Each body matches a staged loop via replace, and the selected program
    still computes the same (C vs interpreter vs numpy)."""
    @proc
    def axpy8(n: size, a: f32[n] @ DRAM, x: f32[n, 8] @ DRAM,
              y: f32[8] @ DRAM):
        for k in seq(0, n):
            for i in seq(0, 8):
                y[i] += a[k] * x[k, i]
    p = axpy8.stage_mem(axpy8.find_loop('k'), 'y[0:8]', 'yr')
    p = p.stage_mem(p.find_loop('i'), 'x[k, 0:8]', 'xr')
    p = p.set_memory('yr', AVX2).set_memory('xr', AVX2)
    p = p.replace(p.find_loop('i0'), mm256_loadu_ps)      # yr = y
    p = p.replace(p.find_loop('i1'), mm256_loadu_ps)      # xr = x[k]
    p = p.replace(p.find_loop('i'), mm256_fmadd_bcst_ps)  # yr += a[k] * xr
    p = p.replace(p.find_loop('i0'), mm256_storeu_ps)     # y = yr
    text = str(p)
    for call in ("mm256_loadu_ps(yr[0:8], y[0:8])",
                 "mm256_loadu_ps(xr[0:8], x[k, 0:8])",
                 "mm256_fmadd_bcst_ps(yr[0:8], a[k:k + 1], xr[0:8])",
                 "mm256_storeu_ps(y[0:8], yr[0:8])"):
        assert call in text, text
    assert "for i" not in text
    assert p.cpu_features() == frozenset({"avx2", "fma"})
    rng = np.random.default_rng(5)
    a, x, y = _ints(rng, 9), _ints(rng, 9, 8), _ints(rng, 8)
    outs = _both(p, n=9, a=a, x=x, y=y)
    _assert_same(outs, "y")
    assert np.array_equal(outs[1]["y"], y + a @ x)


def test_replace_selects_ui16_instructions():
    """A rounding average of two rows, written as a plain loop, becomes
    loads, ``_mm256_avg_epu16`` and a store; plain and selected programs
    agree on full-range data."""
    @proc
    def avg16(a: ui16[16] @ DRAM, b: ui16[16] @ DRAM, y: ui16[16] @ DRAM):
        for i in seq(0, 16):
            y[i] = (a[i] + b[i] + 1) / 2
    p = avg16.stage_mem(avg16.find_loop('i'), 'a[0:16]', 'ar')
    p = p.stage_mem(p.find_loop('i'), 'b[0:16]', 'br')
    p = p.stage_mem(p.find_loop('i'), 'y[0:16]', 'yr')
    for buf in ('ar', 'br', 'yr'):
        p = p.set_memory(buf, AVX2)
    p = p.replace(p.find_loop('i0'), mm256_loadu_epi16)
    p = p.replace(p.find_loop('i1'), mm256_loadu_epi16)
    p = p.replace(p.find_loop('i'), mm256_avg_epu16)
    p = p.replace(p.find_loop('i2'), mm256_storeu_epi16)
    text = str(p)
    for call in ("mm256_loadu_epi16(ar[0:16], a[0:16])",
                 "mm256_loadu_epi16(br[0:16], b[0:16])",
                 "mm256_avg_epu16(yr[0:16], ar[0:16], br[0:16])",
                 "mm256_storeu_epi16(y[0:16], yr[0:16])"):
        assert call in text, text
    assert "for i" not in text
    assert "_mm256_avg_epu16(ar, br)" in p.c_code_str()
    rng = np.random.default_rng(8)
    a, b = _u16(rng, 16), _u16(rng, 16)
    want = (a.astype(np.int64) + b + 1) >> 1
    for q in (avg16, p):
        outs = _both(q, a=a, b=b, y=np.zeros(16, np.uint16))
        _assert_same(outs, "y")
        assert np.array_equal(outs[1]["y"], want)


def test_replace_rejects_wrong_memory():
    """A register instruction cannot be selected for a DRAM buffer."""
    @proc
    def copy8(x: f32[8] @ DRAM, y: f32[8] @ DRAM):
        for i in seq(0, 8):
            y[i] = x[i]
    with pytest.raises(SchedulingError):
        copy8.replace(copy8.find_loop('i'), mm256_loadu_ps)


# ---------------------------------------------------------------------------
# the memory

def test_register_codegen():
    text = w_arith.c_code_str()
    assert "#include <immintrin.h>" in text
    assert "__m256 r[3];" in text and "__m256 t;" in text
    assert "_mm256_fmadd_ps(_mm256_broadcast_ss(&a[1]), r[1], t)" in text
    text = box_blur3x3.c_code_str()
    assert "__m256i rows[3];" in text and "__m256i third;" in text
    assert "_mm256_srli_epi16(h, (int)(1))" in text
    # helpers appear only where used, with their own target attribute
    assert "exo_hl_mm256_tail_mask" not in text
    text = w_reduce.c_code_str()
    assert '__attribute__((target("avx2")))' in text
    assert "s[0] = exo_hl_mm256_reduce_add_ps(s[0], r);" in text
    assert "exo_hl_mm256_tail_mask((int)(m))" in text


def test_registers_cannot_be_read_by_plain_c():
    @proc
    def direct(x: f32[8] @ DRAM):
        r: f32[8] @ AVX2
        for i in seq(0, 8):
            r[i] = x[i]
    with pytest.raises(MemGenError, match="AVX2"):
        direct.c_code_str()


def test_wrong_shapes_are_memgen_errors():
    @proc
    def short_f32(x: f32[4] @ DRAM):
        r: f32[4] @ AVX2
        pass

    @proc
    def short_u16(x: ui16[8] @ DRAM):
        r: ui16[8] @ AVX2
        pass

    @proc
    def f32_as_16(x: f32[16] @ DRAM):
        r: f32[16] @ AVX2
        pass

    @proc
    def dynamic(n: size, x: f32[n, 8] @ DRAM):
        r: f32[n, 8] @ AVX2
        pass

    @proc
    def doubles(x: f64[4] @ DRAM):
        r: f64[4] @ AVX2
        pass

    @proc
    def signed16(x: i16[16] @ DRAM):
        r: i16[16] @ AVX2
        pass

    for p, why in ((short_f32, "last dimension of 8"),
                   (short_u16, "last dimension of 16"),
                   (f32_as_16, "last dimension of 8"),
                   (dynamic, "constant sizes"),
                   (doubles, "registers hold"),
                   (signed16, "registers hold")):
        with pytest.raises(MemGenError, match=why):
            p.c_code_str()


def test_wrong_element_type_is_a_type_error():
    with pytest.raises(ExoTypeError):
        @proc
        def bad(x: ui16[16] @ DRAM):
            r: ui16[16] @ AVX2
            mm256_loadu_ps(r[0:8], x[0:8])


def test_masked_precondition_is_checked():
    """``m <= 8`` must be provable where the masked load is called."""
    from exo_hl import BoundsError
    with pytest.raises(BoundsError):
        @proc
        def bad(m: size, x: f32[m] @ DRAM):
            r: f32[8] @ AVX2
            mm256_maskload_ps(m, r, x[0:m])


# ---------------------------------------------------------------------------
# C: warning-free everywhere, and the emulated build

def _compiler_result(cc, flags):
    """All wrappers, in one file, compiled with ``cc`` and ``flags``."""
    with tempfile.TemporaryDirectory() as d:
        compile_procs(list(WRAPPERS), d, "avx")
        return subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror",
                               *flags, "-c", "avx.c"], cwd=d,
                              capture_output=True, text=True)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("flags", [["-O2"], ["-O2", "-march=native"],
                                   ["-O0"]])
def test_templates_compile_warning_free(cc, flags):
    """No -m flags needed: the target attributes enable AVX2/FMA."""
    r = _compiler_result(cc, flags)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr


def test_emulated_build_agrees(monkeypatch):
    """On a host without AVX2/FMA the same C runs through the emulation
    layer (helpers included) and gives the same results."""
    monkeypatch.setenv("EXO_HL_HOST_CPU", "")
    rng = np.random.default_rng(9)
    fn = w_arith.compile(emulate=True)
    assert fn.emulated == frozenset({"avx2", "fma"})
    assert "EXO_HL_TARGET" not in fn.source       # nothing native
    x, a = _ints(rng, 3, 8), _ints(rng, 4)
    y1, y2 = np.zeros((5, 8), np.float32), np.zeros((5, 8), np.float32)
    fn(x=x, a=a, y=y1)
    w_arith.interpret(x=x, a=a, y=y2)
    assert np.array_equal(y1, y2)
    for m in (3, 8):
        xs = np.full(16, np.nan, np.float32)
        xs[4:4 + m] = _ints(rng, m)
        s1, s2 = np.ones(1, np.float32), np.ones(1, np.float32)
        w_reduce.compile(emulate=True)(m=m, x=xs, s=s1)
        w_reduce.interpret(m=m, x=xs, s=s2)
        assert s1[0] == s2[0] == 1 + xs[4:4 + m].sum()
        y1, y2 = np.full(16, 99, np.float32), np.full(16, 99, np.float32)
        w_maskstore.compile(emulate=True)(m=m, x=xs[:8], y=y1)
        w_maskstore.interpret(m=m, x=xs[:8], y=y2)
        assert np.array_equal(_bits(y1), _bits(y2))
    a16, b16, c16 = _u16(rng, 16), _u16(rng, 16), _u16(rng, 2)
    y1, y2 = np.zeros((5, 16), np.uint16), np.zeros((5, 16), np.uint16)
    w_int.compile(emulate=True)(a=a16, b=b16, c=c16, y=y1)
    w_int.interpret(a=a16, b=b16, c=c16, y=y2)
    assert np.array_equal(y1, y2)


def test_every_instruction_is_exercised():
    """Every instruction in INSTRS is called by a wrapper above, and every
    intrinsic its template names reaches the wrappers' C."""
    calls = " ".join(str(w) for w in WRAPPERS)
    for p in INSTRS:
        assert f"{p.name()}(" in calls, p.name()
    c_text = " ".join(w.c_code_str() for w in WRAPPERS)
    for p in INSTRS:
        tmpl = p.ir().instr.c_template + p.ir().instr.c_global
        for name in set(re.findall(r"(?<!\w)_mm\w*", tmpl)):
            assert name + "(" in c_text, (p.name(), name)


def test_set1_scalar_and_register_relu_on_edge_values():
    """``set1`` of a scalar broadcasts it (signed zero and inf kept);
    ``relu`` in registers gives +0.0 for -0.0 and NaN, like its body."""
    x = np.array([np.nan, -0.0, 0.0, -2, 3, np.inf, -np.inf, 1e-45],
                 np.float32)
    for c in (2.5, -0.0, -np.inf):
        outs = _both(w_set1_scalar_relu, c=c, x=x,
                     y=np.full((2, 8), 7, np.float32))
        _assert_same(outs, "y")
        y = outs[1]["y"]
        assert np.array_equal(_bits(y[0]), _bits(np.full(8, c, np.float32)))
        want = np.where(x > 0, x, np.float32(0.0)).astype(np.float32)
        assert np.array_equal(_bits(y[1]), _bits(want))
