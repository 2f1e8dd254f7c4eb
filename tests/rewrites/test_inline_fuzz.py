"""Generator for ``inline``: callees with window parameters (strides
tested in guards), control parameters used in arithmetic (division of
possibly negative values, loop bounds that may be empty), a data scalar
written by reference and a config field written by the callee and read by
the caller; callers pass windows at random offsets (slices of 2-D and 3-D
buffers, point indices that drop dimensions) and control arguments that
are loop iterators. Every accepted ``inline`` must compute what the call
did (interpreter, compiled C on a few seeds)."""
from __future__ import annotations

import random

import numpy as np

from exo_hl import SchedulingError
from source_modules import load_source

HEAD = """from __future__ import annotations
from exo_hl import *

@config
class Ci:
    k: index

@proc
def g(n: size, d: index, x: [f32][n], y: [f32][n], s: f32):
    assert d >= -4
    assert d <= 4
    for i in seq(0, n):
        if stride(x, 0) == 1:
            y[i] += x[i] * 2.0
        else:
            y[i] += x[i] + 1.0
    for i in seq(0, n + d / 2 - 1):
        if i < n:
            y[i] += s
    s = s + 1.0
    Ci.k = d + 4

@proc
def g2(n: size, m: size, x: [f32][n, m], y: [f32][m]):
    for j in seq(0, m):
        for i in seq(0, n):
            y[j] += x[i, j]
        if stride(x, 1) == 1:
            y[j] = y[j] * 2.0
"""


def _call(r):
    if r.random() < 0.5:
        n = r.randint(1, 3)
        a, b = r.randint(0, 5 - n), r.randint(0, 5 - n)
        src = r.choice([f"A[{r.randint(0, 5)}, {a}:{a + n}]",
                        f"A[{a}:{a + n}, {r.randint(0, 5)}]",
                        f"B[{r.randint(0, 2)}, {a}:{a + n}, {r.randint(0, 5)}]",
                        f"B[{r.randint(0, 2)}, {r.randint(0, 5)}, {a}:{a + n}]"])
        d = r.choice(["j - 2", "-3", "1", "j", "2 - j"])
        return [f"g({n}, {d}, {src}, o[{b}:{b + n}], s)",
                f"o[Ci.k] += 1.0"]
    n, m = r.randint(1, 3), r.randint(1, 3)
    a, c = r.randint(0, 5 - n), r.randint(0, 5 - m)
    src = r.choice([f"A[{a}:{a + n}, {c}:{c + m}]",
                    f"B[{r.randint(0, 2)}, {a}:{a + n}, {c}:{c + m}]",
                    f"B[{a % 3}:{a % 3 + 1}, {r.randint(0, 5)}, {c}:{c + m}]"
                    if n == 1 else f"A[{a}:{a + n}, {c}:{c + m}]"])
    return [f"g2({n}, {m}, {src}, o[{c}:{c + m}])"]


def _text(r, name):
    lines = ["for j in seq(0, 3):"]
    for _ in range(r.randint(1, 3)):
        lines += ["    " + s for s in _call(r)]
    body = "\n".join("    " + s for s in lines)
    return (f"{HEAD}\n@proc\ndef {name}(A: f32[6, 6], B: f32[3, 6, 6], "
            f"o: f32[8], s: f32):\n{body}\n")


def _outputs(p, compiled, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (6, 6)).astype(np.float32)
    b = rng.integers(-4, 5, (3, 6, 6)).astype(np.float32)
    runs = [p.interpret] + ([p.compile()] if compiled else [])
    out = []
    for run in runs:
        o, s = np.zeros(8, np.float32), np.array([0.5], np.float32)
        run(a.copy(), b.copy(), o, s)
        out.append(np.concatenate([o, s]))
    return out


def _calls(q):
    out = []
    for pat in ("g(_)", "g2(_)"):
        try:
            out += list(q.find(pat, many=True))
        except SchedulingError:     # no such call left
            pass
    return out


def test_inline_keeps_meaning(tmp_path):
    accepted = 0
    for seed in range(40):
        r = random.Random(seed)
        text = _text(r, f"q{seed}")
        p = getattr(load_source(tmp_path, f"inl{seed}", text), f"q{seed}")
        compiled = seed < 4
        base = _outputs(p, compiled, seed)
        q = p
        for _ in range(4):
            calls = _calls(q)
            if not calls:
                break
            try:
                q = q.inline(r.choice(calls))
            except SchedulingError:
                continue
            accepted += 1
            for a, b in zip(base, _outputs(q, compiled, seed)):
                assert np.array_equal(a, b), f"seed {seed}\n{text}\n{q}"
    assert accepted >= 40, accepted
