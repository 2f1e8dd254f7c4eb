"""configwrite_at: a new config write, equivalent modulo the field, checked
in context."""
from __future__ import annotations

import pytest

from exo_hl import (SchedulingError, config, f32, index, par, proc, seq, size,
                    stride)
from exo_hl.rewrites.call_eqv import equivalence_modulo


@config
class ConfigLoad:
    src_stride: stride


@config
class Lim:
    k: index


@config
class Deep:
    n: index
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


@proc
def tiled_par_nest(N: size, x: f32[N, 4], z: f32[32]):
    # the shape stdlib.tile and parallelize give (a fuzzer's find)
    for a in par(0, 2):
        for b in seq(0, (N + 4) / 32):
            for c in par(0, 2):
                for d in seq(0, 4):
                    for h in par(0, 2):
                        for e in seq(0, 2):
                            if e + 8 * b + 2 * d < N / 4:
                                for f in par(0, 4):
                                    z[f + 4 * c + 8 * a + 16 * h] += x[
                                        e + 4 * d, f]


def test_configwrite_at_deep_in_a_parallel_nest_is_refused_quickly(
        monkeypatch):
    """Deep.n's value at the write names its value one level up several
    times per loop level: the effect analysis walks that shared structure
    once per node (it walked it as a tree, 160k effect nodes built here and
    minutes with one more level). The write races in the par loops."""
    from exo_hl.effects import eexpr as E
    built = [0]
    op = E.op

    def counted(*args):
        built[0] += 1
        return op(*args)
    monkeypatch.setattr(E, "op", counted)
    with pytest.raises(SchedulingError) as ei:
        tiled_par_nest.configwrite_at(tiled_par_nest.find_loop("f"), Deep,
                                      "n", "Deep.k")
    msg = str(ei.value)
    assert "would not be well formed" in msg
    assert "iterations of 'a' race: modification of Deep.n" in msg
    assert built[0] < 20_000
