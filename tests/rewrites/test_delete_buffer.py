"""delete_buffer(alloc): printed result, semantics, rejected cases."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def unused(n: size, x: f32[n], y: f32[n]):
    t: f32[4]
    for i in seq(0, n):
        u: f32
        y[i] = x[i]


def test_delete_buffer(equiv):
    q = unused.delete_buffer("t : _").delete_buffer("u")
    assert str(q).rstrip() == """\
def unused(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] = x[i]"""
    equiv(unused, q, [{"n": 3}])


def test_delete_buffer_leaves_pass_in_empty_block(equiv):
    @proc
    def only(n: size, x: f32[n]):
        for i in seq(0, n):
            t: f32
    q = only.delete_buffer("t")
    assert "        pass" in str(q)
    equiv(only, q, [{"n": 2}])


def test_delete_buffer_rejects_used_buffer():
    @proc
    def written(n: size, x: f32[n]):
        t: f32
        t = x[0]
    with pytest.raises(SchedulingError, match="still used"):
        written.delete_buffer("t")


def test_delete_buffer_rejects_arguments():
    with pytest.raises(SchedulingError, match="only an allocation"):
        unused.delete_buffer("x")
