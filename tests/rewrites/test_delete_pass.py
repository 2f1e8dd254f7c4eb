"""delete_pass(): printed result, semantics; nothing to reject (always safe)."""
from __future__ import annotations

from exo_hl import f32, proc, seq, size


@proc
def with_passes(n: size, x: f32[n], y: f32[n]):
    pass
    for i in seq(0, n):
        pass
        y[i] = x[i]
        pass
    for j in seq(0, n):
        pass
    for k in seq(0, n):
        for l in seq(0, 3):
            pass
    if n > 2:
        pass
    else:
        y[0] = 1.0
    if n > 3:
        y[1] = 2.0
    else:
        pass


def test_delete_pass_prints(equiv):
    q = with_passes.delete_pass()
    assert str(q).rstrip() == """\
def with_passes(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] = x[i]
    if n > 2:
        pass
    else:
        y[0] = 1.0
    if n > 3:
        y[1] = 2.0"""
    equiv(with_passes, q, [{"n": 1}, {"n": 3}, {"n": 5}])


def test_delete_pass_keeps_bodies_non_empty():
    @proc
    def only_pass(n: size, x: f32[n]):
        for i in seq(0, n):
            pass
    q = only_pass.delete_pass()
    assert str(q).rstrip() == """\
def only_pass(n: size, x: f32[n] @ DRAM):
    pass"""
    # the receiver is unchanged
    assert "for i in seq(0, n)" in str(only_pass)


def test_delete_pass_without_passes_is_identity():
    @proc
    def plain(n: size, x: f32[n]):
        for i in seq(0, n):
            x[i] = 0.0
    q = plain.delete_pass()
    assert str(q) == str(plain)
    assert q.ir() == plain.ir()
