"""bind_config: pass an expression through a config field."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (SchedulingError, config, f32, f64, i8, i32, index, proc,
                    seq, size, stride)
from exo_hl.rewrites.call_eqv import equivalence_modulo


@config
class Cfg:
    scale: f32
    k: index
    s: stride


@proc
def axpy(n: size, a: f32, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += a * x[i]


@proc
def rd_after(n: size, a: f32, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += a * x[i]
    y[0] = Cfg.scale


@proc
def idx(n: size, x: f32[n, 4]):
    for i in seq(0, n):
        x[i, 2] = 1.0


@proc
def needs_k(x: f32[4]):
    assert Cfg.k == 2
    x[Cfg.k] = 1.0


@proc
def calls_k(x: f32[4]):
    Cfg.k = 2
    x[1] = 0.0
    needs_k(x)


def test_bind_config_data(equiv):
    p = axpy.bind_config("a", Cfg, "scale")
    assert str(p) == """\
def axpy(n: size, a: f32 @ DRAM, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        Cfg.scale = a
        y[i] += Cfg.scale * x[i]"""
    assert equivalence_modulo(axpy, p) == {(Cfg, "scale")}
    equiv(axpy, p, [{"n": 1}, {"n": 6}])


def test_bind_config_control_index(equiv):
    p = idx.bind_config("2", Cfg, "k")
    assert "Cfg.k = 2\n        x[i, Cfg.k] = 1.0" in str(p)
    equiv(idx, p, [{"n": 3}])


def test_bind_config_rejects_later_read():
    # the loop's next iterations and the final statement read Cfg.scale
    with pytest.raises(SchedulingError, match="read later"):
        rd_after.bind_config("a", Cfg, "scale")


def test_bind_config_rejects_callee_precondition_read():
    with pytest.raises(SchedulingError, match="read later"):
        calls_k.bind_config("1", Cfg, "k")


def test_bind_config_rejects_type_mismatch_and_buffers():
    with pytest.raises(SchedulingError, match="type"):
        axpy.bind_config("a", Cfg, "k")
    with pytest.raises(SchedulingError, match="type"):
        idx.bind_config("2", Cfg, "scale")
    with pytest.raises(SchedulingError, match="no field"):
        axpy.bind_config("a", Cfg, "zzz")


# ----------------------------------------------------------------------
# a data field must hold the expression's value as the statement uses it
@config
class CfgP:
    scale: f32
    wide: f64
    small: i8
    big: i32


@proc
def scale2(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 2.0 * x[i]


def test_bind_config_literal_into_data_field(equiv):
    p = scale2.bind_config("2.0", CfgP, "scale")
    assert str(p).splitlines()[2:4] == [
        "        CfgP.scale = 2.0", "        x[i] = CfgP.scale * x[i]"]
    equiv(scale2, p, [{"n": 5}])
    # the statement computes 2.0 in f32: an f64 field would change that
    with pytest.raises(SchedulingError, match="computed in f32 .* in f64 with a f64 location"):
        scale2.bind_config("2.0", CfgP, "wide")


@proc
def isum(n: size, x: i8[n], y: i8[n], z: i32[n]):
    for i in seq(0, n):
        z[i] = (x[i] + y[i]) * x[i]


def test_bind_config_integer_value_must_fit():
    with pytest.raises(SchedulingError, match="may not fit in i8"):
        isum.bind_config("x[i] + y[i]", CfgP, "small")
    p = isum.bind_config("x[i] + y[i]", CfgP, "big")
    assert "z[i] = CfgP.big * x[i]" in str(p)
    x = np.array([100, -100, 3], np.int8)
    y = np.array([100, -100, -7], np.int8)
    want = np.zeros(3, np.int32)
    isum.interpret(3, x, y, want)
    assert list(want) == [20000, 20000, -12]
    for run in (p.interpret, p.compile()):
        z = np.zeros(3, np.int32)
        run(3, x, y, z)
        np.testing.assert_array_equal(z, want)


@proc
def set_two(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 2.0


def test_bind_config_literal_stored_whole(equiv):
    # the literal is the whole value stored: any field holding it exactly
    for field in ("scale", "wide", "small", "big"):
        p = set_two.bind_config("2.0", CfgP, field)
        assert f"x[i] = CfgP.{field}" in str(p)
        equiv(set_two, p, [{"n": 3}])
    with pytest.raises(SchedulingError, match="cannot stand for it"):
        set_two_half.bind_config("2.5", CfgP, "small")


@proc
def set_two_half(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 2.5


@proc
def strided_read(N: size, x: f32[2 * N + 2], y: f32[N]):
    for j in seq(0, N):
        y[j] = x[2 * j]


@proc
def offset_add(x: f32[4]):
    x[2 + 1 - 1] += 1.0


def test_bind_config_keeps_index_arithmetic_quasi_affine_and_typed(
        assert_roundtrip, equiv):
    """The factor of 2 * j bound to a config field gave Cfg.k * j, which
    is not quasi-affine (the result did not parse back); binding a literal
    of 2 + 1 left the sum typed as literal-on-literal."""
    with pytest.raises(SchedulingError, match="not quasi-affine"):
        strided_read.bind_config(strided_read.find('2 * j').lhs(), Cfg, 'k')
    e = offset_add.find('x[_] += _').idx()[0]
    p = offset_add.bind_config(e.lhs().rhs(), Cfg, 'k')
    assert "x[2 + Cfg.k - Cfg.k] += 1.0" in str(p)     # both 1s
    assert_roundtrip(p)
    equiv(offset_add, p, [{}])


# a statement whose own bound reads the field it binds: the bound is
# evaluated before the field is written, so the occurrence replaced may
# read it (was refused: "Cf.k is read later ... by this statement")

@config
class BndCfg:
    k: index


@proc
def own_bound(n: size, y: f32[n + 8]):
    assert BndCfg.k >= 0
    assert BndCfg.k < n
    for i in seq(0, BndCfg.k + 1):
        y[i] += 1.0
        BndCfg.k = i               # the body writes it after the bound
    y[BndCfg.k + 1] = 5.0


def _runs(p, n, k, f=None):
    y = np.arange(n + 8, dtype=np.float32)
    st = {(BndCfg, "k"): k}
    if f is None:
        p.interpret(n, y, config_state=st)
        return y, st[(BndCfg, "k")]
    f.set_config(BndCfg, "k", k)
    f(n, y)
    return y, f.get_config(BndCfg, "k")


def test_bind_config_own_bound_reading_the_field():
    q = own_bound.bind_config(own_bound.find('BndCfg.k + 1'), BndCfg, 'k')
    assert str(q).rstrip() == """\
def own_bound(n: size, y: f32[n + 8] @ DRAM):
    assert BndCfg.k >= 0
    assert BndCfg.k < n
    BndCfg.k = BndCfg.k + 1
    for i in seq(0, BndCfg.k):
        y[i] += 1.0
        BndCfg.k = i
    y[BndCfg.k + 1] = 5.0"""
    assert equivalence_modulo(own_bound, q) == frozenset()
    fp, fq = own_bound.compile(), q.compile()
    for n in (1, 2, 5, 9):
        for k in range(n):
            want = _runs(own_bound, n, k)
            for got in (_runs(q, n, k), _runs(own_bound, n, k, fp),
                        _runs(q, n, k, fq)):
                assert np.array_equal(got[0], want[0]) and got[1] == want[1]


def test_bind_config_other_reads_of_the_field_in_the_statement_refused():
    @proc
    def lo_reads(n: size, y: f32[n + 8]):
        assert BndCfg.k >= 0
        assert BndCfg.k < n
        for i in seq(BndCfg.k, n):     # would read the bound value
            y[i] = 1.0
    with pytest.raises(SchedulingError, match="read later"):
        lo_reads.bind_config(lo_reads.find_loop('i').hi(), BndCfg, 'k')

    @proc
    def body_reads(n: size, y: f32[2 * n + 8]):
        assert BndCfg.k >= 0
        assert BndCfg.k < n
        for i in seq(0, BndCfg.k + 1):
            y[i + BndCfg.k] = 1.0      # reads it before any write
    with pytest.raises(SchedulingError, match="read later"):
        body_reads.bind_config(body_reads.find('BndCfg.k + 1'), BndCfg, 'k')

    @proc
    def after_reads(n: size, y: f32[n + 8]):
        assert BndCfg.k >= 0
        assert BndCfg.k < n
        for i in seq(0, BndCfg.k + 1):
            y[i] = 1.0
        y[BndCfg.k] = 2.0              # the field changed: refused
    with pytest.raises(SchedulingError, match="read later"):
        after_reads.bind_config(after_reads.find('BndCfg.k + 1'), BndCfg,
                                'k')

    @proc
    def cond_reads(n: size, y: f32[n + 8]):
        assert BndCfg.k >= 0
        assert BndCfg.k < n
        if BndCfg.k + 1 > 2 and BndCfg.k < 4:
            y[0] = 1.0
    with pytest.raises(SchedulingError, match="read later"):
        cond_reads.bind_config(cond_reads.find('BndCfg.k + 1'), BndCfg, 'k')
