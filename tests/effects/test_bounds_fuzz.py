"""Random differential testing of the bounds checker (exo_hl.effects.bounds).

Small procedures are generated as source text: size and index arguments
with preconditions, nested seq/par loops whose bounds use sizes, constants,
``/`` and ``%``, if guards (some of which make an access safe only on some
paths), quasi-affine indices, windows and windows of windows, allocations,
calls to sub-procedures with their own preconditions and window parameters
(one with a ``stride`` precondition), config fields written directly, by
callees and in loops, and read in bounds, guards and indices. Every
procedure ``@proc`` accepts is run by ``interpret()`` on argument values
satisfying its preconditions (the smallest ones first): the interpreter
raises on any out-of-bounds access (numpy views of the exact extent, and a
check of negative indices) and on a callee precondition that fails, so no
accepted procedure may raise. A fixed seed keeps it deterministic.
"""
from __future__ import annotations

import importlib.util
import itertools
import random
import sys

import numpy as np
import pytest

from exo_hl.core_ir.interpret import ConfigState
from exo_hl.errors import BoundsError, ExoTypeError

SEED = 20261127
COUNT = 32          # procedures generated
TRIES = 12          # argument tuples run per accepted procedure

SUBS_NAME = "_bounds_fuzz_subs"
SUBS = 'from __future__ import annotations\nfrom exo_hl import *\n\n\n@config\nclass FCfg:\n    k: index\n\n\n@proc\ndef s_row(n: size, x: [f32][n]):\n    assert n >= 2\n    for k in seq(0, n - 1):\n        x[k + 1] += x[k]\n\n\n@proc\ndef s_blk(n: size, m: size, x: [f32][n, m]):\n    assert n % 2 == 0\n    for a in seq(0, n / 2):\n        for b in seq(0, m):\n            x[2 * a + 1, b] = x[2 * a, b]\n\n\n@proc\ndef s_unit(n: size, x: [f32][n]):\n    assert stride(x, 0) == 1\n    for k in seq(0, n):\n        x[k] = 0.0\n\n\n@proc\ndef s_off(n: size, o: index, x: [f32][n]):\n    assert o >= 0\n    assert o < n\n    x[o] = 1.0\n    x[n - 1 - o] = 2.0\n\n\n@proc\ndef s_cfg(n: size, x: [f32][n]):\n    assert FCfg.k >= 0\n    assert FCfg.k < n\n    x[FCfg.k] = 3.0\n\n\n@proc\ndef s_win(n: size, x: [f32][n, 4]):\n    assert n >= 1\n    w = x[n - 1, 1:4]\n    for k in seq(0, 3):\n        w[k] = x[0, k]\n\n\n@proc\ndef s_setk(v: index):\n    FCfg.k = v\n\n\n@proc\ndef s_setk_if(n: size, v: index):\n    if n > 3:\n        FCfg.k = v\n    else:\n        FCfg.k = 0\n\n\n@proc\ndef s_loopk(n: size, x: [f32][n]):\n    for k in seq(0, n):\n        FCfg.k = k\n        x[k] = 1.0\n'

SIZES = ["N", "M"]
PRECONDS = ["N % 4 == 0", "M >= 2", "N == 2 * M", "N >= M", "M % 2 == 0",
            "N >= 3", "o >= 0", "o < N", "o < M", "o >= 1", "N + M <= 12",
            "M <= N - 1", "N % 3 == 1"]
DIMS = ["N", "M", "N + 1", "2 * M", "4", "M + 2", "N / 2 + 1"]


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.n = 0
        self.cfg_set = False

    def fresh(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def size(self):
        return self.rng.choice(SIZES)

    def idx(self, vs, bufdims=None):
        r = self.rng
        S = self.size()
        v = r.choice(vs) if vs else None
        u = r.choice(vs) if vs else None
        t = [f"{S} - 1", "0", "1", f"{S} / 2", "o", f"{S} - 1 - o"]
        if v:
            t += [v, v, v, f"{v} + 1", f"{v} - 1", f"{v} + {u} - 1",
                  f"({v} + 3) / 2", f"{S} - 1 - {v}", f"{v} % 4",
                  f"4 * ({v} / 4) + {v} % 4", f"{v} / 2", f"2 * {v}",
                  f"{v} + o", f"{v} + {u}", f"{S} - {v}", f"({v} - 3) / 2",
                  f"({v} - 1) % 3", f"-{v} + {S} - 1", f"(-{v} + 7) / 2",
                  f"({S} - {v}) % {S}" if False else f"(-{v}) % 4",
                  f"3 * {v} - 2 * {v}", f"({v} + 8) % 4 + 4 * ({v} / 4)",
                  f"(({v} + 5) / 2) / 3", f"({v} % 8) % 3", f"{v} - {S} / 2", f"(2 * {v} + 1) / 2"]
        if r.random() < 0.3:
            t += ["FCfg.k", "FCfg.k + 1", f"FCfg.k - {S}"]
        return r.choice(t)

    def bound(self, vs):
        r = self.rng
        S = self.size()
        t = ["N", "M", f"{S} - 1", f"{S} / 2", f"({S} + 3) / 4", f"{S} + 1",
             "4", "o", f"{S} - o", f"{S} % 4"]
        if vs:
            v = r.choice(vs)
            t += [v, f"{v} + 1", f"{S} - {v}"]
        if r.random() < 0.3:
            t += ["FCfg.k", "FCfg.k + 1"]
        return r.choice(t)

    def cond(self, vs):
        r = self.rng
        S = self.size()
        t = [f"{S} > 4", f"o < {S}", f"o >= 1", f"{S} % 2 == 0",
             f"FCfg.k < {S}", "FCfg.k >= 0", f"FCfg.k == {S} - 1"]
        if vs:
            v = r.choice(vs)
            u = r.choice(vs)
            t += [f"{v} != {S} - 1", f"0 <= {v} - 1 < {S}",
                  f"{S} > {v} + 1 >= 1", f"-{v} > -{S} + 1", f"{v} + {u} < {S}", f"{v} % 2 == 0",
                  f"{v} >= 1", f"{v} < {u}", f"{v} / 2 < {S} / 2",
                  f"{v} < {S} - 1 and {v} >= 1", f"not {v} < {S} - 1",
                  f"{v} + 1 < {S} or {v} == 0"]
        return r.choice(t)

    def access(self, bufs, vs, guards):
        name, dims = self.rng.choice(bufs)
        ix = [self.idx(vs) for _ in dims]
        for i, d in zip(ix, dims):
            self.guard(guards, f"0 <= {i}", f"{i} < {d}")
        return f"{name}[{', '.join(ix)}]"

    def guard(self, guards, *conds):
        r = self.rng
        for c in conds:
            sides = [c.split(op, 1) for op in (" == ", " <= ", " < ")
                     if op in c]
            if sides and sides[0][0] == sides[0][1]:
                continue    # x == x: C compilers warn on self-comparisons
            if r.random() < 0.75:
                if r.random() < 0.05:
                    c = c.replace(" < ", " <= ")
                c = self.variant(c)
                guards.append(c)

    def variant(self, c):
        r = self.rng
        x = r.random()
        for op, flip in ((" <= ", " >= "), (" < ", " > ")):
            if op in c:
                a, b = c.split(op, 1)
                if x < 0.15:
                    return f"{b}{flip}{a}"
                if x < 0.25:
                    neg = {" <= ": " > ", " < ": " >= "}[op]
                    return f"not {a}{neg}{b}"
                if x < 0.32 and op == " < ":
                    return f"{a} + 1 <= {b}"
                if x < 0.38 and op == " < ":
                    return f"{a} != {b} and {a} <= {b}"
                if x < 0.44 and op == " < ":
                    return f"{a} <= {b} - 1"
                if x < 0.48:
                    return f"-({a}){op}-({a}) + ({b}) - ({a})"
                return c
        return c

    def wrap(self, ind, guards, stmts):
        if not guards:
            return [ind + s for s in stmts]
        form = self.rng.random()
        if form < 0.6:
            return [f"{ind}if {' and '.join(guards)}:"] + \
                [ind + "    " + s for s in stmts]
        out, cur = [], ind
        for g in guards:
            out.append(f"{cur}if {g}:")
            cur += "    "
        return out + [cur + s for s in stmts]

    def block(self, bufs, vs, ind, depth, n):
        out = []
        for _ in range(n):
            out += self.stmt(bufs, vs, ind, depth)
        return out or [ind + "pass"]

    def stmt(self, bufs, vs, ind, depth):
        r = self.rng
        k = r.random()
        if depth < 3 and k < 0.3:
            it = self.fresh("i")
            kind = "par" if r.random() < 0.1 else "seq"
            lo = r.choice(["0", "0", "0", "1", "2", "o"])
            head = f"{ind}for {it} in {kind}({lo}, {self.bound(vs)}):"
            return [head] + self.block(bufs, vs + [it], ind + "    ",
                                       depth + 1, r.randint(1, 2))
        if depth < 3 and k < 0.45:
            out = [f"{ind}if {self.cond(vs)}:"]
            out += self.block(bufs, vs, ind + "    ", depth + 1, 1)
            if r.random() < 0.5:
                out += [f"{ind}else:"]
                out += self.block(bufs, vs, ind + "    ", depth + 1, 1)
            return out
        if k < 0.6:
            # a window, then accesses through it
            name, dims = r.choice(bufs)
            w = self.fresh("w")
            parts, wdims, guards = [], [], []
            for d, D in enumerate(dims):
                if r.random() < 0.6 or (d == len(dims) - 1 and not wdims):
                    lo = self.idx(vs)
                    if r.random() < 0.5:
                        lo = r.choice(["0", "1", "o"])
                    hi = r.choice([self.bound(vs), f"{lo} + 2", self.size(),
                                   f"{lo} + 1"])
                    parts.append(f"{lo}:{hi}")
                    self.guard(guards, f"0 <= {lo}", f"{lo} <= {hi}",
                               f"{hi} <= {D}")
                    wdims.append(f"{hi} - ({lo})")
                else:
                    i = self.idx(vs)
                    parts.append(i)
                    self.guard(guards, f"0 <= {i}", f"{i} < {D}")
            inner = [f"{w} = {name}[{', '.join(parts)}]"]
            nb = bufs + [(w, wdims)]
            inner += self.block(nb, vs, "", depth, r.randint(1, 2))
            return self.wrap(ind, guards, inner)
        if k < 0.72:
            return self.call(bufs, vs, ind)
        if k < 0.8:
            c = r.random()
            if c < 0.5:
                return [f"{ind}FCfg.k = {self.idx(vs)}"]
            if c < 0.6:
                return [f"{ind}FCfg.k = FCfg.k + 1"]
            if c < 0.75:
                return [f"{ind}s_setk({self.idx(vs)})"]
            if c < 0.85:
                return [f"{ind}s_setk_if({self.size()}, {self.idx(vs)})"]
            if c < 0.93:
                t = self.fresh("t")
                d = [self.bound(vs) for _ in range(r.randint(1, 2))]
                g = []
                self.guard(g, *[f"{x} >= 1" for x in d])
                inner = [f"{t}: f32[{', '.join(d)}] @ DRAM"]
                inner += self.block(bufs + [(t, d)], vs, "", depth,
                                    r.randint(1, 2))
                return self.wrap(ind, g, inner)
            S = self.size()
            g = []
            self.guard(g, f"{S} <= {bufs[1][1][0]}")
            return self.wrap(ind, g, [f"s_loopk({S}, B[0:{S}])"])
        op = r.choice(["=", "+="])
        guards = []
        st = (f"{self.access(bufs, vs, guards)} {op} "
              f"{self.access(bufs, vs, guards)} + 1.0")
        return self.wrap(ind, guards, [st])

    def call(self, bufs, vs, ind):
        r = self.rng
        two = [b for b in bufs if len(b[1]) == 2]
        name, dims = r.choice(bufs)
        which = r.choice(["row", "blk", "unit", "off", "cfg", "win"])
        lo = r.choice(["0", "1", "o", self.idx(vs)])
        hi = r.choice([self.bound(vs), f"{lo} + 2", self.size()])
        ext = r.choice([f"{hi} - ({lo})", f"{hi} - ({lo})", self.bound(vs)])
        g = []
        if which in ("blk", "win") and two:
            name, dims = r.choice(two)
            lo2 = r.choice(["0", "1"])
            hi2 = r.choice([f"{lo2} + 4", self.bound(vs), self.size()])
            ext2 = r.choice([f"{hi2} - {lo2}", "4", self.bound(vs)])
            self.guard(g, f"0 <= {lo}", f"{lo} <= {hi}", f"{hi} <= {dims[0]}",
                       f"{lo2} <= {hi2}", f"{hi2} <= {dims[1]}",
                       f"{ext} == {hi} - ({lo})", f"{ext2} == {hi2} - {lo2}",
                       f"{ext} >= 1", f"{ext2} >= 1")
            if which == "blk":
                self.guard(g, f"({ext}) % 2 == 0")
                st = (f"s_blk({ext}, {ext2}, "
                      f"{name}[{lo}:{hi}, {lo2}:{hi2}])")
            else:
                self.guard(g, f"{ext2} == 4")
                st = f"s_win({ext}, {name}[{lo}:{hi}, {lo2}:{hi2}])"
            return self.wrap(ind, g, [st])
        self.guard(g, f"0 <= {lo}", f"{lo} <= {hi}", f"{hi} <= {dims[-1]}",
                   f"{ext} == {hi} - ({lo})", f"{ext} >= 1")
        pre = [self.idx(vs) for _ in range(len(dims) - 1)]
        for i, D in zip(pre, dims):
            self.guard(g, f"0 <= {i}", f"{i} < {D}")
        pre = ", ".join(pre)
        win = f"{name}[{pre + ', ' if pre else ''}{lo}:{hi}]"
        if len(dims) == 2 and r.random() < 0.3:
            i = self.idx(vs)
            g = []
            self.guard(g, f"0 <= {lo}", f"{lo} <= {hi}", f"{hi} <= {dims[0]}",
                       f"{ext} == {hi} - ({lo})", f"{ext} >= 1",
                       f"0 <= {i}", f"{i} < {dims[1]}")
            win = f"{name}[{lo}:{hi}, {i}]"
        if which == "off":
            o = self.idx(vs)
            self.guard(g, f"0 <= {o}", f"{o} < {ext}")
            return self.wrap(ind, g, [f"s_off({ext}, {o}, {win})"])
        if which == "cfg":
            pre = []
            if not self.cfg_set:
                self.cfg_set = True
                pre = [f"{ind}FCfg.k = {self.idx(vs)}"]
            self.guard(g, "FCfg.k >= 0", f"FCfg.k < {ext}")
            return pre + self.wrap(ind, g, [f"s_cfg({ext}, {win})"])
        if which == "unit":
            return self.wrap(ind, g, [f"s_unit({ext}, {win})"])
        self.guard(g, f"{ext} >= 2")
        return self.wrap(ind, g, [f"s_row({ext}, {win})"])

    def proc(self, name):
        r = self.rng
        pre = r.sample(PRECONDS, r.randint(0, 3))
        dA = (r.choice(DIMS), r.choice(DIMS))
        dB = r.choice(DIMS + ["N + M", "8"])
        wC = r.random() < 0.3
        args = f"N: size, M: size, o: index, A: f32[{dA[0]}, {dA[1]}], " \
               f"B: f32[{dB}]"
        bufs = [("A", list(dA)), ("B", [dB])]
        if wC:
            args += ", C: [f32][M, 3]"
            bufs.append(("C", ["M", "3"]))
        body = [f"    assert {p}" for p in pre]
        body += self.block(bufs, [], "    ", 0, r.randint(1, 3))
        src = [f"@proc", f"def {name}({args}):"] + body
        return "\n".join(src), dict(pre=pre, dA=dA, dB=dB, wC=wC)



HEADER = ("from __future__ import annotations\n"
          "from exo_hl import *\n"
          f"from {SUBS_NAME} import *\n\n\n")


def pyval(expr, env):
    return eval(expr.replace(" / ", " // "), {}, dict(env))


def load(path, modname):
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def arg_values(meta, rng, n):
    envs = []
    for N, M, o in itertools.product(range(1, 11), range(1, 11),
                                     range(-2, 12)):
        env = dict(N=N, M=M, o=o)
        if all(pyval(c, env) for c in meta["pre"]):
            envs.append(env)
    rng.shuffle(envs)
    envs.sort(key=lambda e: e["N"] + e["M"] > 4)   # the smallest first
    return envs[:n]


def run_one(p, meta, rng, subs):
    """Interpret ``p`` on argument values satisfying its preconditions;
    (number of runs, [(arguments, error)...])."""
    fails = []
    ran = 0
    for env in arg_values(meta, rng, TRIES):
        sA = tuple(pyval(d, env) for d in meta["dA"])
        sB = (pyval(meta["dB"], env), )
        if min(sA + sB) < 1:
            continue
        kw = dict(env)
        kw["A"] = np.zeros(sA, dtype=np.float32)
        kw["B"] = np.zeros(sB, dtype=np.float32)
        if meta["wC"]:
            big = np.zeros((env["M"], 7), dtype=np.float32)
            kw["C"] = big[:, 1:7:2]          # a strided window argument
        k0 = rng.randint(-3, 12)
        kw["config_state"] = ConfigState({subs.FCfg.k: k0})
        ran += 1
        try:
            p.interpret(**kw)
        except Exception as e:  # noqa: BLE001
            fails.append((dict(env, k0=k0), f"{type(e).__name__}: {e}"))
    return ran, fails


@pytest.fixture
def fuzz_dir(tmp_path, monkeypatch):
    (tmp_path / f"{SUBS_NAME}.py").write_text(SUBS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, SUBS_NAME, raising=False)
    yield tmp_path
    for k in [k for k in sys.modules if k.startswith(("bfz_", SUBS_NAME))]:
        del sys.modules[k]


def test_the_interpreter_raises_on_an_out_of_bounds_access(fuzz_dir,
                                                            monkeypatch):
    """The oracle works: with the check switched off, an access past the
    end, one before the start and one through a window all raise."""
    from exo_hl.effects import bounds
    monkeypatch.setattr(bounds, "check_proc", lambda *a, **k: None)
    src = (HEADER + "@proc\n"
           "def bfz_bad(n: size, A: f32[n], B: f32[n, 4]):\n"
           "    for i in seq(0, n):\n"
           "        A[i + 1] = 1.0\n\n\n"
           "@proc\n"
           "def bfz_neg(n: size, A: f32[n], B: f32[n, 4]):\n"
           "    A[n - 2] = 1.0\n\n\n"
           "@proc\n"
           "def bfz_win(n: size, A: f32[n], B: f32[n, 4]):\n"
           "    w = B[0, 1:3]\n"
           "    w[2] = 1.0\n")
    path = fuzz_dir / "bfz_oracle.py"
    path.write_text(src)
    mod = load(str(path), "bfz_oracle")
    for name in ("bfz_bad", "bfz_neg", "bfz_win"):
        with pytest.raises(Exception):
            getattr(mod, name).interpret(n=1, A=np.zeros(1, np.float32),
                                         B=np.zeros((1, 4), np.float32))


def test_accepted_procedures_never_access_out_of_bounds(fuzz_dir):
    subs = load(str(fuzz_dir / f"{SUBS_NAME}.py"), SUBS_NAME)
    sys.modules[SUBS_NAME] = subs
    rng = random.Random(SEED)
    acc = rej = runs = 0
    bad = []
    for k in range(COUNT):
        name = f"bfz_{k}"
        src, meta = Gen(rng).proc(name)
        path = fuzz_dir / f"{name}.py"
        path.write_text(HEADER + src + "\n")
        try:
            mod = load(str(path), name)
        except (BoundsError, ExoTypeError):   # par races, aliasing
            rej += 1
            continue
        acc += 1
        ran, fails = run_one(getattr(mod, name), meta, rng, subs)
        runs += ran
        if fails:
            bad.append((src, fails[:2]))
    assert not bad, "\n\n".join(f"{s}\n{f}" for s, f in bad)
    # the generator keeps producing both verdicts
    assert acc >= COUNT // 5 and rej >= COUNT // 5, (acc, rej)
    assert runs >= acc
