"""Generator for config state under the config-level rewrites: random
procedures that write a control field (``Cf.k``) directly, in callees, in
one branch, in loops that may run zero times, at the end of loop bodies
(so the next iteration reads another value) and with the iteration in a
loop whose bound reads it, and read it and a second field (``Cg.m``) as
indices. Every ``rewrite_expr`` of a field read into a constant,
``configwrite_at`` of a constant before/after each statement and
``bind_config`` of a read of ``Cf.k`` into ``Cg.m`` (or into ``Cf.k``
itself) that is accepted must compute what the original computes
(interpreter on every trip count, compiled C on a few seeds), and the
final field values must agree unless the result is recorded as
equivalent only modulo them."""
from __future__ import annotations

import random

import numpy as np

from exo_hl import SchedulingError
from exo_hl.cursors import ExprCursor, StmtCursor
from exo_hl.core_ir.nodes import IR
from exo_hl.patterns import expr_paths
from exo_hl.provenance import equivalence_modulo
from source_modules import load_source

HEAD = """from __future__ import annotations
from exo_hl import *

@config
class Cf:
    k: index

@config
class Cg:
    m: index

@proc
def setk0():
    Cf.k = 0

@proc
def setk1():
    Cf.k = 1

@proc
def setk2(n: size):
    if n > 2:
        Cf.k = 2

@proc
def readk(y: f32[8]):
    assert Cf.k >= 0
    assert Cf.k < 3
    y[Cf.k + 4] += 3.0
"""


def _stmt(r, depth=0):
    c = r.randrange(3)
    kinds = ["w", "call", "if", "zloop", "read", "read", "readm", "readk",
             "kloop"]
    if depth == 0:
        kinds += ["carry", "carry"]
    k = r.choice(kinds)
    if k == "w":
        return [f"Cf.k = {c}"]
    if k == "call":
        return [r.choice(["setk0()", "setk1()", "setk2(n)"])]
    if k == "if":
        return ["if n > 2:", f"    Cf.k = {c}"]
    if k == "zloop":
        return ["for i in seq(0, n - 1):", f"    Cf.k = {c}"]
    if k == "kloop":
        # the bound reads the field, the body writes it with the iteration
        # (the value after the loop: the last iteration's)
        return ["for i in seq(0, Cf.k + 1):", "    y[i] += 1.0",
                "    Cf.k = i"]
    if k == "read":
        return [f"y[Cf.k] += {r.randint(1, 9)}.0"]
    if k == "readm":
        return [f"Cg.m = Cf.k", f"y[Cg.m + 3] += {r.randint(1, 9)}.0"]
    if k == "readk":
        return ["readk(y)"]
    body = _stmt(r, 1) + _stmt(r, 1) + [f"Cf.k = {c}"]
    return ["for j in seq(0, 2):"] + ["    " + s for s in body]


def _text(r, name):
    lines = [f"Cf.k = {r.randrange(3)}", "Cg.m = 0"]
    for _ in range(r.randint(2, 5)):
        lines += _stmt(r)
    body = "\n".join("    " + s for s in lines)
    return f"{HEAD}\n@proc\ndef {name}(n: size, y: f32[8]):\n{body}\n"


def _stmts(blk, pre=()):
    for j, s in enumerate(blk):
        yield pre + (("body", j), ), s
        if isinstance(s, (IR.For, IR.If)):
            yield from _stmts(s.body, pre + (("body", j), ))


def _reads(s):
    """``(expr_path, read)`` of the config reads of statement ``s``."""
    return [(ep, e) for ep, e in expr_paths(s)
            if isinstance(e, IR.ReadConfig)]


def _rewrites(p, mod, r):
    out = []
    for sp, s in list(_stmts(p.ir().body)):
        c = r.randrange(3)
        for ep, e in _reads(s):
            x = ExprCursor(p, sp, ep)
            out.append(("rewrite_expr", lambda x=x, c=c:
                        p.rewrite_expr(x, str(c))))
            if e.field == "k" and not isinstance(s, IR.WriteConfig):
                out.append(("bind_config", lambda x=x: p.bind_config(
                    x, mod.Cg, "m")))
            if e.field == "k":
                # the field the read reads: accepted only when the
                # statement reads it nowhere else (before a write)
                out.append(("bind_config_self", lambda x=x: p.bind_config(
                    x, mod.Cf, "k")))
        sc = StmtCursor(p, sp)
        out.append(("configwrite_at", lambda sc=sc, c=c, b=r.random() < .5:
                    p.configwrite_at(sc, mod.Cf, "k", str(c), before=b)))
    return out


def test_config_rewrites_keep_meaning(tmp_path):
    counts = {}
    for seed in range(60):
        r = random.Random(seed)
        text = _text(r, f"c{seed}")
        mod = load_source(tmp_path, f"cfg{seed}", text)
        p = getattr(mod, f"c{seed}")
        compiled = seed < 4
        base = {n: _outputs(p, n, compiled) for n in (1, 2, 3, 4)}
        for kind, thunk in _rewrites(p, mod, r):
            try:
                q = thunk()
            except SchedulingError:
                counts[kind + " refused"] = counts.get(kind + " refused",
                                                       0) + 1
                continue
            counts[kind] = counts.get(kind, 0) + 1
            assert equivalence_modulo(p, q) is not None
            for n in (1, 2, 3, 4):
                got = _outputs(q, n, compiled)
                for a, b in zip(base[n], got):
                    assert np.array_equal(a, b), (
                        f"seed {seed}, n = {n}: {kind}\n{text}\n{q}")
    for kind in ("rewrite_expr", "configwrite_at", "bind_config"):
        assert counts.get(kind, 0) >= 10, counts


def _outputs(p, n, compiled):
    out = []
    y = np.zeros(8, np.float32)
    p.interpret(n, y)
    out.append(y)
    if compiled:
        y = np.zeros(8, np.float32)
        p.compile()(n, y)
        out.append(y)
    return out
