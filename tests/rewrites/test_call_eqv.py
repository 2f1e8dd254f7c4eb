"""call_eqv: swap a callee for a procedure derived from it by scheduling."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, proc, seq, size, stride
from exo_hl.rewrites.call_eqv import equivalence_modulo


@config
class Cfg:
    s: stride


@proc
def scale(n: size, x: f32[n, 4]):
    for i in seq(0, n):
        x[i, 0] = 2.0 * x[i, 0]


@proc
def scale_twin(n: size, x: f32[n, 4]):
    for i in seq(0, n):
        x[i, 0] = 2.0 * x[i, 0]


@proc
def caller(n: size, x: f32[n, 4], y: f32[n, 4]):
    scale(n, x)
    for i in seq(0, n):
        y[i, 1] = x[i, 0]


@proc
def main_reads_cfg(n: size, x: f32[n, 4], y: f32[n, 4]):
    scale(n, x)
    if Cfg.s == 4:
        y[0, 0] = 1.0


@proc
def main_overwrites_cfg(n: size, x: f32[n, 4], y: f32[n, 4]):
    scale(n, x)
    Cfg.s = 4
    if Cfg.s == 4:
        y[0, 0] = 1.0


def test_call_eqv_descendant_through_rename(equiv):
    fast = scale.rename("scale_fast").split("i", 4, "io", "ii", tail="cut")
    m2 = caller.call_eqv("scale(_)", fast)
    assert str(m2) == """\
def caller(n: size, x: f32[n, 4] @ DRAM, y: f32[n, 4] @ DRAM):
    scale_fast(n, x)
    for i in seq(0, n):
        y[i, 1] = x[i, 0]"""
    assert m2.is_eq(caller)
    equiv(caller, m2, [{"n": 1}, {"n": 7}, {"n": 8}])
    # and again, from the already scheduled callee to a further descendant
    faster = fast.rename("scale_faster")
    m3 = m2.call_eqv("scale_fast(_)", faster)
    assert "scale_faster(n, x)" in str(m3)
    assert m3.is_eq(caller)


def test_call_eqv_rejects_unrelated_same_signature():
    with pytest.raises(SchedulingError, match="not derived from 'scale'"):
        caller.call_eqv("scale(_)", scale_twin)


def test_call_eqv_rejects_non_call_and_non_proc():
    with pytest.raises(SchedulingError, match="expected a call"):
        caller.call_eqv("y[_] = _", scale)
    with pytest.raises(SchedulingError, match="expected a Procedure"):
        caller.call_eqv("scale(_)", scale.ir())


def test_call_eqv_modulo_config_checked_in_context(equiv):
    w = scale.configwrite_at("for i in _: _", Cfg, "s", "stride(x, 0)",
                             before=True)
    assert equivalence_modulo(scale, w) == {(Cfg, "s")}
    # the caller reads Cfg.s after the call: the difference is observable
    with pytest.raises(SchedulingError, match="only equivalent .* modulo "
                       "Cfg.s"):
        main_reads_cfg.call_eqv("scale(_)", w)
    # nothing reads it afterwards: accepted, caller equivalent modulo Cfg.s
    m = caller.call_eqv("scale(_)", w)
    assert equivalence_modulo(caller, m) == {(Cfg, "s")}
    equiv(caller, m, [{"n": 3}])
    # definitely overwritten before any read: fully equivalent again
    m = main_overwrites_cfg.call_eqv("scale(_)", w)
    assert m.is_eq(main_overwrites_cfg)
    equiv(main_overwrites_cfg, m, [{"n": 2}])


def test_call_eqv_rejects_changed_signature():
    narrowed = scale.set_precision("x", "f64")
    with pytest.raises(SchedulingError, match="changed type"):
        caller.call_eqv("scale(_)", narrowed)
