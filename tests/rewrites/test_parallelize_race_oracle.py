"""``parallelize`` against the interpreter's exact race oracle.

Random loop bodies over one loop ``i``: element reads and writes at affine
and divided indices, ``+=``, windows made inside and outside the loop (one
of a 2-d buffer's rows or columns too), calls writing, copying and reducing
through windows, data scalars written directly and by reference (a
parameter, an allocation before the loop, one private to the iteration),
config fields, guards and an inner loop. Each body is parallelized, and
separately run with its loop made ``par`` by hand under
``ConfigState.race_check`` (``RaceError`` when two iterations touch one
location, one writing) for several sizes. An accepted loop must run clean
(else the effect analysis missed a race); a refused one should show a race
(a refusal the recorder does not confirm is only imprecision, or a race
at a size not run: counted, not failed). The same body written with a
``par`` loop in the source goes through the parser's race check: accepted
means clean too.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from exo_hl import (SchedulingError, config, f32, index, par, proc, seq,
                    size)
from exo_hl.core_ir.interpret import ConfigState, RaceError, run_interpreter
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.traversal import map_node
from exo_hl.errors import ExoError
from exo_hl.frontend.decorators import parse_proc_source


@proc
def set_scalar(a: f32):
    a = 1.0


@proc
def add_scalar(a: f32, b: [f32][2]):
    a += b[0]


@proc
def wr2(b: [f32][2]):
    b[0] = 1.0
    b[1] = 2.0


@proc
def cp2(a: [f32][2], b: [f32][2]):
    b[0] = a[0]
    b[1] = a[1]


@proc
def red2(a: [f32][2], b: [f32][2]):
    b[0] += a[0] + a[1]


@config
class RO:
    f: f32
    k: index


SCOPE = dict(f32=f32, seq=seq, par=par, size=size, set_scalar=set_scalar,
             wr2=wr2, cp2=cp2, red2=red2, add_scalar=add_scalar, RO=RO)

#: indices into x, y (2N + 4 elements), and window starts (2 more fit)
_IDX = ["i", "i + 1", "i + 2", "2 * i", "2 * i + 1", "0", "1", "N", "i / 2",
        "N - 1 - i", "N + i"]
_WIN = ["i", "i + 1", "2 * i", "2 * i + 1", "0", "N", "i / 2", "N - 1 - i",
        "N + i", "2 * i + 2"]
#: indices into A (N + 4 by N + 4)
_IDX2 = ["i, 0", "i, 1", "0, i", "i, i", "i + 1, 0", "1, i", "i / 2, 0"]
_SCALAR = ["set_scalar(t)", "t = x[i]", "y[i] = t", "t += x[i]",
           "set_scalar(s)", "s = x[i]", "y[i] = s", "u = x[i]",
           "set_scalar(u)", "y[i] = u"]
_ROWCOL = ["wr2(A[i, 0:2])", "wr2(A[0:2, i])", "wr2(A[i, i:i + 2])",
           "wr2(A[i:i + 2, 1])", "cp2(A[i, 0:2], A[0:2, i])",
           "cp2(A[0:2, i], A[i + 2, 0:2])", "red2(A[i, 2:4], A[1, i:i + 2])"]


def _stmt(rng, nested=False):
    """Source lines of one random statement of the loop body."""
    k = rng.randrange(20)
    b1, b2 = rng.choice("xy"), rng.choice("xy")
    ix, win = (lambda: rng.choice(_IDX)), (lambda: rng.choice(_WIN))
    if k == 0:
        return [f"{b1}[{ix()}] = {b2}[{ix()}]"]
    if k == 1:
        return [f"{b1}[{ix()}] += {b2}[{ix()}]"]
    if k == 2:
        return [f"{b1}[{ix()}] = {b1}[{ix()}] * 2.0"]
    if k == 3:
        return [f"A[{rng.choice(_IDX2)}] = {b2}[{ix()}]"]
    if k == 4:
        return [f"A[{rng.choice(_IDX2)}] += A[{rng.choice(_IDX2)}]"]
    if k == 5:
        o = win()
        return [f"w = {b1}[{o}:{o} + 2]",
                f"w[{rng.randrange(2)}] = {b2}[{ix()}]"]
    if k == 6:
        o = win()
        return [f"wr2({b1}[{o}:{o} + 2])"]
    if k in (7, 8):
        o, o2 = win(), win()
        f = "cp2" if k == 7 else "red2"
        return [f"{f}({b1}[{o}:{o} + 2], {b2}[{o2}:{o2} + 2])"]
    if k == 9:
        return [rng.choice(_SCALAR)]
    if k == 10:
        o = win()
        return [f"add_scalar({rng.choice('tsu')}, {b1}[{o}:{o} + 2])"]
    if k == 11:
        return [rng.choice(["RO.f = x[i]", "y[i] = RO.f", "RO.k = 1",
                            f"{b1}[RO.k] = 2.0"])]
    if k == 12:
        return [rng.choice([f"v[{ix()}] = {b2}[{ix()}]",
                            f"{b1}[{ix()}] = v[{ix()}]",
                            f"v[{ix()}] += 1.0"])]
    if k == 13:
        return [rng.choice(_ROWCOL)]
    if k == 14:
        return [rng.choice(["r = A[i, 0:4]", "r = A[0:4, i]",
                            "r = A[i / 2, 0:4]"]),
                rng.choice(["r[0] = 1.0", "r[1] += x[i]", "r[i % 4] = 1.0",
                            "wr2(r[1:3])"])]
    if k == 15 and not nested:
        cond = rng.choice(["i == 0", "i < 2", "i % 2 == 0", "i > N - 2",
                           "i == N - 1"])
        return [f"if {cond}:"] + ["    " + s for s in _stmt(rng, True)]
    if k == 16 and not nested:
        body = rng.choice([f"A[i, j] += {b2}[j]", f"{b1}[j] += A[i, j]",
                           f"A[j, i] = {b2}[i + j]", f"{b1}[i + j] = 1.0",
                           f"{b1}[2 * i + j / 2] = {b2}[j]",
                           "A[i, j] = A[i + 1, j]"])
        return ["for j in seq(0, 2):", "    " + body]
    o = rng.choice(["i", "2 * i", "2 * i + 1", "N + i"])
    return [f"{b1}[{o}] = {b2}[{ix()}] + 1.0"]


def _draw(rng):
    body = [ln for _ in range(rng.randint(1, 3)) for ln in _stmt(rng)]
    return "\n".join(
        ["def gen(N: size, x: f32[2 * N + 4], y: f32[2 * N + 4], "
         "A: f32[N + 4, N + 4], t: f32):",
         "    s: f32", "    s = x[0]", "    v = y[2:2 * N + 4]",
         "    for i in seq(0, N):", "        u: f32"]
        + ["        " + ln for ln in body]) + "\n"


def _race(ir, sizes=(1, 2, 3, 4, 5)):
    """The recorder's message for the first size whose run races, or
    None."""
    for n in sizes:
        st = ConfigState()
        st.race_check = True
        rng = np.random.default_rng(n)
        args = [n] + [rng.integers(0, 4, shape).astype(np.float32)
                      for shape in (2 * n + 4, 2 * n + 4, (n + 4, n + 4))]
        try:
            run_interpreter(ir, args + [np.zeros((), np.float32)],
                            config_state=st)
        except RaceError as e:
            return f"N = {n}: {e}"
    return None


def _by_hand(ir):
    """``ir`` with loop ``i`` made par, unchecked."""
    def fn(n):
        if isinstance(n, IR.For) and n.iter.name == "i":
            return n.update(mode=IR.Par)
        return None
    return map_node(ir, fn)


@pytest.mark.no_c_audit("hundreds of random procedures, checked in the "
                        "interpreter's race oracle")
def test_parallelize_agrees_with_the_race_recorder():
    rng = random.Random(20261129)
    seen = dict(accepted=0, refused_racy=0, refused_clean=0, parsed_par=0)
    for _ in range(800):
        src = _draw(rng)
        try:
            p = parse_proc_source(src, SCOPE)
        except ExoError:
            continue        # an index the bounds check cannot prove
        try:
            q = p.parallelize(p.find_loop("i"))
        except SchedulingError:
            racy = _race(_by_hand(p.ir()))
            seen["refused_racy" if racy else "refused_clean"] += 1
            q = None
        if q is not None:
            seen["accepted"] += 1
            race = _race(q.ir())
            assert race is None, \
                f"parallelize accepted a race ({race}):\n{src}"
        src = src.replace("for i in seq(0, N):", "for i in par(0, N):")
        try:
            q = parse_proc_source(src, SCOPE)
        except ExoError:
            continue
        seen["parsed_par"] += 1
        race = _race(q.ir())
        assert race is None, f"the parser accepted a race ({race}):\n{src}"
    print(f"\n[parallelize vs race_check] {seen}")
    assert seen["accepted"] >= 120 and seen["refused_racy"] >= 300, seen
    assert seen["parsed_par"] >= 120, seen
