"""Loop conditions (§3.5.8), ValG (§3.11), contexts (§3.14), predicates."""
from __future__ import annotations

from exo_hl import DRAM, config, f32, index, proc, seq, size, stride
from exo_hl.core_ir.nodes import IR
from exo_hl.effects import api
from exo_hl.effects import eexpr as E
from exo_hl.effects.lift import valg
from kernels import gemm  # the suite's shared GEMM


@config
class CfgL:
    st: stride
    v: index


@proc
def shift(N: size, A: f32[N + 1, N + 1] @ DRAM):
    for i in seq(0, N):
        for j in seq(0, N):
            A[i + 1, j] = A[i, j + 1]


def test_reorder():
    p = gemm.ir()
    assert api.can_reorder_loops(p, (0, ))
    assert api.can_reorder_loops(p, (0, 0))
    r = api.can_reorder_loops(shift.ir(), (0, ))
    assert not r and "A" in r.reason


@proc
def fis(N: size, A: f32[N + 1] @ DRAM, B: f32[N + 1] @ DRAM):
    for i in seq(0, N):
        A[i] = 1.0
        B[i] = A[i]
    for i in seq(0, N):
        A[i + 1] = 1.0
        B[i] = A[i]
    for i in seq(0, N):
        B[i] = A[i]
        A[i + 1] = 1.0


def test_fission():
    p = fis.ir()
    assert api.can_fission(p, (0, ), 1)
    # iteration i reads A[i] written by iteration i-1 after fission order
    assert api.can_fission(p, (1, ), 1)
    r = api.can_fission(p, (2, ), 1)
    assert not r and "A" in r.reason


@proc
def rm(N: size, A: f32[N] @ DRAM, x: f32[4] @ DRAM, y: f32[4] @ DRAM):
    for i in seq(0, N):
        x[0] = 1.0
        y[0] = x[0]
    for i in seq(0, N):
        x[0] += 1.0
    for i in seq(0, 4):
        for j in seq(0, 4):
            x[j] = y[j]
    for i in seq(0, N - 1):
        x[1] = 2.0
    for i in seq(0, N):
        A[i] = 2.0


def test_remove_loop():
    p = rm.ir()
    assert api.can_remove_loop(p, (0, ))          # idempotent, >= 1 iteration
    assert not api.can_remove_loop(p, (1, ))      # reduction is not idempotent
    assert api.can_remove_loop(p, (2, ))          # write loop shadows itself
    r = api.can_remove_loop(p, (3, ))             # N - 1 may be 0
    assert not r and "at least once" in r.reason
    assert not api.can_remove_loop(p, (4, ))      # uses i


@proc
def cfg_loops(N: size, A: f32[N] @ DRAM):
    assert CfgL.v >= 0
    assert CfgL.v < N
    for i in seq(0, N):
        A[CfgL.v] = 1.0
        CfgL.v = 0
    for i in seq(0, N):
        CfgL.v = 3
    for i in seq(0, N):
        CfgL.v = i
    for i in seq(0, N):
        CfgL.v = CfgL.v + i


def _g(field):
    return E.GVar(CfgL, field)


def test_valg_loops():
    p = cfg_loops.ir()
    g = valg(p.body[1])[_g("v")]
    # sharp rule: exactly (0 < N) ? 3 : v
    n = p.args[0].name
    assert g == E.ite(E.op("<", E.const(0), E.var(n)), E.const(3),
                      E.var(_g("v")))
    g2 = valg(p.body[2])[_g("v")]
    # the last iteration's value: (0 < N) ? N - 1 : v (was fix ? v : ⊥)
    assert g2 == E.ite(E.op("<", E.const(0), E.var(n)),
                       E.op("-", E.var(n), E.const(1)), E.var(_g("v")))
    g3 = valg(p.body[3])[_g("v")]
    assert g3[0] == "ite" and g3[3] == E.bot(E.INT)   # fix ? v : ⊥


def test_body_effect_sees_first_iteration_value():
    # first iteration writes A[v_entry], later ones A[0]: not parallel-safe
    # to assume only A[0] is written
    p = cfg_loops.ir()
    from exo_hl.effects.effects import eff_stmt, Wr_H, flatten
    terms = flatten(Wr_H(eff_stmt(p.body[0])))
    assert len(terms) == 1
    assert E.GVar(CfgL, "v") in E.free_keys(terms[0].idx[0])


@proc
def ctxp(N: size, A: f32[N] @ DRAM):
    assert N % 4 == 0
    CfgL.v = 2
    for i in seq(0, N / 4):
        if i > 0:
            A[4 * i - 1] = 1.0


def test_context_prove_and_counterexample():
    p = ctxp.ir()
    path = (("body", 1), ("body", 0), ("body", 0))
    ctx = api.context(p, path)
    s = api.stmt_at(p, path)
    assert isinstance(s, IR.Assign)
    idx = s.idx[0]
    n = p.args[0].name
    i = p.body[1].iter
    lt = E.op("<", api.Ctx().lift(idx), E.var(n))
    assert api.prove(lt, ctx)
    ge = E.op(">=", api.Ctx().lift(idx), E.const(0))
    assert api.prove(ge, ctx)
    # without the guard i > 0, 4*i - 1 may be negative
    ctx_loop = api.context(p, (("body", 1), ("body", 0)))
    cex = api.counterexample(ge, ctx_loop)
    assert cex is not None and cex["i"] == 0
    # config value known in context
    assert api.prove(E.eq(E.var(E.GVar(CfgL, "v")), E.const(2)), ctx)
    assert api.prove_at(p, path, E.op("<", E.var(i), E.var(n)))


@proc
def equiv(N: size, A: f32[N] @ DRAM):
    assert N >= 3
    CfgL.v = 1
    A[0] = 1.0
    CfgL.v = 2
    A[CfgL.v] = 2.0


def test_equiv_modulo():
    p = equiv.ir()
    f = {E.GVar(CfgL, "v")}
    r, rest = api.equiv_modulo(p, (0, ), f)
    assert r and rest == frozenset()    # overwritten later, never read first
    r, rest = api.equiv_modulo(p, (2, ), f)
    assert not r                         # read by A[CfgL.v]


def test_cache_hits():
    api.clear_cache()
    p = fis.ir()
    st = api.stats()
    q0 = st.solver_calls
    assert api.can_fission(p, (1, ), 1)
    q1 = st.solver_calls
    assert q1 > q0
    before = st.cache_hits
    assert api.can_fission(p, (1, ), 1)   # fresh variables, same queries
    assert st.cache_hits > before and st.solver_calls == q1
