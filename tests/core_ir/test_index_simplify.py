"""The index-expression simplifier: readable canonical forms, and never a
wrong rewrite (checked by brute-force evaluation over whole domains)."""
from __future__ import annotations

import itertools
import random

import pytest

from exo_hl import proc, seq, size, f32  # noqa: F401
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.printer import expr_to_str
from exo_hl.core_ir.simplify import (const_value, env_at, expr_range,
                                     proc_env, simplify_expr, with_loop)
from exo_hl.core_ir.syms import Sym


# ----------------------------------------------------------------------
# a tiny expression DSL over IR nodes
class E:
    def __init__(self, node):
        self.node = node

    @staticmethod
    def lift(x):
        if isinstance(x, E):
            return x.node
        if isinstance(x, bool):
            return IR.Const(x, type=IR.Bool)
        return IR.Const(x, type=IR.Int)

    def _bin(self, op, other, rev=False, typ=IR.Index):
        a, b = self.node, E.lift(other)
        if rev:
            a, b = b, a
        return E(IR.BinOp(op, a, b, type=typ))

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __floordiv__(self, o): return self._bin("/", o)
    def __mod__(self, o): return self._bin("%", o)
    def __neg__(self): return E(IR.USub(self.node, type=IR.Index))
    def __lt__(self, o): return self._bin("<", o, typ=IR.Bool)
    def __le__(self, o): return self._bin("<=", o, typ=IR.Bool)
    def __gt__(self, o): return self._bin(">", o, typ=IR.Bool)
    def __ge__(self, o): return self._bin(">=", o, typ=IR.Bool)
    def eq(self, o): return self._bin("==", o, typ=IR.Bool)
    def and_(self, o): return self._bin("and", o, typ=IR.Bool)
    def or_(self, o): return self._bin("or", o, typ=IR.Bool)


def var(name, typ=IR.Index):
    s = Sym(name)
    return s, E(IR.Read(s, (), type=typ))


def C(v):
    return E(E.lift(v))


def evaluate(e, env):
    """Reference semantics: Python ints with floor division/modulo."""
    if isinstance(e, IR.Const):
        return e.val
    if isinstance(e, IR.Read):
        return env[e.name]
    if isinstance(e, IR.USub):
        return -evaluate(e.arg, env)
    if isinstance(e, IR.Not):
        return not evaluate(e.arg, env)
    a, b = evaluate(e.lhs, env), evaluate(e.rhs, env)
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
            "/": lambda: a // b, "%": lambda: a % b, "<": lambda: a < b,
            "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
            "==": lambda: a == b, "and": lambda: a and b,
            "or": lambda: a or b}[e.op]()


def S(e, env=None):
    return expr_to_str(simplify_expr(e.node if isinstance(e, E) else e, env))


# ----------------------------------------------------------------------
# readable canonical forms
def test_affine_canonical_order_and_folding():
    io, IO = var("io")
    ii, II = var("ii")
    n, N = var("n", IR.Size)
    assert S(IO * 16 + II + 0) == "16 * io + ii"
    assert S(II + 16 * IO) == "16 * io + ii"
    assert S(1 + II) == "ii + 1"
    assert S(II + 1 - 1) == "ii"
    assert S(N - II) == "n - ii"
    assert S(II - N) == "ii - n"
    assert S(5 - II) == "5 - ii"
    assert S(-II - 1) == "-ii - 1"
    assert S(2 * (II + 3)) == "2 * ii + 6"
    assert S(C(3) - 3) == "0"
    assert S(C(7) // 2 + C(7) % 2) == "4"
    assert S(II - II) == "0"
    assert S((IO + 1) * 4 - 4 * IO) == "4"


def test_div_mod_exact_without_ranges():
    io, IO = var("io")
    ii, II = var("ii")
    # multiples of the divisor come out of / and drop out of %, always exact
    assert S((16 * IO + II) // 16) == "io + ii / 16"
    assert S((16 * IO + II) % 16) == "ii % 16"
    assert S((32 * IO + 16) // 16) == "2 * io + 1"
    assert S((II // 4) // 2) == "ii / 8"
    assert S(II % 1) == "0"
    assert S(II // 1) == "ii"


def test_div_mod_with_known_ranges():
    io, IO = var("io")
    ii, II = var("ii")
    env = {ii: (0, 15)}
    assert S((16 * IO + II) // 16, env) == "io"
    assert S((16 * IO + II) % 16, env) == "ii"
    assert S((II + 16) % 16, env) == "ii"
    assert S((II + 16) // 16, env) == "1"
    assert S(II // 16 + IO, env) == "io"
    assert S((4 * IO + II // 4) // 4, {ii: (0, 15)}) == "io"


def test_no_rewrite_when_range_unknown_or_negative():
    io, IO = var("io")
    ii, II = var("ii")
    # ii may be -1: (16*io - 1) / 16 == io - 1, so folding would be wrong
    assert S((16 * IO + II) // 16, {ii: (-1, 14)}) == "io + ii / 16"
    assert S((16 * IO + II) % 16, {ii: (-1, 14)}) == "ii % 16"
    # ii may reach 16
    assert S((16 * IO + II) // 16, {ii: (0, 16)}) == "io + ii / 16"
    # unknown upper bound
    assert S(II % 16, {ii: (0, None)}) == "ii % 16"
    # a whole known range shifted by a multiple of c folds exactly
    assert S(II // 4, {ii: (-4, -1)}) == "-1"
    assert S(II % 4, {ii: (-4, -1)}) == "ii + 4"


def test_comparisons():
    i, I = var("i")
    n, N = var("n", IR.Size)
    assert S(I < 16, {i: (0, 15)}) == "True"
    assert S(I >= 16, {i: (0, 15)}) == "False"
    assert S(I < 15, {i: (0, 15)}) == "i < 15"
    assert S(I + 1 < N + 1) == "i < n"
    assert S(16 * I + 3 < N) == "16 * i + 3 < n"
    assert S((I + 2).eq(I + 2)) == "True"
    assert S(C(3) <= 2) == "False"
    # sizes are positive: n >= 1 is known from the environment
    assert S(N > 0, {n: (1, None)}) == "True"
    assert S(N > 1, {n: (1, None)}) == "n > 1"


def test_booleans():
    b, B = var("b", IR.Bool)
    t, f = C(True), C(False)
    assert S(B.and_(t)) == "b"
    assert S(t.and_(B)) == "b"
    assert S(B.and_(f)) == "False"
    assert S(B.or_(t)) == "True"
    assert S(B.or_(f)) == "b"
    assert S(E(IR.Not(IR.Not(B.node, type=IR.Bool), type=IR.Bool))) == "b"
    assert S(E(IR.Not(t.node, type=IR.Bool))) == "False"
    i, I = var("i")
    assert S((I < 4).and_(B), {i: (0, 3)}) == "b"


def test_data_expressions_untouched_but_indices_normalized():
    a = Sym("A")
    i, I = var("i")
    rd = IR.Read(a, ((I + 0).node, (2 * (I + 1) - 2).node), type=IR.F32)
    one = IR.Const(0.0, type=IR.Num)
    e = IR.BinOp("+", IR.BinOp("*", rd, IR.Const(1.0, type=IR.Num),
                               type=IR.F32), one, type=IR.F32)
    assert S(e) == "A[i, 2 * i] * 1.0 + 0.0"


def test_ranges_and_const_value():
    i, I = var("i")
    assert expr_range((4 * I + 3).node, {i: (0, 3)}) == (3, 15)
    assert expr_range((-I).node, {i: (0, 3)}) == (-3, 0)
    assert expr_range((I % 4).node, {}) == (0, 3)
    assert expr_range(I.node, {}) == (None, None)
    assert const_value(((I + 8) // 8).node, {i: (0, 7)}) == 1
    assert const_value((I + 1).node, {}) is None


def test_env_from_proc_and_loops():
    @proc
    def p(n: size, m: size, x: f32[n, m]):
        assert m <= 16
        for i in seq(0, n):
            for j in seq(2, m):
                x[i, j] = 0.0

    ir = p.ir()
    env = proc_env(ir)
    syms = {a.name.name: a.name for a in ir.args}
    assert env[syms["n"]] == (1, None)
    assert env[syms["m"]] == (1, 16)
    inner = ir.body[0].body[0]
    e2 = env_at(ir, (("body", 0), ("body", 0), ("body", 0)))
    assert e2[ir.body[0].iter] == (0, None)
    assert e2[inner.iter] == (2, 15)
    assert with_loop({}, inner.iter, IR.Const(0, type=IR.Int),
                     IR.Const(4, type=IR.Int))[inner.iter] == (0, 3)


# ----------------------------------------------------------------------
# soundness: the simplified expression equals the original everywhere
def _random_expr(rng, leaves, depth):
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.7:
            return rng.choice(leaves)
        return C(rng.randint(-6, 6))
    a = _random_expr(rng, leaves, depth - 1)
    k = rng.random()
    if k < 0.25:
        return a + _random_expr(rng, leaves, depth - 1)
    if k < 0.4:
        return a - _random_expr(rng, leaves, depth - 1)
    if k < 0.55:
        return rng.randint(-4, 5) * a
    if k < 0.75:
        return a // rng.randint(1, 6)
    if k < 0.9:
        return a % rng.randint(1, 6)
    return -a


def _random_bool(rng, leaves, depth):
    a = _random_expr(rng, leaves, depth)
    b = _random_expr(rng, leaves, depth)
    op = rng.choice(["<", "<=", ">", ">=", "=="])
    return E(IR.BinOp(op, a.node, b.node, type=IR.Bool))


DOMAINS = [
    {"x": (0, 7), "y": (0, 3)},          # loop-like, non-negative
    {"x": (-5, 4), "y": (-3, 3)},        # negatives
    {"x": (1, 9), "y": (-2, 0)},
]


@pytest.mark.parametrize("dom", range(len(DOMAINS)))
@pytest.mark.parametrize("known", [True, False])
def test_bruteforce_soundness(dom, known):
    rng = random.Random(1000 * dom + known)
    xs, X = var("x")
    ys, Y = var("y")
    syms = {"x": xs, "y": ys}
    ranges = DOMAINS[dom]
    env = {syms[k]: v for k, v in ranges.items()} if known else {}
    points = [dict(zip((xs, ys), pt)) for pt in itertools.product(
        range(ranges["x"][0], ranges["x"][1] + 1),
        range(ranges["y"][0], ranges["y"][1] + 1))]
    changed = 0
    for trial in range(150):
        e = (_random_bool if trial % 4 == 0 else _random_expr)(
            rng, [X, Y], 4).node
        s = simplify_expr(e, env)
        changed += s != e
        for pt in points:
            assert evaluate(s, pt) == evaluate(e, pt), (
                f"{expr_to_str(e)}  ~>  {expr_to_str(s)} wrong at "
                f"x={pt[xs]}, y={pt[ys]}")
        # idempotent: simplifying again changes nothing
        assert simplify_expr(s, env) == s
    assert changed > 50  # the test exercises real rewrites
