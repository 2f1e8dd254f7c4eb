"""Commutes / Shadows on statement pairs with known answers."""
from __future__ import annotations

import pytest

from exo_hl import DRAM, R, config, f32, index, proc, seq, size, stride
from exo_hl.effects import api


@config
class Cfg:
    a: index
    b: index


@proc
def many(N: size, M: size, A: f32[N, M] @ DRAM, B: f32[N, M] @ DRAM,
         x: f32[16] @ DRAM, y: f32[16] @ DRAM, s: f32):
    assert N >= 4
    assert M >= 8
    x[0] = 1.0                      # 0
    x[1] = 2.0                      # 1
    x[0] = 3.0                      # 2
    y[0] = x[1]                     # 3
    x[2] += 1.0                     # 4
    x[2] += y[3]                    # 5
    y[3] = x[2]                     # 6
    s = x[3]                        # 7
    s += 1.0                        # 8
    Cfg.a = 3                       # 9
    Cfg.b = N                       # 10
    x[Cfg.a] = 1.0                  # 11
    for i in seq(0, 8):             # 12
        x[i] = 0.0
    for i in seq(8, 16):            # 13
        x[i] = 0.0
    for i in seq(0, 16):            # 14
        y[i] = x[i]
    if N > 5:                       # 15
        x[5] = 1.0
    if N <= 5:                      # 16
        x[5] = 2.0
    for i in seq(0, N):             # 17
        for j in seq(0, 4):
            A[i, j] = 1.0
    for i in seq(0, N):             # 18
        for j in seq(4, M):
            A[i, j] = 2.0
    for i in seq(0, N):             # 19
        for j in seq(0, M):
            B[i, j] += A[i, j]
    for i in seq(0, N):             # 20
        for j in seq(0, M):
            B[i, j] += 1.0
    x[15] = 0.0                     # 21
    for i in seq(0, 15):            # 22
        x[i] = 1.0
    y[5] = 0.0                      # 23
    x[7] = 0.0                      # 24


# (i, j, commutes, shadows): statement i then j
PAIRS = [
    (0, 1, True, False),    # disjoint writes
    (0, 2, False, True),    # overlapping writes: later write shadows
    (1, 3, False, False),   # write vs read of the same location
    (0, 3, True, False),    # write x[0] vs read x[1]
    (4, 5, True, False),    # reductions of one location commute
    (4, 6, False, False),   # reduction vs read
    (5, 6, False, False),   # reduction reads y[3], other writes y[3]
    (7, 8, False, False),   # scalar write vs scalar reduce
    (3, 7, True, False),    # reads of x only, writes elsewhere
    (9, 10, True, False),   # different config fields
    (9, 11, False, False),  # config write vs config read (index)
    (9, 9, False, True),    # same config write
    (10, 11, True, False),  # Cfg.b unrelated to x[Cfg.a]
    (12, 13, True, False),  # disjoint loop ranges
    (12, 14, False, False), # write range vs read range
    (13, 0, True, False),   # x[8..16) vs x[0]
    (12, 0, False, False),  # x[0] = does not shadow all of x[0..8)
    (0, 12, False, True),   # loop definitely overwrites x[0]
    (15, 16, True, False),  # exclusive guards
    (15, 2, True, False),   # x[5] vs x[0]
    (17, 18, True, False),  # disjoint column ranges of A
    (17, 19, False, False), # write A vs read A
    (19, 20, True, False),  # reductions vs reductions of B
    (18, 20, True, False),  # A writes vs B reductions
    (21, 22, True, False),  # x[15] outside 0..15
    (1, 22, False, True),   # x[1] overwritten by loop
    (21, 12, True, False),
    (23, 14, False, True),  # y[5] written, then overwritten by the loop
    (24, 13, True, False),  # x[7] vs x[8..16)
    (24, 12, False, True),  # x[7] inside x[0..8)
    (2, 4, True, False),
    (11, 0, True, False),   # in context Cfg.a == 3, so x[Cfg.a] is x[3]
]


@pytest.mark.parametrize("i,j,comm,shad", PAIRS)
def test_pairs(i, j, comm, shad):
    p = many.ir()
    ctx = api.context(p, (i, ))
    b = p.body
    r = api.commutes(b[i], b[j], ctx)
    assert bool(r) == comm, r.reason
    if not r:
        assert r.reason
    assert bool(api.shadows(b[i], b[j], ctx)) == shad


def test_commutes_is_symmetric():
    p = many.ir()
    for i, j, comm, _ in PAIRS:
        ctx = api.context(p, (i, ))
        assert bool(api.commutes(p.body[j], p.body[i], ctx)) == comm


def test_config_value_flows_into_context():
    # after `Cfg.a = 3`, the statement x[Cfg.a] = 1.0 writes x[3]: it commutes
    # with a write of x[0] when analysed in its context (PreValG)
    p = many.ir()
    ctx = api.context(p, (11, ))
    assert api.commutes(p.body[11], p.body[0], ctx)
    assert not api.commutes(p.body[11], p.body[0], api.context(p, (0, )))


@proc
def windows(N: size, A: f32[N, 16] @ DRAM):
    assert N >= 2
    r0 = A[0, 0:16]
    r1 = A[1, 0:16]
    r0[3] = 1.0
    r1[3] = 2.0
    A[1, 3] = 3.0
    c = A[0:N, 4:8]
    c[0, 0] = 1.0


def test_windows_of_one_buffer():
    p = windows.ir()
    b = p.body
    ctx = api.context(p, (2, ))
    assert api.commutes(b[2], b[3], ctx)        # rows 0 and 1
    assert not api.commutes(b[3], b[4], ctx)    # r1[3] is A[1, 3]
    assert api.shadows(b[3], b[4], ctx)
    ctx6 = api.context(p, (6, ))
    assert api.commutes(b[6], b[2], ctx6)       # c[0, 0] is A[0, 4], r0[3] is A[0, 3]


@proc
def iters(N: size, A: f32[N] @ DRAM, B: f32[N + 1] @ DRAM):
    for i in seq(0, N):
        A[i] = B[i] + B[i + 1]
    for i in seq(0, N):
        B[i + 1] = B[i] + 1.0
    for i in seq(0, N):
        A[0] += B[i]


def test_different_iterations_of_one_loop():
    p = iters.ir()
    assert api.loop_is_parallel(p, (0, ))
    r = api.loop_is_parallel(p, (1, ))
    assert not r and "B" in r.reason
    # reductions into one location commute but race in parallel
    assert not api.loop_is_parallel(p, (2, ))


@proc
def tiles(A: f32[8, 8] @ DRAM, B: f32[8, 8] @ DRAM):
    A[0, 0] = B[0, 0]               # 0 .. 3: the first rows
    A[0, 1] = B[0, 1]
    A[1, 0] = B[1, 0]
    A[1, 1] = B[1, 1]
    A[2, 0] = B[2, 0]               # 4 .. 7: other rows
    A[2, 1] = B[2, 1]
    A[3, 0] = B[3, 0]
    A[3, 1] = B[3, 1]
    A[1, 1] = B[4, 4]               # 8: writes what 3 wrote


def test_many_pairs_of_one_buffer_are_one_query(monkeypatch):
    """With many pairs of terms of one buffer, ``checks._apart`` asks one
    query for it: the verdicts and the conflicting pair named are those of
    the query per pair (APART_MIN_PAIRS out of reach)."""
    from exo_hl.caches import clear_all
    from exo_hl.effects import checks, smt
    ir = tiles.ir()
    body = ir.body
    cases = [(body[0:4], body[4:8], True), (body[0:4], body[4:9], False),
             (body[4:9], body[0:4], False)]
    verdicts = []
    for apart_min in (checks.APART_MIN_PAIRS, 10 ** 9):
        monkeypatch.setattr(checks, "APART_MIN_PAIRS", apart_min)
        clear_all()
        st = smt.solver().stats
        st.reset()
        got = [api.commutes(a, b, api.context(ir, (0, ))) for a, b, _ in cases]
        verdicts.append(([bool(r) for r in got], [r.reason for r in got],
                         st.queries))
    (one, reasons, q_one), (per_pair, reasons_pp, q_pp) = verdicts
    assert one == per_pair == [ok for _, _, ok in cases]
    assert reasons == reasons_pp
    assert "A[1, 1]" in reasons[1]
    assert q_one < q_pp                 # the apart case took fewer queries
