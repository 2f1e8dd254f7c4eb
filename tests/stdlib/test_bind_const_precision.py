"""``bind_const``'s scalar precision is proven to hold the value.

``bind_const(p, expr, name, precision='f32')`` bound ``expr`` with
``bind_expr`` (which proves its type holds the value) and then changed the
scalar to ``precision`` with ``set_precision``, a change of meaning: an
``f32`` scalar for ``0.1`` stored into an ``f64`` stored 0.10000000149...,
``300`` stored into an ``i8`` (44, it wraps) became 127 (an ``f32``
saturates into an ``i8``), ``16777217`` into an ``i32`` became 16777216;
the C compiled and ran (audit, session 12). The precision is now asked of
``bind_expr`` (``precision=``), which refuses a type that does not hold
the value as the statements use it. ``vectorize``'s registers are bound
the same way (an ``f32`` register for an ``f64`` or integer operand is
refused instead of changing it).
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (SchedulingError, bf16, f16, f32, f64, i8, i32, proc, seq,
                    size, ui8)
from exo_hl.stdlib import bind_const


@proc
def store_f64(n: size, y: f64[n]):
    for i in seq(0, n):
        y[i] = 0.1


@proc
def store_i8(n: size, y: i8[n]):
    for i in seq(0, n):
        y[i] = 300


@proc
def store_i32(n: size, y: i32[n]):
    for i in seq(0, n):
        y[i] = 16777217


@proc
def scale_f16(n: size, x: f16[n], y: f16[n]):
    for i in seq(0, n):
        y[i] = x[i] * 0.1


@proc
def scale_i32(n: size, x: i32[n], y: i32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 3


@pytest.mark.parametrize("p, lit", [
    (store_f64, "0.1"), (store_i8, "300"), (store_i32, "16777217"),
    (scale_f16, "0.1"), (scale_i32, "3")])
def test_bind_const_refuses_a_precision_that_changes_the_value(p, lit):
    with pytest.raises(SchedulingError, match="a f32 scalar cannot hold"):
        bind_const(p, lit, "c")


def test_bind_const_in_a_precision_that_holds_the_value(equiv):
    q = bind_const(store_f64, "0.1", "c", precision="f64")
    assert str(q).splitlines()[1:3] == ["    c: f64 @ DRAM", "    c = 0.1"]
    assert q.is_eq(store_f64)
    equiv(store_f64, q, [{"n": 1}, {"n": 3}])
    q = bind_const(scale_i32, "3", "c", precision="i32")
    assert q.is_eq(scale_i32)
    equiv(scale_i32, q, [{"n": 4}])
    # 300 stored into an i8 is 44: an i16 scalar holding 300 wraps the same
    q = bind_const(store_i8, "300", "c", precision="i16")
    equiv(store_i8, q, [{"n": 2}])


def test_bind_expr_precision_argument(equiv):
    # an f16 value stored whole into an f32 temporary, then into f16: the
    # same number (datasem.holds_exactly; refused before session 15)
    q = scale_f16.bind_expr("x[i] * 0.1", "t", precision=f32)
    assert "t: f32" in str(q)
    equiv(scale_f16, q, [{"n": 3}])
    # bf16 does not hold every f16 value; an f32 operand of the product
    # would compute it in f32
    with pytest.raises(SchedulingError, match="cannot hold"):
        scale_f16.bind_expr("x[i] * 0.1", "t", precision=bf16)
    with pytest.raises(SchedulingError, match="cannot hold"):
        scale_f16.bind_expr("x[i]", "t", precision=f32)
    with pytest.raises(SchedulingError, match="expected a data type"):
        scale_f16.bind_expr("x[i]", "t", precision="index")
    q = scale_f16.bind_expr("x[i]", "t", precision=f16)
    assert "t: f16" in str(q)
    equiv(scale_f16, q, [{"n": 3}])


# -- a small generator: every accepted binding keeps every value ----------
@proc
def lits_f32(y: f32[8], x: f32[8]):
    y[0] = 0.1
    y[1] = 300.0
    y[2] = 16777217.0
    y[3] = -0.0
    y[4] = x[4] * 2.5
    y[5] = x[5] + 65504.0
    y[6] = 1e30
    y[7] = x[7] * -3.0


def _lits(t):
    """``lits_f32`` with both buffers of element type ``t``: the same
    statements, each literal stored into a ``t`` (``set_precision`` of the
    parameters prints the procedure one would write for ``t``)."""
    return lits_f32.set_precision("y", t).set_precision("x", t).rename(
        f"lits_{t}")


LITS = [lits_f32] + [_lits(t) for t in ("f64", "f16", "i8", "ui8", "i32")]


def _outputs(p, x):
    y = np.zeros(8, dtype=x.dtype)
    xx = x.copy()
    p.interpret(y, xx)
    return y


@pytest.mark.parametrize("p", LITS, ids=lambda p: p.name())
def test_bind_const_generator(p):
    """Each literal of each statement bound in each precision: refused, or
    every stored value is the same (interpreter; compiled C for the
    accepted ones of one precision per procedure), bit for bit."""
    from exo_hl.core_ir import types as T
    dt = T.NUMPY_DTYPES[p.ir().args[0].type.type]
    rng = np.random.default_rng(0)
    x = rng.integers(-100, 100, size=8).astype(dt)
    ref = _outputs(p, x)
    accepted = 0
    for k in range(8):
        for prec in ("f32", "f64", "f16", "i8", "i16", "i32"):
            s = p.body()[k]
            rhs = s.rhs()
            lit = rhs.rhs() if k in (4, 5, 7) else rhs
            try:
                q = bind_const(p, lit, "c", precision=prec)
            except SchedulingError:
                continue
            accepted += 1
            got = _outputs(q, x)
            assert got.tobytes() == ref.tobytes(), (k, prec, str(q))
    assert accepted >= 8          # at least each literal's own type


# -- bind_expr(precision=...) on computed values ---------------------------
@proc
def int_exprs(a: i8[4], b: ui8[4], c: i32[4], y8: i8[8], y32: i32[8],
              yf: f32[8]):
    y8[0] = a[0] * a[1] + b[0]
    y32[0] = a[0] * a[1] + b[0]
    yf[0] = a[0] * a[1] + b[0]
    y32[1] = (c[0] + c[1]) / 3
    y8[1] = (c[0] + c[1]) * 2
    yf[1] = (a[2] - b[3]) / 2.0
    y32[2] = c[3] * c[3] % 7


@proc
def float_exprs(x: f32[4], h: f16[4], y: f32[8], z: f16[8], w: i8[8]):
    y[0] = x[0] * x[1] + x[2]
    z[0] = h[0] * h[1] + h[2]
    w[0] = x[0] * x[1] + x[2]
    y[1] = (x[3] + 1.0) * 2.0


def _extremes(p, seed):
    from exo_hl.core_ir import types as T
    rng = np.random.default_rng(seed)
    out = []
    for fa in p.ir().args:
        dt = T.NUMPY_DTYPES[fa.type.type]
        n = fa.type.hi[0].val
        if np.issubdtype(dt, np.integer):
            info = np.iinfo(dt)
            v = rng.choice(np.array([info.min, info.max, -1, 0, 1, 7, 100]),
                           size=n)
        else:
            v = rng.choice(np.array([np.nan, -0.0, np.inf, 3.0, -2.5,
                                     1e30, 65504.0]), size=n)
        with np.errstate(over="ignore"):
            out.append(v.astype(dt))
    return out


def _same(a, b):
    if np.issubdtype(a.dtype, np.floating):
        na, nb = np.isnan(a), np.isnan(b)
        return bool((na == nb).all()) and a[~na].tobytes() == b[~nb].tobytes()
    return a.tobytes() == b.tobytes()


@pytest.mark.parametrize("p", [int_exprs, float_exprs])
def test_bind_expr_precision_generator(p):
    """Each statement's right-hand side and its operands bound in each
    precision: refused, or every output the same (interpreter, extreme
    inputs); the accepted procedures compile (no mixed precisions)."""
    accepted = []
    for k, s in enumerate(p.body()):
        r = s.rhs()
        subs = [r, r.lhs(), r.rhs()]
        for e in subs:
            for prec in ("i8", "ui8", "i16", "i32", "f16", "f32", "f64",
                         "bf16"):
                try:
                    q = p.bind_expr(e, "t", precision=prec)
                except SchedulingError:
                    continue
                accepted.append(q)
                for seed in range(3):
                    a, b = _extremes(p, seed), _extremes(p, seed)
                    p.interpret(*a)
                    q.interpret(*b)
                    for x, y in zip(a, b):
                        assert _same(x, y), (k, prec, str(q))
    assert len(accepted) >= 2 * len(p.body())
    for q in accepted[::7]:
        q.compile()


def test_bind_expr_precision_refuses_mixing():
    """An ``i8`` holding ``2.0`` gives the same values, but C computes one
    precision per expression."""
    with pytest.raises(SchedulingError, match="mix precisions"):
        float_exprs.bind_expr(float_exprs.body()[3].rhs().rhs(), "t",
                              precision="i8")


@proc
def axpy_i32(n: size, x: i32[n], y: i32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 3 + y[i]


@proc
def axpy_f64(n: size, x: f64[n], y: f64[n]):
    for i in seq(0, n):
        y[i] = x[i] * 0.5 + y[i]


@pytest.mark.parametrize("p", [axpy_i32, axpy_f64])
def test_vectorize_registers_keep_the_operands_value(p):
    """``vectorize``'s f32 registers were bound in the operand's type and
    then changed to f32 (``set_precision``); an instruction converting on
    load would have matched the changed loop. Now the binding itself
    proves the register holds the value, and refuses."""
    from exo_hl.hw_libs.avx2 import AVX2, INSTRS
    from exo_hl.stdlib import vectorize
    with pytest.raises(SchedulingError,
                       match="cannot be put in an f32 register"):
        vectorize(p, 'i', 8, AVX2, INSTRS, tail='cut')
