"""Literal-only expressions moved into a location of another type.

A literal takes the type of its context (docs/semantics.md): ``x: i32; x =
2.5 + 2.5`` stores 4 (2 + 2 in ``i32``), while ``y[0] = 2.5 + 2.5`` into an
``f32`` stores 5. A rewrite that moves such an expression between a location
and the places that read it (``inline_assign``, ``inline_loop``,
``bind_expr``, ``bind_config``, ``merge_writes``) must show that the value is
the same, bit for bit, in both contexts (``_precision.holder_problem``), or
refuse. Each case: the refusal that used to be an accepted change of
results, and an accepted neighbour checked for printed text and equivalence
(interpreter and C).
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (SchedulingError, config, f16, f32, f64, i8, i32, proc,
                    seq, size)
from exo_hl.core_ir import datasem as D
from exo_hl.core_ir.nodes import IR


def _bits(a):
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _run(p, **args):
    out = {k: (v.copy() if isinstance(v, np.ndarray) else v)
           for k, v in args.items()}
    p.interpret(**out)
    return out


def _same_bits(p, q, **args):
    a, b = _run(p, **args), _run(q, **args)
    for k, v in a.items():
        if isinstance(v, np.ndarray):
            assert np.array_equal(_bits(v), _bits(b[k])), (k, v, b[k])


# ---------------------------------------------------------------------------
# the evaluation the checks rely on

def test_const_eval_takes_the_context_type():
    c = IR.Const
    e = IR.BinOp("+", c(2.5, type=IR.Num), c(2.5, type=IR.Num), type=IR.Num)
    assert D.const_eval(e, IR.I32) == 4
    assert float(D.const_eval(e, IR.F32)) == 5.0
    big = IR.BinOp("-", c(16777217.0, type=IR.Num), c(1.0, type=IR.Num),
                   type=IR.Num)
    assert float(D.const_eval(big, IR.F32)) == 16777215.0
    assert float(D.const_eval(big, IR.F64)) == 16777216.0
    z = D.const_eval(c(-0.0, type=IR.Num), IR.F16)
    assert not D.same_value(z, D.const_eval(c(0.0, type=IR.Num), IR.F16))
    assert D.same_value(D.const_eval(c(-0.0, type=IR.Num), IR.I32), 0)


# ---------------------------------------------------------------------------
# inline_assign

@proc
def i32_into_f32(y: f32[1]):
    x: i32
    x = 2.5 + 2.5
    y[0] = x


@proc
def f32_into_f64(y: f64[1]):
    x: f32
    x = 16777217.0 - 1.0
    y[0] = x


@proc
def negzero_into_i32(y: f32[1]):
    x: i32
    x = -0.0
    y[0] = x


def test_inline_assign_refuses_literal_computed_in_another_type():
    y = np.zeros(1, np.float32)
    assert _run(i32_into_f32, y=y)["y"][0] == 4.0    # 2 + 2 in i32
    with pytest.raises(SchedulingError,
                       match=r"'2.5 \+ 2.5' is 5.0 where it is used .*"
                             r"an i32 location holds 4"):
        i32_into_f32.inline_assign("x = _")
    with pytest.raises(SchedulingError, match="holds 16777215.0"):
        f32_into_f64.inline_assign("x = _")


def test_inline_assign_refuses_signed_zero_lost_in_integer():
    # x = -0.0 stores the integer 0: y reads +0.0; inlined it would be -0.0
    with pytest.raises(SchedulingError, match="-0.0 where it is used"):
        negzero_into_i32.inline_assign("x = _")


def test_inline_assign_accepts_literal_exact_in_both(equiv):
    @proc
    def exact(n: size, y: f32[n], z: f64[n]):
        for i in seq(0, n):
            x: i32
            x = 2.0 + 3.0
            y[i] = x
            z[i] = x
    q = exact.inline_assign("x = _")
    assert str(q).rstrip().splitlines()[-3:] == [
        "        x: i32 @ DRAM",
        "        y[i] = 2.0 + 3.0", "        z[i] = 2.0 + 3.0"]
    equiv(exact, q, [{"n": 3}])
    _same_bits(exact, q, n=2, y=np.zeros(2, np.float32),
               z=np.zeros(2, np.float64))


def test_inline_assign_refuses_context_change_of_other_literals():
    # y = x + 0.1 computes in f32 (x's type); inlined, everything is a
    # literal and computes in f64: 0.1 would change
    @proc
    def ctx(y: f64[1]):
        x: f32
        x = 2.0
        y[0] = x + 0.1
    with pytest.raises(SchedulingError, match=r"'2.0 \+ 0.1' is computed in "
                                              r"f64 .* in f32 with a f32"):
        ctx.inline_assign("x = _")

    # z = x * 0.5 with x: i32 is integer arithmetic (0.5 is 0): 0, where
    # the inlined (2.0 + 3.0) * 0.5 would be 2.5
    @proc
    def half(z: f64[1]):
        x: i32
        x = 2.0 + 3.0
        z[0] = x * 0.5
    assert _run(half, z=np.ones(1))["z"][0] == 0.0
    with pytest.raises(SchedulingError, match="in i32 with an i32"):
        half.inline_assign("x = _")


# ---------------------------------------------------------------------------
# bind_expr

@proc
def two_stores(y: i32[1], z: f32[1]):
    y[0] = 2.5 + 2.5
    z[0] = 2.5 + 2.5


def test_bind_expr_cse_refuses_one_literal_for_two_types():
    with pytest.raises(SchedulingError, match="no precision can hold"):
        two_stores.bind_expr("2.5 + 2.5", "t", cse=True)


def test_bind_expr_picks_the_type_the_literal_is_computed_in(equiv):
    q = two_stores.bind_expr("2.5 + 2.5", "t")
    assert str(q).rstrip().splitlines()[1:4] == [
        "    t: i32 @ DRAM", "    t = 2.5 + 2.5", "    y[0] = t"]
    assert _run(q, y=np.zeros(1, np.int32),
                z=np.zeros(1, np.float32))["y"][0] == 4
    equiv(two_stores, q, [{}])

    @proc
    def wide(n: size, x: f64[n], y: f64[n]):
        for i in seq(0, n):
            y[i] = (0.1 + 0.2) * x[i]
    q = wide.bind_expr("0.1 + 0.2", "b")
    assert "b: f64" in str(q)         # f32 would round 0.1 + 0.2 first
    equiv(wide, q, [{"n": 3}])


# ---------------------------------------------------------------------------
# inline_loop

@proc
def loop_i32(y: f32[4]):
    t: i32[4]
    for i in seq(0, 4):
        t[i] = 2.5 + 2.5
    for j in seq(0, 4):
        y[j] = t[j]


def test_inline_loop_refuses_literal_computed_in_another_type():
    assert list(_run(loop_i32, y=np.zeros(4, np.float32))["y"]) == [4.0] * 4
    with pytest.raises(SchedulingError, match="an i32 location holds 4"):
        loop_i32.inline_loop("for i in _: _")


def test_inline_loop_accepts_exact_literal(equiv):
    @proc
    def loop_f16(y: f32[4]):
        t: f16[4]
        for i in seq(0, 4):
            t[i] = 0.5 + 0.25
        for j in seq(0, 4):
            y[j] = t[j]
    q = loop_f16.inline_loop("for i in _: _")
    assert str(q).rstrip().splitlines()[-1] == "        y[j] = 0.5 + 0.25"
    equiv(loop_f16, q, [{}])


# ---------------------------------------------------------------------------
# bind_config

@config
class LitCfg:
    v: f32
    n: i32


@proc
def into_i32(z: i32[1]):
    z[0] = 2.5 + 2.5


def test_bind_config_refuses_literal_computed_in_another_type(equiv):
    with pytest.raises(SchedulingError, match="f32 location holds 5.0"):
        into_i32.bind_config("2.5 + 2.5", LitCfg, "v")
    q = into_i32.bind_config("2.5 + 2.5", LitCfg, "n")
    assert str(q).rstrip().splitlines()[1:] == [
        "    LitCfg.n = 2.5 + 2.5", "    z[0] = LitCfg.n"]
    assert _run(q, z=np.zeros(1, np.int32))["z"][0] == 4
    equiv(into_i32, q, [{}])


# ---------------------------------------------------------------------------
# merge_writes: x = a; x += b is the holder rule for a

def test_merge_writes_judges_the_first_value_by_the_holder_rule(equiv):
    @proc
    def lit(x: i8[1], a: i8[1]):
        x[0] = 200.5
        x[0] += a[0]
    # x = 127 (saturated), then 127 + a[0] wraps; merged, 200 + a[0] would
    with pytest.raises(SchedulingError, match="round differently"):
        lit.merge_writes(("x[_] = _", "x[_] += _"))

    @proc
    def fits(n: size, a: i8[n], x: i8[n]):
        for i in seq(0, n):
            x[i] = 100.0
            x[i] += a[i]
    q = fits.merge_writes(("x[_] = _", "x[_] += _"))
    assert str(q).rstrip().splitlines()[-1] == "        x[i] = 100.0 + a[i]"
    equiv(fits, q, [{"n": 4}])


# ---------------------------------------------------------------------------
# a negated literal stays a negation (found by the literal fuzzer: inlining
# t = -128.5 into -t printed '--128.5', which parsed back as 128.5)

def test_negation_of_a_negative_literal_is_kept(equiv, assert_roundtrip):
    @proc
    def neg(y: i8[2]):
        t: i32
        t = -128.5
        y[0] = t
        y[1] = -t
    q = neg.inline_assign("t = _")
    assert str(q).rstrip().splitlines()[-1] == "    y[1] = --128.5"
    assert_roundtrip(q)
    equiv(neg, q, [{}])

    @proc
    def sat(y: i32[2]):
        y[0] = -(-2147483648.5)    # -2147483648 (saturated), negated: wraps
        y[1] = -(-(0.0))           # -(-0.0): +0.0
    out = _run(sat, y=np.zeros(2, np.int32))["y"]
    assert list(out) == [-2147483648, 0]
    assert "--2147483648.5" in str(sat)
    assert_roundtrip(sat)
    equiv(sat, sat, [{}])
