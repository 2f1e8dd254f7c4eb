"""Commutes of two blocks proven at once (``checks._commute_apart``, one
query per buffer for the four conditions, terms renamed per side): the
fast path must give the verdicts and reasons of the checks one by one,
and must still refuse blocks that conflict through one statement deep
inside a loop nest."""
from __future__ import annotations

import pytest

from exo_hl import DRAM, config, f32, index, proc, seq, size
from exo_hl.caches import clear_all
from exo_hl.effects import api, checks, smt


@config
class Deep:
    k: index


@proc
def blocks(N: size, x: f32[64] @ DRAM, y: f32[64] @ DRAM,
           z: f32[64] @ DRAM, w: f32[64] @ DRAM):
    assert N >= 1
    for i in seq(0, 8):                             # 0: writes y[0..16)
        y[i] = x[i]
        y[i + 8] = x[i + 8]
    for i in seq(0, 8):                             # 1: reads y[16..48)
        z[i] = y[i + 16] + y[i + 24]
        z[i + 8] = y[i + 32] + y[i + 40]
    for i in seq(0, 8):                             # 2: like 0, and deep
        y[i] = x[i]                                 # inside writes y[40+i]
        y[i + 8] = x[i + 8]
        for j in seq(0, 4):
            for t in seq(0, 2):
                if j == 3 and t == 1:
                    y[40 + i] = 1.0
    for i in seq(0, 8):                             # 3: like 0, and deep
        y[i] = x[i]                                 # inside writes y[48+i]
        y[i + 8] = x[i + 8]
        for j in seq(0, 4):
            for t in seq(0, 2):
                if j == 3 and t == 1:
                    y[48 + i] = 1.0
    for i in seq(0, 8):                             # 4: reductions of w,
        w[i] += y[i + 16]                           # writes z[0..16)
        w[i + 8] += y[i + 24]
        w[i + 16] += x[i]
        z[i] = x[i]
        z[i + 8] = x[i + 8]
    for i in seq(0, 8):                             # 5: reductions of w,
        w[i] += x[i + 8]                            # deep inside one read
        w[i + 8] += x[i]                            # of w, writes of z
        w[i + 16] += x[i + 16]
        z[i + 48] = x[i]
        z[i + 56] = x[i + 8]
        for j in seq(0, 2):
            if j == 1:
                z[i + 32] = w[i + 16]
    for i in seq(0, 8):                             # 6: reductions of w,
        w[i] += z[i + 16]                           # reads z[16..48)
        w[i + 8] += z[i + 24]
        w[i + 16] += z[i + 32] + z[i + 40]
    Deep.k = 3                                      # 7: config write
    for i in seq(0, 8):                             # 8: reads the config
        z[i] = y[i + 16] + y[i + 24]                # deep inside
        for j in seq(0, 2):
            if j == 1:
                z[i + 8] = y[i + Deep.k + 32]


# (a, b, commutes): body[a] then body[b]
CASES = [
    (0, 1, True),      # y[0..16) written, y[16..48) read
    (2, 1, False),     # the deep write y[40+i] meets the read y[i+40]
    (1, 2, False),
    (3, 1, True),      # the deep write y[48+i] is past every read
    (4, 6, True),      # reductions of one location commute
    (6, 4, True),
    (5, 4, False),     # the deep read of w[i+16] meets a reduction of it
    (4, 5, False),
    (7, 8, False),     # config written, read deep inside
    (8, 7, False),
]


def _verdicts(apart_min, monkeypatch, spy=None):
    monkeypatch.setattr(checks, "APART_MIN_PAIRS", apart_min)
    clear_all()
    st = smt.solver().stats
    st.reset()
    ir = blocks.ir()
    b = ir.body
    out = []
    for i, j, _ in CASES:
        r = api.commutes(b[i], b[j], api.context(ir, (min(i, j), )))
        out.append((bool(r), r.reason))
    return out, st.queries


def test_fast_path_keeps_verdicts_and_reasons(monkeypatch):
    took = []
    real = checks._commute_apart

    def spy(*args):
        took.append(real(*args))
        return took[-1]
    monkeypatch.setattr(checks, "_commute_apart", spy)
    fast, q_fast = _verdicts(checks.APART_MIN_PAIRS, monkeypatch)
    one_by_one, q_slow = _verdicts(10 ** 9, monkeypatch)
    assert [ok for ok, _ in fast] == [ok for _, _, ok in CASES]
    assert fast == one_by_one
    # the fast path proved each commuting case (each has enough pairs to
    # take it) and refused the others, whose reasons are the checks' one
    # by one
    assert took[:len(CASES)] == [ok for _, _, ok in CASES]
    assert q_fast < q_slow
    reasons = dict(((i, j), r) for (i, j, _), (_, r) in zip(CASES, fast))
    assert "y[(40 + i)]" in reasons[2, 1] or "y[(i + 40)]" in reasons[2, 1]
    assert "w[" in reasons[5, 4]
    assert "Deep" in reasons[7, 8] or "k" in reasons[7, 8]


@pytest.mark.parametrize("deep", [40, 47, 48])
def test_one_deep_conflict_is_found(deep):
    """Single shifts of the deep write around the edge of the read range
    y[16..48): inside at 40 and 47 (i = 0), apart from 48 on."""
    @proc
    def shifted(x: f32[64] @ DRAM, y: f32[72] @ DRAM, z: f32[64] @ DRAM):
        for i in seq(0, 8):
            y[i] = x[i]
            y[i + 8] = x[i + 8]
            for j in seq(0, 4):
                if j == 3:
                    y[i + deep] = 1.0
        for i in seq(0, 8):
            z[i] = y[i + 16] + y[i + 24]
            z[i + 8] = y[i + 32] + y[i + 40]
    clear_all()
    ir = shifted.ir()
    r = api.commutes(ir.body[0], ir.body[1], api.context(ir, (0, )))
    assert bool(r) == (deep >= 48), r.reason
