"""cut_loop: Exo's spelling of partition_loop (same result, same checks)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size


@proc
def scale(n: size, x: f32[n]):
    assert n >= 4
    for i in seq(0, n):
        x[i] = x[i] * 2.0


@proc
def scale_any(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 2.0


def test_prints_and_equiv(equiv, assert_roundtrip):
    p = scale.cut_loop("i", "n - 3")
    assert str(p) == """\
def scale(n: size, x: f32[n] @ DRAM):
    assert n >= 4
    for i in seq(0, n - 3):
        x[i] = x[i] * 2.0
    for i in seq(n - 3, n):
        x[i] = x[i] * 2.0"""
    assert str(p) == str(scale.partition_loop("i", "n - 3"))
    assert_roundtrip(p)
    equiv(scale, p, [{"n": 4}, {"n": 9}])


def test_reject_cut_outside_range():
    with pytest.raises(SchedulingError, match="may lie outside the loop"):
        scale_any.cut_loop("i", 2)  # n may be 1
    with pytest.raises(SchedulingError, match="cut"):
        scale.cut_loop("i", 1.5)


@proc
def _acc_row(n: size, src: [f32][n], dst: [f32][n]):
    for i in seq(0, n):
        dst[i] += src[i] * 2.0


@proc
def staged_rows(N: size, x: f32[N + 4], y: f32[8]):
    for i in seq(0, 3):
        y[i] += x[i]
        _acc_row(2, x[i:i + 2], y[i + 2:i + 4])


@pytest.mark.parametrize("dup", [
    lambda p: p.cut_loop('i', 1), lambda p: p.partition_loop('i', 1),
    lambda p: p.specialize('i', ['N > 2'])])
def test_duplicated_window_views_its_own_copy(dup, assert_roundtrip, equiv):
    """Each copy of a block gets fresh symbols; the window type of a window
    passed to a call kept naming the first copy's staged buffer (the
    renaming skipped the type's record of the buffer it views), so the
    result did not round-trip."""
    p = dup(staged_rows.stage_mem(staged_rows.find('_acc_row(_)'),
                                  'x[i:i + 2]', 's'))
    allocs = [a.node().name for a in p.find('s : _', many=True)]
    calls = [c.node() for c in p.find('_acc_row(_)', many=True)]
    assert len(allocs) == len(calls) == 2 and allocs[0] is not allocs[1]
    for a, c in zip(allocs, calls):
        assert c.args[1].name is a and c.args[1].type.src_buf is a
    assert_roundtrip(p)
    equiv(staged_rows, p, [{"N": 1}, {"N": 4}])
