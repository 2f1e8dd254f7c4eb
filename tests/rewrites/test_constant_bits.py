"""Constants are identified by their bits (docs/semantics.md).

``0.0`` and ``-0.0`` are two values (``1.0 / x`` tells them apart: +inf and
-inf), a NaN is itself: node equality, unification (``replace``), the
equal-values rule (``fission_after``), patterns and the literal checks of
rewrites compare constants by ``constant_identity``, never by Python's
``==`` (which takes ``-0.0`` for ``0.0`` and a NaN for nothing).
"""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from exo_hl import SchedulingError, f32, f64, instr, proc, seq
from exo_hl.core_ir import nodes as N
from exo_hl.core_ir.nodes import IR


def _bits(a):
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _run(p, **args):
    out = {k: (v.copy() if isinstance(v, np.ndarray) else v)
           for k, v in args.items()}
    p.interpret(**out)
    return out


def test_const_nodes_compare_by_bits():
    def c(v):
        return IR.Const(v, type=IR.Num)
    assert c(0.0) != c(-0.0) and hash(c(0.0)) != hash(c(-0.0))
    assert c(-0.0) == c(-0.0)
    assert c(0.0) == IR.Const(0, type=IR.Num)      # the number 0, two spellings
    assert c(2.0) == IR.Const(2, type=IR.Num)
    nan = float("nan")
    assert c(nan) == c(float("nan"))                # a NaN is itself
    other = struct.unpack("<d", struct.pack("<Q", 0x7ff8000000000001))[0]
    assert math.isnan(other) and c(nan) != c(other)   # payloads differ
    assert c(-nan) != c(nan)
    assert N.same_constant(-0.0, -0.0) and not N.same_constant(0.0, -0.0)
    assert N.constant_identity(3) == N.constant_identity(3.0)
    # control constants are untouched
    assert IR.Const(True, type=IR.Bool) != IR.Const(1, type=IR.Int)


@proc
def signed_zero(P: f32[1], B: f32[4]):
    for x in seq(0, 4):
        if x == 0:
            P[0] = 0.0
        else:
            P[0] = -0.0
        B[x] = 1.0 / P[0]


def test_fission_refuses_zeros_of_two_signs():
    out = _run(signed_zero, P=np.zeros(1, np.float32),
               B=np.zeros(4, np.float32))
    assert list(out["B"]) == [np.inf, -np.inf, -np.inf, -np.inf]
    with pytest.raises(SchedulingError, match="not provably equal-valued"):
        signed_zero.fission_after("if x == 0: _")


def test_fission_still_accepts_equal_zeros(equiv):
    @proc
    def same_zero(P: f32[1], B: f32[4]):
        for x in seq(0, 4):
            if x == 0:
                P[0] = -0.0
            else:
                P[0] = -0.0
            B[x] = 1.0 / P[0]
    q = same_zero.fission_after("if x == 0: _")
    assert str(q).count("for x in seq(0, 4):") == 2
    equiv(same_zero, q, [{}])


def test_join_loops_refuses_bodies_storing_different_zeros(equiv):
    @proc
    def zeros(y: f32[8]):
        for i in seq(0, 4):
            y[i] = 0.0
        for i in seq(4, 8):
            y[i] = -0.0
    with pytest.raises(SchedulingError, match="not the same program"):
        zeros.join_loops("for i in _: _", "for i in _: _ #1")

    @proc
    def neg_zeros(y: f32[8]):
        for i in seq(0, 4):
            y[i] = -0.0
        for i in seq(4, 8):
            y[i] = -0.0
    q = neg_zeros.join_loops("for i in _: _", "for i in _: _ #1")
    assert "for i in seq(0, 8):" in str(q)
    out = _run(q, y=np.ones(8, np.float32))["y"]
    assert np.array_equal(_bits(out), _bits(np.full(8, -0.0, np.float32)))


@instr("for (int k_ = 0; k_ < 8; k_++) (&{x_data})[k_] = 0.0f;")
def store_zero(x: [f32][8]):
    for i in seq(0, 8):
        x[i] = 0.0


def test_replace_refuses_instruction_storing_the_other_zero():
    @proc
    def negz(y: f32[8]):
        for i in seq(0, 8):
            y[i] = -0.0
    with pytest.raises(SchedulingError, match="constant"):
        negz.replace("for i in _: _", store_zero)

    @proc
    def posz(y: f32[8]):
        for i in seq(0, 8):
            y[i] = 0.0
    q = posz.replace("for i in _: _", store_zero)
    assert "store_zero(y[0:8])" in str(q)


def test_patterns_tell_the_zeros_apart():
    @proc
    def both(y: f32[2]):
        y[0] = 0.0
        y[1] = -0.0
    neg = both.find("y[_] = -0.0").node().rhs.val
    pos = both.find("y[_] = 0.0").node().rhs.val
    assert math.copysign(1.0, neg) == -1.0 and math.copysign(1.0, pos) == 1.0
    assert len(both.find("y[_] = 0.0", many=True)) == 1



def test_c_keeps_the_sign_of_zero_and_nan_literals():
    @proc
    def lits(y: f32[2], z: f64[2]):
        y[0] = -0.0
        y[1] = 0.0
        z[0] = -0.0
        z[1] = 0.0
    args = (np.ones(2, np.float32), np.ones(2))
    a = _run(lits, y=args[0], z=args[1])
    y, z = args[0].copy(), args[1].copy()
    lits.compile()(y, z)
    assert np.array_equal(_bits(y), _bits(a["y"])) and np.signbit(y[0])
    assert np.array_equal(_bits(z), _bits(a["z"])) and np.signbit(z[0])
    # a NaN literal (a Python constant of the defining scope) keeps its sign
    from exo_hl.codegen_c import arith as A
    nan = float("nan")
    assert A.literal(-nan, IR.F32) == "-NAN" and A.literal(nan, IR.F32) == "NAN"
    assert A.literal(-nan, IR.F64) == "(double)-NAN"


def test_alpha_equality_tells_the_zeros_apart():
    from exo_hl.core_ir.printer import alpha_equal

    @proc
    def pz(y: f32[1]):
        y[0] = 0.0

    @proc
    def nz(y: f32[1]):
        y[0] = -0.0
    assert not alpha_equal(pz.ir(), nz.ir().update(name="pz"))
    assert alpha_equal(nz.ir(), nz.ir())
