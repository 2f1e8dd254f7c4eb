"""configwrite_at: a new config write, equivalent modulo the field, checked
in context."""
from __future__ import annotations

import pytest

from exo_hl import (SchedulingError, config, f32, index, proc, seq, size,
                    stride)
from exo_hl.rewrites.call_eqv import equivalence_modulo


@config
class ConfigLoad:
    src_stride: stride


@config
class Lim:
    k: index


@proc
def ld_data(n: size, src: f32[n, 8], dst: f32[n, 8]):
    for i in seq(0, n):
        for j in seq(0, 8):
            dst[i, j] = src[i, j]


@proc
def use_lim(n: size, x: f32[n]):
    Lim.k = 0
    for i in seq(0, n):
        x[i] = 1.0
    x[Lim.k] = 2.0


@proc
def needs_lim(x: f32[4]):
    assert Lim.k == 1
    x[Lim.k] = 3.0


@proc
def calls_needs(x: f32[4]):
    Lim.k = 1
    x[0] = 0.0
    needs_lim(x)


def test_configwrite_at_paper_example(equiv):
    p = ld_data.configwrite_at("for i in _: _", ConfigLoad, "src_stride",
                               "stride(src, 0)", before=True)
    assert str(p) == """\
def ld_data(n: size, src: f32[n, 8] @ DRAM, dst: f32[n, 8] @ DRAM):
    ConfigLoad.src_stride = stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, 8):
            dst[i, j] = src[i, j]"""
    assert equivalence_modulo(ld_data, p) == {(ConfigLoad, "src_stride")}
    assert not p.is_eq(ld_data)
    equiv(ld_data, p, [{"n": 1}, {"n": 5}])


def test_configwrite_at_after(equiv):
    p = ld_data.configwrite_at("for i in _: _", ConfigLoad, "src_stride",
                               "8")
    assert str(p).rstrip().endswith("ConfigLoad.src_stride = 8")
    equiv(ld_data, p, [{"n": 3}])


def test_configwrite_at_rejects_clobbering_a_later_read():
    with pytest.raises(SchedulingError, match="Lim.k is read later"):
        use_lim.configwrite_at("Lim.k = _", Lim, "k", "3")
    # a callee precondition reading the field counts as a read
    with pytest.raises(SchedulingError, match="read later"):
        calls_needs.configwrite_at("x[_] = _", Lim, "k", "2")


def test_configwrite_at_same_value_is_fully_equivalent(equiv):
    p = use_lim.configwrite_at("Lim.k = _", Lim, "k", "0")
    assert p.is_eq(use_lim)
    q = calls_needs.configwrite_at("x[_] = _", Lim, "k", "1")
    assert q.is_eq(calls_needs)
    assert "Lim.k = 1\n    needs_lim(x)" in str(q)
    equiv(use_lim, p, [{"n": 1}, {"n": 4}])


def test_configwrite_at_overwritten_later_drops_the_field():
    p = use_lim.configwrite_at("Lim.k = _", Lim, "k", "3", before=True)
    assert p.is_eq(use_lim)


def test_configwrite_at_bad_arguments():
    with pytest.raises(SchedulingError, match="no field"):
        ld_data.configwrite_at("for i in _: _", ConfigLoad, "nope", "1")
    with pytest.raises(SchedulingError, match="cannot use"):
        ld_data.configwrite_at("for i in _: _", ConfigLoad, "src_stride",
                               "undefined_name")
    with pytest.raises(SchedulingError, match="type mismatch"):
        ld_data.configwrite_at("for i in _: _", ConfigLoad, "src_stride",
                               "src[0, 0]")
