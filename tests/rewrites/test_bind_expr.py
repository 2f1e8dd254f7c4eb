"""bind_expr: name a data expression; cse stops at writes to what it reads."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (SchedulingError, f32, f64, i8, i32, proc, seq,
                    size)


@proc
def foo(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] * 2.0 + x[i] * 2.0
        z[i] = x[i] * 2.0
        for j in seq(0, 2):
            y[i] += x[i] * 2.0
        x[i] = 3.0
        z[i] += x[i] * 2.0


def test_bind_prints_and_equiv(equiv, assert_roundtrip):
    p = foo.bind_expr("x[i] * 2.0", "t")
    assert str(p) == """\
def foo(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM, z: f32[n] @ DRAM):
    for i in seq(0, n):
        t: f32 @ DRAM
        t = x[i] * 2.0
        y[i] = t + t
        z[i] = x[i] * 2.0
        for j in seq(0, 2):
            y[i] += x[i] * 2.0
        x[i] = 3.0
        z[i] += x[i] * 2.0"""
    assert_roundtrip(p)
    equiv(foo, p, [{"n": 1}, {"n": 4}])


def test_cse_stops_at_write(equiv):
    p = foo.bind_expr("x[i] * 2.0", "t", cse=True)
    body = str(p).splitlines()
    assert body[4:] == """\
        y[i] = t + t
        z[i] = t
        for j in seq(0, 2):
            y[i] += t
        x[i] = 3.0
        z[i] += x[i] * 2.0""".splitlines()
    equiv(foo, p, [{"n": 1}, {"n": 4}])


@proc
def alias(n: size, x: f32[n, 4], y: f32[4]):
    w = x[0, 0:4]
    y[0] = x[0, 1] + 1.0
    w[1] = 5.0
    y[2] = x[0, 1] + 1.0


def test_cse_sees_writes_through_windows(equiv):
    p = alias.bind_expr("x[0, 1] + 1.0", "t", cse=True)
    assert str(p).splitlines()[-1] == "    y[2] = x[0, 1] + 1.0"
    equiv(alias, p, [{"n": 2}])


@proc
def ctl(n: size, x: f32[n], s: f32):
    for i in seq(0, n):
        x[i] = x[i] + s


@proc
def callee(s: f32):
    s = s + 1.0


@proc
def caller(s: f32, y: f32[2]):
    callee(s)
    y[0] = s


def test_bind_rejections():
    with pytest.raises(SchedulingError, match="control"):
        foo.bind_expr("i", "t")
    with pytest.raises(SchedulingError, match="reference"):
        caller.bind_expr(caller.find("callee(_)").args()[0], "t")
    with pytest.raises(SchedulingError, match="already in use"):
        foo.bind_expr("x[i] * 2.0", "z")


# ----------------------------------------------------------------------
# the new scalar holds the expression's exact value
@proc
def widen(n: size, x: i8[n], y: i8[n], z: i32[n], w: i8[n]):
    for i in seq(0, n):
        z[i] = (x[i] + y[i]) * x[i]
        w[i] = (x[i] + y[i]) * 3.0


def _run_widen(p, run):
    x = np.array([100, -100, 7], np.int8)
    y = np.array([100, -100, -9], np.int8)
    z, w = np.zeros(3, np.int32), np.zeros(3, np.int8)
    run(3, x, y, z, w)
    return z, w


def test_bind_integer_sum_is_not_narrowed(equiv):
    p = widen.bind_expr("x[i] + y[i]", "t")
    # i8 + i8 needs 9 bits: t takes the precision of the statement using it
    assert str(p).splitlines()[3:6] == [
        "        t: i32 @ DRAM", "        t = x[i] + y[i]",
        "        z[i] = t * x[i]"]
    want = _run_widen(widen, widen.interpret)
    assert list(want[0]) == [20000, 20000, -14]
    for run in (p.interpret, p.compile()):
        z, w = _run_widen(p, run)
        np.testing.assert_array_equal(z, want[0])
        np.testing.assert_array_equal(w, want[1])
    equiv(widen, p, [{"n": 5}])


def test_bind_integer_sum_for_a_narrow_store(equiv):
    # stored to i8 through + - * only: wrapping to i8 early changes nothing
    q = widen.bind_expr("x[i] + y[i] #1", "t")
    assert "t: i8 @ DRAM" in str(q)
    want = _run_widen(widen, widen.interpret)
    for run in (q.interpret, q.compile()):
        np.testing.assert_array_equal(_run_widen(q, run)[1], want[1])
    # cse over both statements: i32 serves both
    p = widen.bind_expr("x[i] + y[i]", "t", cse=True)
    assert "t: i32 @ DRAM" in str(p) and "w[i] = t * 3.0" in str(p)
    equiv(widen, p, [{"n": 5}])


@proc
def wrap_ok(n: size, a: i32[n], b: i32[n], c: i32[n]):
    for i in seq(0, n):
        c[i] += a[i] * b[i]


@proc
def wrap_bad(n: size, a: i32[n], b: i32[n], c: i32[n]):
    for i in seq(0, n):
        c[i] = (a[i] * b[i]) / b[i]


def test_bind_integer_product_wider_than_any_type():
    # i32 * i32 fits no type, but i32 wraps exactly like the store does
    p = wrap_ok.bind_expr("a[i] * b[i]", "t")
    assert "t: i32 @ DRAM" in str(p)
    # a division sees more than the value modulo 2^32: rejected
    with pytest.raises(SchedulingError, match="no precision can hold"):
        wrap_bad.bind_expr("a[i] * b[i]", "t")


@proc
def lit64(n: size, x: f64[n]):
    for i in seq(0, n):
        x[i] = x[i] * 0.1


def test_bind_literal_takes_the_precision_of_its_statement(equiv):
    # 0.1 is a double in this statement; an R (float) scalar would round it
    p = lit64.bind_expr("0.1", "c")
    assert "c: f64 @ DRAM" in str(p)
    x = np.arange(1, 6, dtype=np.float64)
    want = x.copy()
    lit64.interpret(5, want)
    for run in (p.interpret, p.compile()):
        got = x.copy()
        run(5, got)
        np.testing.assert_array_equal(got, want)


_INTS = ["i8", "ui8", "i16", "ui16", "i32"]
_RANGE = {"i8": (-128, 127), "ui8": (0, 255), "i16": (-32768, 32767),
          "ui16": (0, 65535), "i32": (-2**31, 2**31 - 1)}
_DATA_RANGE = {"i8": (-128, 127), "ui8": (0, 255), "i16": (-300, 300),
               "ui16": (0, 400), "i32": (-500, 500)}


def _rand_tree(rng, depth=0):
    """('leaf', name) / ('lit', v) / ('neg', t) / (op, t1, t2)."""
    r = rng.random()
    if depth >= 3 or r < 0.3:
        if rng.random() < 0.8:
            return ("leaf", rng.choice(["x", "y"]))
        return ("lit", rng.choice([-3, -1, 2, 5]))
    if r < 0.35:
        return ("neg", _rand_tree(rng, depth + 1))
    return (rng.choice(["+", "-", "*"]), _rand_tree(rng, depth + 1),
            _rand_tree(rng, depth + 1))


def _tree_text(t):
    if t[0] == "leaf":
        return f"{t[1]}[i]"
    if t[0] == "lit":
        return f"({t[1]}.0)" if t[1] < 0 else f"{t[1]}.0"
    if t[0] == "neg":
        return f"-({_tree_text(t[1])})"
    return f"({_tree_text(t[1])} {t[0]} {_tree_text(t[2])})"


def _tree_bound(t, ranges):
    """Interval of the tree's value over the data ranges."""
    if t[0] == "leaf":
        return ranges[t[1]]
    if t[0] == "lit":
        return (t[1], t[1])
    if t[0] == "neg":
        lo, hi = _tree_bound(t[1], ranges)
        return (-hi, -lo)
    a, b = _tree_bound(t[1], ranges), _tree_bound(t[2], ranges)
    if t[0] == "+":
        return (a[0] + b[0], a[1] + b[1])
    if t[0] == "-":
        return (a[0] - b[1], a[1] - b[0])
    ps = [u * v for u in a for v in b]
    return (min(ps), max(ps))


def _subtrees(t, path=()):
    """(expression path, subtree) of every operation node."""
    if t[0] in ("leaf", "lit"):
        return []
    out = [(path, t)]
    if t[0] == "neg":
        return out + _subtrees(t[1], path + (("arg", None), ))
    return (out + _subtrees(t[1], path + (("lhs", None), ))
            + _subtrees(t[2], path + (("rhs", None), )))


def test_bind_random_integer_widths():
    import random
    import exo_hl
    from exo_hl.cursors import ExprCursor
    from exo_hl.frontend.decorators import parse_proc_source
    rng = random.Random(7)
    nprng = np.random.default_rng(7)
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    bound, compiled, case = 0, 0, 0
    while case < 60:
        tx, ty, tz = (rng.choice(_INTS) for _ in range(3))
        ranges = {"x": _DATA_RANGE[tx], "y": _DATA_RANGE[ty]}
        tree = _rand_tree(rng)
        lo, hi = _tree_bound(tree, ranges)
        subs = _subtrees(tree)
        if not subs or max(abs(lo), abs(hi)) >= 2**31:
            continue  # keep the original free of C int overflow
        case += 1
        src = (f"def g(n: size, x: {tx}[n], y: {ty}[n], z: {tz}[n]):\n"
               f"    for i in seq(0, n):\n"
               f"        z[i] = {_tree_text(tree)}\n")
        p = parse_proc_source(src, scope)
        path, _ = rng.choice(subs)
        cur = ExprCursor(p, (("body", 0), ("body", 0)),
                         (("rhs", None), ) + path)
        try:
            q = p.bind_expr(cur, "t")
        except SchedulingError as e:
            assert "no precision can hold" in str(e)
            continue
        bound += 1
        n = 16
        x = nprng.integers(*ranges["x"], endpoint=True, size=n)
        y = nprng.integers(*ranges["y"], endpoint=True, size=n)
        x = x.astype(_np(tx))
        y = y.astype(_np(ty))
        runs = [(p.interpret, "interpret"), (q.interpret, "interpret")]
        if case % 3 == 0:
            runs += [(p.compile(), "C"), (q.compile(), "C")]
            compiled += 1
        outs = []
        for run, how in runs:
            z = np.zeros(n, _np(tz))
            run(n, x.copy(), y.copy(), z)
            outs.append((how, z))
        for how, z in outs[1:]:
            np.testing.assert_array_equal(
                z, outs[0][1], err_msg=f"{how}\n{p}\n---\n{q}")
    assert bound >= 40 and compiled >= 10


def _np(t):
    return {"i8": np.int8, "ui8": np.uint8, "i16": np.int16,
            "ui16": np.uint16, "i32": np.int32}[t]
