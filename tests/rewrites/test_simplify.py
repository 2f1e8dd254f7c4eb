"""simplify(): readable index arithmetic, dead-branch removal, semantics,
and cursors forwarded through it."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.core_ir.nodes import IR


@proc
def messy(n: size, x: f32[n, 16], y: f32[n, 16]):
    for io in seq(0, n):
        for ii in seq(0, 16):
            x[(16 * io + ii) / 16, (ii + 16) % 16 + 0] = y[io + 0 * ii, ii * 1]
    if n + 1 > 0:
        for k in seq(0, 0):
            x[0, 0] = 1.0
        x[0, 0] = 2.0
    if 3 < 2:
        x[0, 0] = 3.0
    else:
        y[0, 0] = 4.0 + 0.0


@proc
def ragged(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        if i + 1 - 1 < n - 1 + 1:
            y[(i + 2) / 2 * 2 - 2 + i % 2] = x[1 * i] * 1.0


def test_simplify_prints_hand_written_code():
    p = messy.simplify()
    assert str(p) == """\
def messy(n: size, x: f32[n, 16] @ DRAM, y: f32[n, 16] @ DRAM):
    for io in seq(0, n):
        for ii in seq(0, 16):
            x[io, ii] = y[io, ii]
    x[0, 0] = 2.0
    y[0, 0] = 4.0 + 0.0"""
    assert p.parent() is messy and [o for o, _ in p.derivation()][-1] == \
        "simplify"


def test_simplify_keeps_unknowable_guards():
    p = ragged.simplify()
    # i < n can only be decided from the loop bound symbolically: kept;
    # (i + 2) / 2 * 2 - 2 + i % 2 == 2 * (i / 2) + i % 2 == i, exactly
    assert str(p) == """\
def ragged(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        if i < n:
            y[i] = x[i] * 1.0"""


def test_simplify_is_idempotent():
    p = messy.simplify()
    assert str(p.simplify()) == str(p)


def test_simplify_is_equivalent(equiv):
    equiv(messy, messy.simplify(), [{"n": 1}, {"n": 3}])
    equiv(ragged, ragged.simplify(), [{"n": 1}, {"n": 6}, {"n": 7}])


def test_simplify_forwards_cursors():
    kept = messy.find("x[_] = 2.0")
    dead_loop = messy.find_loop("k")
    dead_if = messy.find("if 3 < 2: _")
    orelse_stmt = dead_if.orelse()[0]
    inner = messy.find("x[_] = y[_]")
    p = messy.simplify()
    assert p.forward(kept).path() == (("body", 1), )
    assert p.forward(kept).node() == kept.node()
    assert p.forward(orelse_stmt).path() == (("body", 2), )
    assert p.forward(inner).path() == inner.path()
    assert p.forward(messy.find_loop("io")) == p.find_loop("io")
    for gone in (dead_loop, dead_if, messy.find("if n + 1 > 0: _")):
        with pytest.raises(SchedulingError, match="no longer denotes"):
            p.forward(gone)
    # a block forwards only when every statement of it has an image
    # (docs/api.md §4): the removed ifs make the whole body invalid, the
    # surviving loop alone forwards
    with pytest.raises(SchedulingError, match="no longer denotes"):
        p.forward(messy.body())
    assert p.forward(messy.find_loop("io").as_block()).range() == (0, 1)


@proc
def all_dead(x: f32[4]):
    for i in seq(0, 4):
        if i > 10:
            x[i] = 1.0


def test_simplify_empty_body_becomes_pass():
    p = all_dead.simplify()
    assert str(p) == """\
def all_dead(x: f32[4] @ DRAM):
    for i in seq(0, 4):
        pass"""


def test_simplified_procs_round_trip(assert_roundtrip):
    assert_roundtrip(messy.simplify())
    assert_roundtrip(ragged.simplify())
    assert_roundtrip(all_dead.simplify())


@proc
def tiles(n: size, x: f32[n, 8], y: f32[n, 8]):
    assert n % 4 == 0
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            for j in seq(0, 8):
                y[(4 * io + ii) / 4 * 4 + (4 * io + ii) % 4, j] = \
                    x[io * 4 + ii, (j + 8) % 8]


def test_simplify_tiled_indices(equiv):
    p = tiles.simplify()
    assert str(p) == """\
def tiles(n: size, x: f32[n, 8] @ DRAM, y: f32[n, 8] @ DRAM):
    assert n % 4 == 0
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            for j in seq(0, 8):
                y[4 * io + ii, j] = x[4 * io + ii, j]"""
    equiv(tiles, p, [{"n": 4}, {"n": 12}])


# ----------------------------------------------------------------------
# preconditions are the caller's contract: simplify keeps rejecting exactly
# the argument values the original rejects
@proc
def guarded(N: size, M: size, x: f32[N]):
    assert N % 8 == 0
    assert M <= 8
    assert N >= 8 and M == 4
    for i in seq(0, N):
        x[i] = 1.0


def test_simplify_keeps_preconditions():
    p = guarded.simplify()
    assert str(p) == """\
def guarded(N: size, M: size, x: f32[N] @ DRAM):
    assert N % 8 == 0
    assert M <= 8
    assert N >= 8 and M == 4
    for i in seq(0, N):
        x[i] = 1.0"""
    for q in (guarded, p):
        f = q.compile()
        for run in (q.interpret, f):
            run(8, 4, np.zeros(8, np.float32))
            for n, m in ((8, 5), (16, 9), (16, 3)):
                with pytest.raises(ValueError, match="precondition"):
                    run(n, m, np.zeros(n, np.float32))


@proc
def redundant(N: size, M: size, x: f32[N]):
    assert N <= 4
    assert N < 10 and M > 0
    for i in seq(0, N):
        x[i] = 1.0


def test_simplify_uses_earlier_preconditions_only():
    # the second assert follows from the first and from M being a size
    p = redundant.simplify()
    assert "assert N <= 4\n    assert True" in str(p)


def _eval_pred(e, env):
    """The value of a control expression under ``env`` ({name: int})."""
    if isinstance(e, IR.Const):
        return e.val
    if isinstance(e, IR.Read):
        return env[e.name.name]
    if isinstance(e, IR.USub):
        return -_eval_pred(e.arg, env)
    if isinstance(e, IR.Not):
        return not _eval_pred(e.arg, env)
    a, b = _eval_pred(e.lhs, env), _eval_pred(e.rhs, env)
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
            "/": lambda: a // b, "%": lambda: a % b, "<": lambda: a < b,
            "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
            "==": lambda: a == b, "and": lambda: a and b,
            "or": lambda: a or b}[e.op]()


def _rand_int_expr(rng, depth=0):
    r = rng.random()
    if depth > 1 or r < 0.35:
        return rng.choice(["N", "M", "k", str(rng.randint(0, 9))])
    if r < 0.7:
        op = rng.choice(["+", "-"])
        return (f"({_rand_int_expr(rng, depth + 1)} {op} "
                f"{_rand_int_expr(rng, depth + 1)})")
    if r < 0.8:
        return f"{rng.randint(-3, 3)} * {_rand_int_expr(rng, depth + 1)}"
    op = rng.choice(["/", "%"])
    return f"({_rand_int_expr(rng, depth + 1)}) {op} {rng.randint(1, 8)}"


def _rand_pred(rng, depth=0):
    r = rng.random()
    if depth > 1 or r < 0.6:
        op = rng.choice(["<", "<=", ">", ">=", "=="])
        rhs = (str(rng.randint(-3, 10)) if rng.random() < 0.6
               else _rand_int_expr(rng))
        return f"{_rand_int_expr(rng)} {op} {rhs}"
    if r < 0.9:
        op = rng.choice(["and", "or"])
        return f"({_rand_pred(rng, depth + 1)}) {op} ({_rand_pred(rng, depth + 1)})"
    return f"not ({_rand_pred(rng, depth + 1)})"


def test_simplify_random_preconditions_reject_the_same_values():
    import random
    import exo_hl
    from exo_hl.frontend.decorators import parse_proc_source
    rng = random.Random(1234)
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    grid = [{"N": n, "M": m, "k": k} for n in range(1, 11)
            for m in range(1, 11) for k in range(-5, 6)]
    checked = 0
    for _ in range(150):
        preds = [_rand_pred(rng) for _ in range(rng.randint(1, 4))]
        src = ("def pre(N: size, M: size, k: int, x: f32[N]):\n"
               + "".join(f"    assert {p}\n" for p in preds)
               + "    x[0] = 1.0\n")
        p = parse_proc_source(src, scope)
        q = p.simplify()
        for env in grid:
            want = all(_eval_pred(e, env) for e in p.ir().preds)
            got = all(_eval_pred(e, env) for e in q.ir().preds)
            assert got == want, f"{env}\n{p}\n---\n{q}"
        checked += 1
        # and the interpreter agrees on a few of them
        for env in grid[::97]:
            want = all(_eval_pred(e, env) for e in p.ir().preds)
            x = np.zeros(env["N"], np.float32)
            if want:
                q.interpret(env["N"], env["M"], env["k"], x)
            else:
                with pytest.raises(ValueError, match="precondition"):
                    q.interpret(env["N"], env["M"], env["k"], x)
    assert checked == 150
