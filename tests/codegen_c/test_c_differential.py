"""Differential test: random data arithmetic, interpret() against C.

Seeded random procedures over i8, ui8, i16, ui16, i32 and f32 buffers use
``+ - * / %``, unary minus, literals (integral and not, huge, negative),
conversions between every pair of types (assignments, reductions, data
config fields, scalar temporaries, self-assignments) and inputs full of edge values (0, -1,
the minimum and maximum of each type, NaN, infinities, values out of every
integer range). Each procedure is compiled with the standalone driver under
``-fsanitize=address,undefined`` (any report aborts the run) and every
output must equal interpret()'s bit for bit.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

import exo_hl
from exo_hl import config, f32, i8, i16, i32, ui8, ui16
from exo_hl.frontend.decorators import parse_proc_source

from cg_helpers import sanitized_run

N = 8
TYPES = ["i8", "ui8", "i16", "ui16", "i32", "f32"]
_NP = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16, "ui16": np.uint16,
       "i32": np.int32, "f32": np.float32}
LITERALS = ["0", "1", "2", "3", "7", "-1", "-3", "100", "300", "65537",
            "2.5", "-3.75", "0.1", "1e10", "-1e10", "255.0", "2147483647"]


@config
class DiffCfg:
    v_i8: i8
    v_ui8: ui8
    v_i16: i16
    v_ui16: ui16
    v_i32: i32
    v_f32: f32


class _Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.lines = []
        self.outs = []        # (name, type)
        self.k = 0

    def leaf(self, t, scalars):
        r = self.rng.random()
        if r < 0.12:
            return f"DiffCfg.v_{t}"
        if r < 0.2 and scalars.get(t):
            return self.rng.choice(scalars[t])
        idx = self.rng.choice(["i", f"{N - 1} - i", f"(i + 3) % {N}"])
        return f"a_{t}[{idx}]"

    def expr(self, t, depth, scalars, allow_lit=True):
        r = self.rng.random()
        if depth == 0 or r < 0.25:
            if allow_lit and self.rng.random() < 0.3:
                return self.rng.choice(LITERALS)
            return self.leaf(t, scalars)
        if r < 0.35:
            return f"-({self.expr(t, depth - 1, scalars, False)})"
        op = self.rng.choice(["+", "-", "*", "/", "%", "/", "%"])
        lhs = self.expr(t, depth - 1, scalars)
        lit = lhs in LITERALS
        rhs = self.expr(t, depth - 1, scalars, allow_lit=not lit)
        return f"({lhs} {op} {rhs})"

    def stmt(self, scalars):
        rng = self.rng
        t = rng.choice(TYPES)       # precision of the expression
        u = rng.choice(TYPES)       # type of the target
        e = self.expr(t, rng.randint(1, 4), scalars)
        r = rng.random()
        # each config write and scalar is also assigned to itself (no
        # draw from the generator: the seeds keep their procedures)
        if r < 0.1:
            self.lines += [f"        DiffCfg.v_{u} = {e}",
                           f"        DiffCfg.v_{u} = DiffCfg.v_{u}"]
            return
        if r < 0.2:
            self.k += 1
            name = f"s{self.k}"
            self.lines += [f"        {name}: {u}", f"        {name} = {e}",
                           f"        {name} = {name}"]
            scalars.setdefault(u, []).append(name)
            return
        self.k += 1
        name = f"o{self.k}_{u}"
        self.outs.append((name, u))
        op = "+=" if r < 0.45 else "="
        self.lines.append(f"        {name}[i] {op} {e}")

    def source(self, n_stmts):
        scalars = {}
        for _ in range(n_stmts):
            self.stmt(scalars)
        args = [f"a_{t}: {t}[{N}]" for t in TYPES]
        args += [f"{nm}: {t}[{N}]" for nm, t in self.outs]
        head = [f"def diff_{self.rng.randint(0, 10**6)}({', '.join(args)}):"]
        inits = [f"    DiffCfg.v_{t} = a_{t}[{N - 1}]" for t in TYPES]
        return "\n".join(head + inits + [f"    for i in seq(0, {N}):"]
                         + self.lines) + "\n"


def _inputs(t, nrng):
    if t == "f32":
        pool = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.75, 7.0, 127.5,
                         -128.9, 255.9, 65535.5, 3e9, -3e9, 1e30, -1e30,
                         np.inf, -np.inf, np.nan, 1e-30], np.float32)
        rand = (nrng.standard_normal(N) *
                nrng.choice([1, 100, 1e5, 1e10], N)).astype(np.float32)
        return np.where(nrng.random(N) < 0.5, nrng.choice(pool, N), rand
                        ).astype(np.float32)
    info = np.iinfo(_NP[t])
    pool = np.array([0, 1, -1, 2, -2, 3, info.min, info.max, info.min + 1,
                     info.max - 1]).clip(info.min, info.max)
    rand = nrng.integers(info.min, int(info.max) + 1, N)
    return np.where(nrng.random(N) < 0.5, nrng.choice(pool, N), rand
                    ).astype(_NP[t])


def _scope():
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    scope["DiffCfg"] = DiffCfg
    return scope


@pytest.mark.parametrize("seed", range(6))
def test_random_arithmetic_interpreter_equals_sanitized_c(tmp_path, seed):
    gen = _Gen(seed)
    src = gen.source(24)
    p = parse_proc_source(src, _scope())
    nrng = np.random.default_rng(seed)
    args = {f"a_{t}": _inputs(t, nrng) for t in TYPES}
    for nm, t in gen.outs:
        args[nm] = _inputs(t, nrng)
    want = {k: v.copy() for k, v in args.items()}
    with np.errstate(all="ignore"):
        p.interpret(**want)
    got = sanitized_run(tmp_path, p, args)
    assert set(got) == {nm for nm, _ in gen.outs}
    for nm, t in gen.outs:
        np.testing.assert_array_equal(
            np.array(got[nm], dtype=_NP[t]), want[nm],
            err_msg=f"{nm} differs (seed {seed}) in\n{src}")
