"""The unification engine on its own: the coefficient solver and the
structural matcher (through exo_hl.unify.unify)."""
from __future__ import annotations

import pytest

from exo_hl import f32, proc, seq, size
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.syms import Sym
from exo_hl.unify import UnifyError, unify
from exo_hl.unify.solve import Equation, Lin, NoSolution, solve


def _read(s):
    return IR.Read(s, (), type=IR.Index, srcinfo=None)


def test_solver_expresses_unknowns_over_the_basis():
    i, n = _read(Sym("i")), _read(Sym("n"))
    # u + 2 == 4*i + n  and  v == u - 1
    eqs = [Equation(Lin({"u": 1}, {i: -4, n: -1}, 2), "e1"),
           Equation(Lin({"v": 1, "u": -1}, {}, 1), "e2")]
    sol = solve(eqs, ["u", "v"], [i, n])
    assert sol["u"] == (-2, {i: 4, n: 1})
    assert sol["v"] == (-3, {i: 4, n: 1})


def test_solver_prefers_the_simplest_solution():
    i = _read(Sym("i"))
    # u + w == 2*i : many solutions; the simplest puts all on one unknown
    eqs = [Equation(Lin({"u": 1, "w": 1}, {i: -2}, 0), "e")]
    sol = solve(eqs, ["u", "w"], [i])
    vals = sorted([sol["u"], sol["w"]], key=repr)
    assert (0, {}) in vals and (0, {i: 2}) in vals
    assert solve(eqs, ["u", "w"], [i]) == sol  # deterministic


def test_solver_sizes_preferably_positive():
    eqs = []
    sol = solve(eqs, ["n"], [], positive=["n"])
    assert sol["n"] == (1, {})


def test_solver_names_the_failing_equation():
    i, j = _read(Sym("i")), _read(Sym("j"))
    # j is bound in the block (not in the basis): it must cancel exactly
    with pytest.raises(NoSolution) as e:
        solve([Equation(Lin({"u": 1}, {j: 1}, 0), "bound j")], ["u"], [i])
    assert e.value.desc == "bound j"
    # integer-infeasible: 2u == 1
    with pytest.raises(NoSolution) as e:
        solve([Equation(Lin({"u": 2}, {}, -1), "two u")], ["u"], [i])
    assert e.value.desc == "two u"


@proc
def sub(n: size, x: [f32][n], y: [f32][n]):
    for i in seq(0, n):
        y[i] = x[i]


@proc
def host(M: size, A: f32[M, 8], B: f32[8, M]):
    for r in seq(0, M):
        for c in seq(0, 8):
            B[c, r] = A[r, c]


def _scope(p):
    out = {a.name: a.type for a in p.ir().args}
    loop = p.ir().body[0]
    out[loop.iter] = IR.Index
    return out, loop


def test_unify_infers_row_and_column_windows():
    scope, loop = _scope(host)
    u = unify(sub.ir(), loop.body, scope)
    args = u.args()
    assert args[0] == IR.Const(8, type=IR.Int, srcinfo=None) or \
        getattr(args[0], "val", None) == 8
    x, y = args[1], args[2]
    assert isinstance(x, IR.WindowExpr) and isinstance(y, IR.WindowExpr)
    assert [type(w).__name__ for w in x.idx] == ["Point", "Interval"]
    assert [type(w).__name__ for w in y.idx] == ["Interval", "Point"]
    assert x.idx[0].pt.name is loop.iter and y.idx[1].pt.name is loop.iter


def test_unify_rejects_reads_of_block_bound_buffers():
    @proc
    def local(A: f32[8]):
        t: f32[8]
        for i in seq(0, 8):
            t[i] = A[i]
    scope = {a.name: a.type for a in local.ir().args}
    with pytest.raises(UnifyError) as e:
        unify(sub.ir(), local.ir().body[1:], scope)
    assert "bound inside the block" in str(e.value) or \
        "not visible" in str(e.value)
