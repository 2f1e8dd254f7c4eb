"""inline_assign(assign): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, i8, proc, seq, size, index


@proc
def twice(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        t: f32
        t = x[i] * 2.0
        y[i] = t + 1.0
        y[i] += t


def test_inline_assign_drops_dead_write(equiv):
    q = twice.inline_assign("t = _")
    assert str(q).rstrip() == """\
def twice(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        t: f32 @ DRAM
        y[i] = x[i] * 2.0 + 1.0
        y[i] += x[i] * 2.0"""
    equiv(twice, q, [{"n": 1}, {"n": 4}])
    assert "t:" not in str(q.delete_buffer("t"))


def test_inline_assign_keeps_write_still_read(equiv):
    @proc
    def arg(n: size, x: f32[n], y: f32[n], z: f32[n]):
        for i in seq(0, n):
            z[i] = x[i] + 1.0
            for j in seq(0, 2):
                y[i] += z[i] * 3.0
    q = arg.inline_assign("z[_] = _")
    assert str(q).rstrip().splitlines()[-3:] == [
        "        z[i] = x[i] + 1.0",       # an argument: the caller sees it
        "        for j in seq(0, 2):",
        "            y[i] += (x[i] + 1.0) * 3.0"]
    equiv(arg, q, [{"n": 3}])


def test_inline_assign_stops_where_the_value_changes(equiv):
    @proc
    def later(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32[2]
            t[0] = x[i]
            t[1] = t[0] * 2.0
            x[i] = t[0] + t[1]     # rewritten (read before the write) ...
            y[i] = t[0]            # ... but not this one: x[i] changed
    q = later.inline_assign("t[0] = _")
    assert str(q).rstrip().splitlines()[-4:] == [
        "        t[0] = x[i]",
        "        t[1] = x[i] * 2.0",
        "        x[i] = x[i] + t[1]",
        "        y[i] = t[0]"]
    equiv(later, q, [{"n": 3}])


def test_inline_assign_rejects_value_changed_before_read():
    @proc
    def clobber(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32
            t = x[i]
            x[i] = 0.0
            y[i] = t
    with pytest.raises(SchedulingError, match="no following read"):
        clobber.inline_assign("t = _")


def test_inline_assign_rejects_location_overwritten():
    @proc
    def over(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: f32
            t = x[i]
            t = 3.0
            y[i] = t
    with pytest.raises(SchedulingError, match="no following read"):
        over.inline_assign("t = x[_]")


def test_inline_assign_rejects_self_reading_value():
    @proc
    def selfref(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            x[i] = x[i] * 2.0
            y[i] = x[i]
    with pytest.raises(SchedulingError, match="reads the location"):
        selfref.inline_assign("x[_] = _")


def test_inline_assign_rejects_precision_change():
    @proc
    def narrow(n: size, x: f32[n], y: f32[n]):
        for i in seq(0, n):
            t: i8
            t = x[i]
            y[i] = t
    with pytest.raises(SchedulingError, match="exact value"):
        narrow.inline_assign("t = _")


def test_inline_assign_rejects_config_indices_and_non_assign():
    @config
    class IaCfg:
        k: index

    @proc
    def cfg(n: size, x: f32[n], y: f32[4]):
        IaCfg.k = 1
        y[IaCfg.k] = x[0]
        IaCfg.k = 2
        x[0] = y[IaCfg.k]
    with pytest.raises(SchedulingError, match="configuration state"):
        cfg.inline_assign("y[_] = _")
    with pytest.raises(SchedulingError, match="expected an assignment"):
        twice.inline_assign("y[_] += _")
