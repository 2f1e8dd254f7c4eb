"""call_eqv: swap a callee for a procedure derived from it by scheduling."""
from __future__ import annotations

import numpy as np
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
    renamed = scale.rename("scale2")
    assert caller.call_eqv("scale(_)", renamed).is_eq(caller)
    widened = scale.set_precision("x", "f64")
    with pytest.raises(SchedulingError, match="set_precision"):
        caller.call_eqv("scale(_)", widened)


@proc
def halve(x: f32[1], y: f32[1]):
    t: f32
    t = x[0] * 0.5
    y[0] = t


@proc
def calls_halve(A: f32[1], B: f32[1]):
    halve(A, B)


def test_set_precision_is_not_an_equivalence():
    """set_precision changes what a procedure computes (here t: i8 drops
    the .5 of 3 * 0.5): the result is derived from the procedure but not
    equivalent to it, so call_eqv must not swap one for the other (it did,
    and B became 1.0 instead of 1.5)."""
    narrowed = halve.set_precision("t", "i8")
    assert not narrowed.is_eq(halve) and not halve.is_eq(narrowed)
    with pytest.raises(SchedulingError, match="set_precision, which "
                       "changes what it computes"):
        calls_halve.call_eqv("halve(_)", narrowed)
    # rewrites after it are equivalences again, to the narrowed procedure
    later = narrowed.rename("halve_i8")
    assert later.is_eq(narrowed) and not later.is_eq(halve)
    # an unchanged type is no change
    same = halve.set_precision("t", "f32")
    assert same.is_eq(halve)
    A, B = np.array([3.0], np.float32), np.zeros(1, np.float32)
    calls_halve.call_eqv("halve(_)", same).interpret(A=A, B=B)
    assert B[0] == 1.5
