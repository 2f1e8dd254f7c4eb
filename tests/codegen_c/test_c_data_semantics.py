"""Data arithmetic: interpret() and the generated C agree, without UB.

docs/semantics.md defines what ``+ - * / %`` and conversions mean on each
data type; core_ir/datasem.py implements it for the interpreter and
codegen_c/arith.py prints the same computation in C. Every case here runs
the C under ASan/UBSan (the standalone driver, so a trap fails the test
instead of killing pytest) and compares with interpret() and with the
value the rule gives.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (ExoTypeError, f16, f32, f64, i8, i16, i32, proc, seq,
                    size, ui8, ui16)

from cg_helpers import sanitized_run

I32_MIN, I32_MAX = -2**31, 2**31 - 1


def _interpret(p, args):
    out = {k: (v.copy() if isinstance(v, np.ndarray) else v)
           for k, v in args.items()}
    p.interpret(**out)
    return out


def _both(tmp_path, p, args):
    """{written buffer: values} from interpret(), checked equal to C's."""
    want = _interpret(p, args)
    got = sanitized_run(tmp_path, p, args)
    for name, vals in got.items():
        np.testing.assert_array_equal(
            np.array(vals, dtype=want[name].dtype), want[name].ravel(),
            err_msg=f"C and interpret() disagree on {name}")
    return want


# -- division by a literal (integer context) ---------------------------------
@proc
def div_literal(n: size, A: i8[n], E: i8[n], F: i8[n], G: i8[n], H: i8[n]):
    for i in seq(0, n):
        E[i] = A[i] / 2 * 2
        F[i] = A[i] / 2.0 * 2.0
        G[i] = A[i] % 4
        H[i] = A[i] * 2.5


def test_integer_division_by_a_literal(tmp_path):
    """A literal takes the type of the other operand: ``A[i] / 2`` and
    ``A[i] / 2.0`` are both integer division, truncating toward zero; a
    non-integral literal is truncated (2.5 -> 2)."""
    A = np.array([7, -7, 127, -128, 1, 0, -1, 5], np.int8)
    z = np.zeros(8, np.int8)
    r = _both(tmp_path, div_literal, dict(n=8, A=A, E=z, F=z, G=z, H=z))
    a = A.astype(np.int64)
    q = np.trunc(a / 2).astype(np.int64)
    assert r["E"].tolist() == (q * 2).tolist()
    assert r["E"][0] == 6 and r["E"][1] == -6
    assert r["F"].tolist() == r["E"].tolist()
    assert r["G"].tolist() == np.fmod(a, 4).tolist()
    assert r["H"].tolist() == (((a * 2 + 128) % 256) - 128).tolist()


# -- integer overflow wraps around ----------------------------------------------
@proc
def overflow(n: size, a: i32[n], b: i32[n], s: i32[n], p: i32[n],
             d: i32[n], g: i32[n], u: ui16[n], w: ui16[n], c: i8[n],
             x: i8[n]):
    for i in seq(0, n):
        s[i] = a[i] + b[i]
        p[i] = a[i] * b[i]
        d[i] = a[i] - b[i]
        g[i] = -a[i]
        w[i] = u[i] * u[i]
        x[i] = c[i] + c[i]
        s[i] += 2147483647


def test_integer_overflow_wraps(tmp_path):
    a = np.array([I32_MAX, I32_MIN, 65536, -1, 123456789, 0], np.int32)
    b = np.array([1, -1, 65536, I32_MIN, 987654321, I32_MIN], np.int32)
    u = np.array([65535, 65535, 256, 0, 40000, 1], np.uint16)
    c = np.array([127, -128, 100, -100, 64, 0], np.int8)
    z32, z16, z8 = (np.zeros(6, t) for t in (np.int32, np.uint16, np.int8))
    r = _both(tmp_path, overflow, dict(n=6, a=a, b=b, s=z32, p=z32, d=z32,
                                       g=z32, u=u, w=z16, c=c, x=z8))
    A, B = a.astype(np.int64), b.astype(np.int64)

    def wrap32(v):
        return ((v + 2**31) % 2**32) - 2**31
    assert r["s"].tolist() == wrap32(wrap32(A + B) + I32_MAX).tolist()
    assert r["p"].tolist() == wrap32(A * B).tolist()
    assert r["d"].tolist() == wrap32(A - B).tolist()
    assert r["g"].tolist() == wrap32(-A).tolist()
    assert r["w"].tolist() == ((u.astype(np.int64) ** 2) % 2**16).tolist()
    assert r["x"].tolist() == (((c.astype(np.int64) * 2 + 128) % 256)
                               - 128).tolist()


# -- float -> integer conversions saturate ----------------------------------
@proc
def to_ints(n: size, f: f32[n], d: f64[n], h: f16[n], a: i8[n], b: ui8[n],
            c: i16[n], e: ui16[n], g: i32[n], k: i32[n], m: ui8[n]):
    for i in seq(0, n):
        a[i] = f[i]
        b[i] = f[i]
        c[i] = f[i]
        e[i] = f[i]
        g[i] = f[i]
        k[i] = d[i]
        m[i] = h[i]


def test_float_to_int_truncates_and_saturates(tmp_path):
    inf, nan = float("inf"), float("nan")
    vals = [300.7, -300.7, 2.9, -2.9, nan, inf, -inf, 3e9, -3e9, 0.5,
            -0.5, 65535.9, 127.99, -128.99, 2147483520.0, -1.0]
    f = np.array(vals, np.float32)
    d = np.array(vals, np.float64)
    with np.errstate(over="ignore"):
        h = np.array(vals, np.float16)
    n = len(vals)
    outs = {k: np.zeros(n, t) for k, t in
            (("a", np.int8), ("b", np.uint8), ("c", np.int16),
             ("e", np.uint16), ("g", np.int32), ("k", np.int32),
             ("m", np.uint8))}
    r = _both(tmp_path, to_ints, dict(n=n, f=f, d=d, h=h, **outs))

    def sat(x, lo, hi):
        if np.isnan(x):
            return 0
        return int(min(max(np.trunc(x), lo), hi))
    for k, src, (lo, hi) in (("a", f, (-128, 127)), ("b", f, (0, 255)),
                             ("c", f, (-2**15, 2**15 - 1)),
                             ("e", f, (0, 2**16 - 1)),
                             ("g", f, (I32_MIN, I32_MAX)),
                             ("k", d, (I32_MIN, I32_MAX)),
                             ("m", h, (0, 255))):
        assert r[k].tolist() == [sat(float(x), lo, hi) for x in src], k


# -- division by zero and INT32_MIN / -1 never trap ---------------------------
@proc
def divs(x: i32[6], y: i32[6], q: i32[6], m: i32[6], s: i8[6], t: i8[6],
         u: ui8[6], v: ui8[6]):
    for i in seq(0, 6):
        q[i] = x[i] / y[i]
        m[i] = x[i] % y[i]
    for i in seq(0, 6):
        t[i] = s[i] / s[5 - i]
        v[i] = u[i] % u[5 - i]
    x[0] = x[1] / x[2]


def test_division_by_zero_and_min_by_minus_one(tmp_path):
    x = np.array([5, 7, 0, I32_MIN, I32_MIN, -9], np.int32)
    y = np.array([0, 0, 3, -1, 1, 4], np.int32)
    s = np.array([-128, 0, 5, -1, 3, -1], np.int8)
    u = np.array([200, 0, 7, 1, 0, 3], np.uint8)
    z32, z8, zu = np.zeros(6, np.int32), np.zeros(6, np.int8), \
        np.zeros(6, np.uint8)
    r = _both(tmp_path, divs, dict(x=x, y=y, q=z32, m=z32, s=s, t=z8, u=u,
                                   v=zu))
    # x / 0 == 0, x % 0 == x, MIN / -1 == MIN, MIN % -1 == 0; truncation
    assert r["q"].tolist() == [0, 0, 0, I32_MIN, I32_MIN, -2]
    assert r["m"].tolist() == [5, 7, 0, 0, 0, -1]
    # i8: -128 / -1 is 128 in 32 bits, stored into i8 it wraps to -128
    assert r["t"].tolist() == [-128, 0, -5, 0, 0, 0]
    assert r["v"].tolist() == [2, 0, 0, 1, 0, 3]
    assert r["x"][0] == 0          # x[1] / x[2] with x[2] == 0


# -- float '%' is fmod; float literals; reductions ---------------------------
@proc
def float_ops(n: size, a: f32[n], b: f32[n], m: f32[n], c: f64[n],
              h: f16[n], r: i8[n], k: i32[n]):
    for i in seq(0, n):
        m[i] = a[i] % b[i]
        c[i] = a[i] * 0.1
        h[i] = a[i] * 0.1
        r[i] += a[i]
        k[i] += 2.5


def test_float_modulo_literals_and_reductions(tmp_path):
    a = np.array([5.5, -5.5, 1e30, 3.0, -0.0, 7.25], np.float32)
    b = np.array([2.0, 2.0, 3.0, 0.0, 1.0, -2.0], np.float32)
    r0 = np.array([100, -100, 0, 127, 0, 1], np.int8)
    k0 = np.array([1, -1, I32_MAX, 0, 5, -3], np.int32)
    res = _both(tmp_path, float_ops, dict(
        n=6, a=a, b=b, m=np.zeros(6, np.float32), c=np.zeros(6),
        h=np.zeros(6, np.float16), r=r0, k=k0))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(res["m"], np.fmod(a, b))
    # 0.1 is a float32 literal here: the product is rounded to float32
    np.testing.assert_array_equal(res["c"], (a * np.float32(0.1)
                                             ).astype(np.float64))
    with np.errstate(over="ignore"):
        h = (a * np.float32(0.1)).astype(np.float16)
    np.testing.assert_array_equal(res["h"], h)
    # i8 += f32: (float)x + a, then truncated and saturated into i8
    want_r = [int(min(max(np.trunc(np.float32(x) + y), -128), 127))
              for x, y in zip(r0, a)]
    assert res["r"].tolist() == want_r
    # i32 += 2.5: the literal is an i32 value (2), the sum wraps
    assert res["k"].tolist() == [3, 1, I32_MIN + 1, 2, 7, -1]


def test_float_literal_spelled_exactly():
    """A float literal is printed as the shortest decimal of its value in
    the evaluation type, so C reads exactly the value interpret() uses."""
    @proc
    def lits(n: size, a: f32[n], d: f64[n]):
        for i in seq(0, n):
            a[i] = a[i] * 0.1 + 16777217.0
            d[i] = d[i] * 0.1
    text = lits.c_code_str()
    assert "a[i] * 0.1f + 16777216.0f" in text
    assert "d[i] * 0.1;" in text


def test_mixed_integer_widths_agree_in_c():
    """Integer widths may mix in one expression: both sides compute in
    32-bit integers, wrapping without undefined behaviour."""
    @proc
    def mixed(n: size, a: i8[n], b: i32[n]):
        for i in seq(0, n):
            b[i] = a[i] + b[i]
    a, b = np.array([100, -3], np.int8), np.array([I32_MAX, 7], np.int32)
    b_c = b.copy()
    mixed.interpret(2, a, b)
    assert b[0] == I32_MIN + 99 and b[1] == 4
    mixed.compile()(2, a, b_c)
    assert np.array_equal(b, b_c)


# -- built-in externs on integers ---------------------------------------------
@proc
def int_externs(n: size, a: i32[n], s: i32[n], f: i32[n], e: i32[n],
                m: i8[n], r: i16[n], q: ui8[n]):
    for i in seq(0, n):
        s[i] = sqrt(a[i])
        f[i] = fabs(a[i])
        e[i] = exp(a[i])
        m[i] = fmax(a[i], 3)
        r[i] = relu(a[i] - 5)
        q[i] = select(a[i], 0, a[i], 2 * a[i])


def test_builtin_externs_on_integers(tmp_path):
    """Floating-point functions of integers compute in double and come back
    by the float -> integer rule (saturating; NaN -> 0)."""
    a = np.array([16, -4, I32_MIN, I32_MAX, 100, 0, -1, 300], np.int32)
    z = {k: np.zeros(8, t) for k, t in
         (("s", np.int32), ("f", np.int32), ("e", np.int32), ("m", np.int8),
          ("r", np.int16), ("q", np.uint8))}
    r = _both(tmp_path, int_externs, dict(n=8, a=a, **z))
    assert r["s"].tolist() == [4, 0, 0, 46340, 10, 0, 0, 17]
    assert r["f"][2] == I32_MAX                  # |INT32_MIN| saturates
    assert r["e"].tolist()[4] == I32_MAX and r["e"][0] == 8886110
    assert r["m"].tolist() == [16, 3, 3, -1, 100, 3, 3, 44]


# -- built-in externs on floating-point special values ------------------------
@proc
def float_externs(n: size, a: f32[n], b: f32[n], r: f32[n], lo: f32[n],
                  hi: f32[n], ab: f32[n]):
    for i in seq(0, n):
        r[i] = relu(a[i])
        lo[i] = fmin(a[i], b[i])
        hi[i] = fmax(a[i], b[i])
        ab[i] = fabs(a[i])


def test_float_externs_agree_bit_for_bit_on_special_values(tmp_path):
    """relu of -0.0 or NaN is +0.0 (C's ``x > 0 ? x : 0``); fmin/fmax ignore
    a NaN argument on either side; interpret() and C agree bit for bit."""
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    a = np.array([-0.0, nan, 2.5, -3.0, inf, -inf, nan, 1.0], np.float32)
    b = np.array([1.0, 4.0, nan, -2.0, 0.0, 7.0, nan, -0.5], np.float32)
    outs = {k: np.zeros(8, np.float32) for k in ("r", "lo", "hi", "ab")}
    want = _interpret(float_externs, dict(n=8, a=a, b=b, **outs))
    got = sanitized_run(tmp_path, float_externs, dict(n=8, a=a, b=b, **outs))
    for name, vals in got.items():
        np.testing.assert_array_equal(
            np.array(vals, np.float32).view(np.uint32),
            want[name].ravel().view(np.uint32), err_msg=name)
    assert want["r"].view(np.uint32)[:2].tolist() == [0, 0]   # +0.0, +0.0
    assert want["lo"].tolist()[:3] == [-0.0, 4.0, 2.5]
    assert want["hi"].tolist()[1:4] == [4.0, 2.5, -2.0]


# -- fmin/fmax: NaN and signed zeros, every float type ------------------------
@proc
def minmax16(n: size, a: f16[n], b: f16[n], lo: f16[n], hi: f16[n]):
    for i in seq(0, n):
        lo[i] = fmin(a[i], b[i])
        hi[i] = fmax(a[i], b[i])


@proc
def minmax32(n: size, a: f32[n], b: f32[n], lo: f32[n], hi: f32[n]):
    for i in seq(0, n):
        lo[i] = fmin(a[i], b[i])
        hi[i] = fmax(a[i], b[i])


@proc
def minmax64(n: size, a: f64[n], b: f64[n], lo: f64[n], hi: f64[n]):
    for i in seq(0, n):
        lo[i] = fmin(a[i], b[i])
        hi[i] = fmax(a[i], b[i])


def _bits(x):
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.itemsize])


@pytest.mark.parametrize("p,dt", [(minmax16, np.float16),
                                  (minmax32, np.float32),
                                  (minmax64, np.float64)])
def test_fmin_fmax_ignore_nan_and_order_zeros_in_every_float_type(p, dt):
    """A NaN on either side is ignored (f16 included: a plain ``a < b ? a :
    b`` returned the NaN when it was second), and fmin(+-0, -+0) is -0,
    fmax +0, in both orders (C's fminf may return either zero)."""
    nan = np.nan
    a = np.array([-0.0, 0.0, nan, 1.0, -0.0, 0.0, nan, 2.0], dt)
    b = np.array([0.0, -0.0, 1.0, nan, -0.0, 0.0, nan, -3.0], dt)
    want = {k: np.zeros(8, dt) for k in ("lo", "hi")}
    got = {k: np.zeros(8, dt) for k in ("lo", "hi")}
    p.interpret(n=8, a=a, b=b, **want)
    p.compile()(n=8, a=a, b=b, **got)
    for k in want:
        np.testing.assert_array_equal(_bits(got[k]), _bits(want[k]),
                                      err_msg=k)
    lo, hi = want["lo"], want["hi"]
    assert np.signbit(lo[:2]).all() and not np.signbit(hi[:2]).any()
    assert lo[2:4].tolist() == [1.0, 1.0] and hi[2:4].tolist() == [1.0, 1.0]
    assert np.isnan(lo[6]) and np.isnan(hi[6])
    assert (lo[7], hi[7]) == (-3.0, 2.0)


def test_fmin_fmax_signed_zeros_under_the_sanitizers(tmp_path):
    a = np.array([-0.0, 0.0, -0.0, 0.0], np.float32)
    b = np.array([0.0, -0.0, -0.0, 0.0], np.float32)
    z = np.zeros(4, np.float32)
    r = _both(tmp_path, minmax32, dict(n=4, a=a, b=b, lo=z, hi=z))
    assert np.signbit(r["lo"]).tolist() == [True, True, True, False]
    assert np.signbit(r["hi"]).tolist() == [False, False, True, False]


# -- sin, cos, exp: computed in double, rounded once ---------------------------
@proc
def trig16(n: size, x: f16[n], s: f16[n], c: f16[n], e: f16[n]):
    for i in seq(0, n):
        s[i] = sin(x[i])
        c[i] = cos(x[i])
        e[i] = exp(x[i])


@proc
def trig32(n: size, x: f32[n], s: f32[n], c: f32[n], e: f32[n]):
    for i in seq(0, n):
        s[i] = sin(x[i])
        c[i] = cos(x[i])
        e[i] = exp(x[i])


def test_sin_cos_exp_agree_bit_for_bit_with_c():
    """numpy's float32/float16 sin, cos, exp are not correctly rounded (1 in
    6 f32 sines and 1 in 3 exps came out one ulp from C's); both sides now
    compute C's double function and round once, so they agree on random
    values, every f16 value, and infinities, NaN and overflow."""
    rng = np.random.default_rng(7)
    special = [np.inf, -np.inf, np.nan, 100.0, -100.0, 0.0, -0.0, 1e-30]
    x32 = np.concatenate([rng.uniform(-80, 80, 4000), special])
    x16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    for p, x in ((trig32, x32.astype(np.float32)), (trig16, x16)):
        n = len(x)
        want = {k: np.zeros(n, x.dtype) for k in "sce"}
        got = {k: np.zeros(n, x.dtype) for k in "sce"}
        with np.errstate(over="ignore", invalid="ignore"):
            p.interpret(n=n, x=x, **want)
        p.compile()(n=n, x=x, **got)
        for k in want:
            # a NaN's sign and payload are not specified (C's sin(inf) is
            # the CPU's default NaN: negative on x86)
            nan = np.isnan(want[k])
            assert np.array_equal(np.isnan(got[k]), nan), f"{p.name()} {k}"
            np.testing.assert_array_equal(_bits(got[k][~nan]),
                                          _bits(want[k][~nan]),
                                          err_msg=f"{p.name()} {k}")
    assert np.isinf(want["e"]).any() and np.isnan(want["s"]).any()
