"""The solver's per-query limit is z3's resource count, not the clock:
a query z3 cannot decide comes back 'unknown' after the same number of
steps on any machine, however long the wall-clock backstop is."""
from __future__ import annotations

import time

from exo_hl.effects import smt
from exo_hl.effects.smt import (band, beq0, ble0, ladd, lconst, lmul, lvar)


def _fermat3():
    """x^3 + y^3 = z^3 with x, y, z >= 1: no solution, and none that z3's
    nonlinear integer arithmetic can find or refute."""
    x, y, z = (lvar(k) for k in ("x", "y", "z"))

    def cube(v):
        return lmul(lmul(v, v), v)
    pos = [ble0(ladd(lconst(1), v, -1)) for v in (x, y, z)]   # 1 - v <= 0
    return band(beq0(ladd(ladd(cube(x), cube(y)), cube(z), -1)), *pos)


def test_the_resource_count_decides_not_the_clock():
    s = smt.Solver(timeout_ms=600_000, rlimit=50_000)
    t0 = time.perf_counter()
    res, model = s.check(_fermat3())
    assert (res, model) == ("unknown", None)
    # 50k steps take milliseconds; the ten-minute clock never came into it
    assert time.perf_counter() - t0 < 60
    # the same answer again from z3 itself (the cache is bypassed)
    s.clear_cache()
    assert s.check(_fermat3())[0] == "unknown"


def test_a_decidable_query_is_answered_within_the_default_limit():
    x, y = lvar("x"), lvar("y")
    s = smt.Solver()
    assert s.rlimit == smt.RLIMIT
    # x <= y, y + 1 <= x: unsat (the refutation tactic's case)
    t = band(ble0(ladd(x, y, -1)), ble0(ladd(ladd(y, lconst(1)), x, -1)))
    assert s.check(t)[0] == "unsat"
    # x <= y alone: sat, with a model (the default solver's case)
    res, m = s.check(ble0(ladd(x, y, -1)))
    assert res == "sat" and m["x"] <= m["y"]


def test_the_default_solver_uses_the_resource_limit():
    assert smt.solver().rlimit == smt.RLIMIT
    assert smt.solver().timeout_ms >= 10_000     # a backstop only


def test_a_model_value_z3_leaves_symbolic_is_no_model():
    # audit14a: z3 completed a model with 4*If(ForAll(i5, ...), 1, 0) for
    # an integer (a bounds query of unroll_loop's split): as_long() raised
    # AttributeError out of a scheduling call. Such a value is no usable
    # model: the query is 'unknown' (not proven), never a crash
    import z3
    i5 = z3.Int("i5")
    symbolic = 4 * z3.If(z3.ForAll(i5, z3.Not(z3.And(i5 >= 0, i5 <= 0))),
                         1, 0)
    assert not smt._concrete(symbolic, "int")
    assert not smt._concrete(z3.ForAll(i5, i5 >= 0), smt.E.BOOL)
    assert smt._concrete(z3.IntVal(-3), "int")
    assert smt._concrete(z3.BoolVal(False), smt.E.BOOL)
