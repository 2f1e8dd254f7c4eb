"""Random control flow against the control-flow rewrites (audit 14a).

Procedures of nested loops and ifs whose bounds and conditions mix the
loop iterators, a ``size``, an ``index`` that may be negative, a ``bool``
and config fields written in the body (directly, by a call, or by a call
that takes a window); loops that run zero times or have negative extents,
else branches, scalar allocations, calls passing windows, windows whose
offsets read a config field that is written before they are used. Random steps of
``lift_scope``, ``lift_if``, ``specialize``, ``add_guard``,
``remove_loop``, ``eliminate_dead_code``, ``unroll_loop``,
``reorder_stmts``, ``delete_pass`` and ``partial_eval`` are applied; every
accepted step must compute what the original does (interpreted on inputs
with the index negative, zero and positive and every size from 1; the
buffers and the config fields at the end; a sample compiled too), and
every cursor of the step's input must forward to its image or be invalid.

A second generator does the same for ``inline_loop``: a producer nest
``t[i + r] = e`` over random bounds (a negative index among them), a
window of what ``e`` reads bound before the nest, consumers reading ``t``
under guards, and statements after the nest that write, window or pass on
the buffers ``e`` reads (which it must refuse).
"""
from __future__ import annotations

import random
import time

import numpy as np

from exo_hl.patterns import stmt_paths
from exo_hl import SchedulingError
from exo_hl.core_ir.interpret import ConfigState
from source_modules import load_source
from exo_hl.core_ir.nodes import IR
from exo_hl.cursors import StmtCursor
from test_cursor_forwarding import forwarding_failures, tagged

_HEADER = '''from __future__ import annotations
from exo_hl import config, f32, f64, i8, i32, index, proc, seq, size


@config
class Cf:
    a: index
    c: index


@proc
def addto(p: [f32][4], q: [f32][4]):
    for i in seq(0, 4):
        p[i] += q[i]


@proc
def setc(v: index):
    Cf.c = v


@proc
def put(v: index, p: [f32][4]):
    p[0] = 1.0
    Cf.c = v + 1


@proc
def cp4(p: [f32][4], q: [f32][4]):
    for i in seq(0, 4):
        p[i] = q[i]

'''


def _load(tmp_path, text, tag):
    return load_source(tmp_path, f"cf_fuzz_{tag}", text)


# ----------------------------------------------------------------------
# random control flow
class _Gen:
    def __init__(self, rng):
        self.rng = rng
        self.count = 0

    def fresh(self, base):
        self.count += 1
        return f"{base}{self.count}"

    def atom(self, iters):
        r = self.rng
        if iters and r.random() < 0.35:
            return r.choice(iters)
        return r.choice(["k", "n", "m", "Cf.a", "Cf.c", str(r.randint(-3, 4))])

    def iexpr(self, iters, d=0):
        r = self.rng
        if d > 1 or r.random() < 0.5:
            return self.atom(iters)
        op = r.choice(["+", "-", "*", "/", "%"])
        a = self.iexpr(iters, d + 1)
        if op in "*/%":
            return f"({a}) {op} {r.choice([2, 3, 4])}"
        return f"{a} {op} {self.iexpr(iters, d + 1)}"

    def cond(self, iters, d=0):
        r = self.rng
        c = r.random()
        if c < 0.1:
            return "b"
        if d < 1 and c < 0.25:
            return (f"{self.cond(iters, d + 1)} {r.choice(['and', 'or'])} "
                    f"{self.cond(iters, d + 1)}")
        if d < 1 and c < 0.3:
            return f"not ({self.cond(iters, d + 1)})"
        op = r.choice(['<', '<=', '==', '>', '>=', '!='])
        return f"{self.iexpr(iters)} {op} {self.iexpr(iters)}"

    def idx(self, iters):
        return f"({self.iexpr(iters)}) % 8"

    def simple(self, iters):
        r = self.rng
        c = r.random()
        buf = r.choice(["x", "y"])
        other = "y" if buf == "x" else "x"
        if c < 0.35:
            op = "+=" if r.random() < 0.3 else "="
            src = r.choice(["x", "y"])
            rhs = r.choice([f"{src}[{self.idx(iters)}] * 2.0",
                            f"{src}[{self.idx(iters)}] + 1.0",
                            f"{r.randint(-3, 5)}.0"])
            return [f"{buf}[{self.idx(iters)}] {op} {rhs}"]
        if c < 0.5:
            return [f"Cf.{r.choice('ac')} = {self.iexpr(iters)}"]
        if c < 0.58:
            t = self.fresh("t")
            return [f"{t}: f32", f"{t} = {buf}[{self.idx(iters)}]",
                    f"{r.choice(['x', 'y'])}[{self.idx(iters)}] = {t} + 1.0"]
        if c < 0.66:
            o = r.randint(0, 4)
            return [f"addto({buf}[{o}:{o + 4}], {other}[0:4])"]
        if c < 0.72:
            return [f"setc({self.iexpr(iters)})"]
        if c < 0.77:
            o = r.randint(0, 4)
            return [f"put({self.iexpr(iters)}, {buf}[{o}:{o + 4}])"]
        if c < 0.8:
            return ["pass"]
        if c < 0.88:
            # a window whose offset reads a config field (evaluated here)
            w = self.fresh("w")
            f = r.choice(["Cf.a", "Cf.c"])
            use = r.choice([f"{other}[{self.idx(iters)}] = {w}[{r.randint(0, 3)}]",
                            f"{w}[{r.randint(0, 3)}] = {r.randint(-3, 5)}.0"])
            mid = [f"Cf.{r.choice('ac')} = {self.iexpr(iters)}"] \
                if r.random() < 0.5 else []
            return [f"{w} = {buf}[({f}) % 4:({f}) % 4 + 4]"] + mid + [use]
        return [f"{buf}[{self.idx(iters)}] = {r.randint(-3, 5)}.0"]

    def block(self, iters, depth, n):
        out = []
        for _ in range(n):
            out += self.stmt(iters, depth)
        return out

    def stmt(self, iters, depth):
        r = self.rng
        c = r.random()
        if depth < 3 and c < 0.3:
            it = self.fresh("i")
            lo = r.choice(["0", "0", "1", "k", "Cf.a"] + iters)
            hi = r.choice(["n", "m", "3", "k + 2", "Cf.a + 1", "k"] +
                          [f"{i} + 2" for i in iters])
            body = self.block(iters + [it], depth + 1, r.randint(1, 2))
            return [f"for {it} in seq({lo}, {hi}):"] + ["    " + x
                                                         for x in body]
        if depth < 3 and c < 0.55:
            out = [f"if {self.cond(iters)}:"]
            out += ["    " + x for x in
                    self.block(iters, depth + 1, r.randint(1, 2))]
            if r.random() < 0.5:
                out += ["else:"] + ["    " + x for x in self.block(
                    iters, depth + 1, r.randint(1, 2))]
            return out
        return self.simple(iters)

    def source(self):
        body = ["Cf.a = k", "Cf.c = 1"] + self.block(
            [], 0, self.rng.randint(2, 4))
        return _HEADER + (
            "@proc\ndef f(n: size, m: size, k: index, b: bool, "
            "x: f32[8], y: f32[8]):\n"
            "    assert n <= 4\n    assert m <= 4\n"
            "    assert k >= -4\n    assert k <= 4\n"
            + "".join(f"    {x}\n" for x in body))


_INPUTS = [dict(n=n, m=m, k=k, b=b) for n, m, k, b in
           [(1, 1, -4, False), (2, 4, -1, True), (3, 2, 0, False),
            (4, 3, 2, True), (1, 4, 4, True), (4, 1, -3, False),
            (2, 2, 1, False)]]


def _run(p, inp, cfg, seed, fn=None):
    g = np.random.default_rng(seed)
    vals = dict(inp, x=g.integers(-4, 5, 8).astype(np.float32),
                y=g.integers(-4, 5, 8).astype(np.float32))
    st = ConfigState()
    args = [vals[a.name.name] for a in p.ir().args]
    if fn is None:
        p.interpret(*args, config_state=st)
        return vals["x"], vals["y"], (st.get((cfg, "a"), 0),
                                      st.get((cfg, "c"), 0))
    fn(*args)
    return vals["x"], vals["y"]


def _differ(p, q, cfg, inputs, compiled):
    """None when ``q`` computes what ``p`` does on ``inputs``."""
    fns = (p.compile(), q.compile()) if compiled else None
    for s, inp in enumerate(inputs):
        try:
            a = _run(p, inp, cfg, s)
        except ValueError:          # the original refuses the input
            continue
        b = _run(q, inp, cfg, s)
        outs = [("interpreted", b)]
        if fns:
            outs += [("C of the original", _run(p, inp, cfg, s, fns[0])),
                     ("C of the result", _run(q, inp, cfg, s, fns[1]))]
        for what, o in outs:
            if not all(np.array_equal(u, v) for u, v in zip(a[:2], o[:2])) \
                    or (len(o) > 2 and o[2] != a[2]):
                return f"{inp}: {what} {o} where the original gives {a}"
    return None


def _stmts(p):
    """(path, stmt) for every statement of ``p``, in program order."""
    return list(stmt_paths(p.ir()))


_WANT = {"lift_scope": (IR.For, IR.If), "lift_if": (IR.If, ),
         "remove_loop": (IR.For, ), "unroll_loop": (IR.For, ),
         "eliminate_dead_code": (IR.If, IR.For, IR.Assign, IR.Reduce)}


def _step(p, rng, g):
    """(description, thunk) of one random step on ``p``."""
    op = rng.choice(["lift_scope", "lift_if", "specialize", "add_guard",
                     "remove_loop", "eliminate_dead_code", "unroll_loop",
                     "reorder_stmts", "delete_pass", "partial_eval"])
    ss = _stmts(p)
    if op in _WANT:
        fit = [(pa, s) for pa, s in ss if isinstance(s, _WANT[op]) and
               (len(pa) > 1 or op not in ("lift_scope", "lift_if"))]
        ss = fit or ss
    path, _ = rng.choice(ss)
    c = StmtCursor(p, path)
    if op == "lift_if":
        n = rng.choice([1, 1, 2])
        return (op, n), lambda: p.lift_if(c, n)
    if op == "add_guard":
        cond = g.cond([])
        return (op, cond), lambda: p.add_guard(c, cond)
    if op == "specialize":
        conds = [g.cond([]), g.cond([])][:rng.randint(1, 2)]
        return (op, conds), lambda: p.specialize(c, conds)
    if op == "unroll_loop":
        f = rng.randint(1, 4)
        return (op, f), lambda: p.unroll_loop(c, f)
    if op == "delete_pass":
        return (op, ), lambda: p.delete_pass()
    if op == "partial_eval":
        kw = rng.choice([{"k": rng.randint(-4, 4)}, {"n": rng.randint(1, 4)},
                         {"b": rng.random() < 0.5}, {"m": rng.randint(1, 4)}])
        return (op, kw), lambda: p.partial_eval(**kw)
    return (op, ), lambda: getattr(p, op)(c)


def test_control_flow_rewrites_keep_meaning_and_cursors(tmp_path):
    rng = random.Random(1414)
    t0 = time.process_time()
    seed = progs = accepted = 0
    while seed < 45:       # ~7-12 s of CPU (70 and more offline: clean)
        seed += 1
        g = _Gen(rng)
        try:
            mod = _load(tmp_path, g.source(), seed)
        except Exception:       # not provably in bounds, ... (generator)
            continue
        progs += 1
        p0 = tagged(mod.f)
        p, log, fixed = p0, [], {}
        for _ in range(6):
            desc, thunk = _step(p, rng, g)
            try:
                q = thunk()
            except SchedulingError:
                continue
            accepted += 1
            log.append(desc)
            if desc[0] == "partial_eval":
                fixed.update(desc[1])
            inputs = [dict(i, **fixed) for i in _INPUTS]
            bad = _differ(p0, q, mod.Cf, inputs, rng.random() < 0.04)
            assert bad is None, f"after {log}:\n{bad}\n{p0}\n{q}"
            fails = forwarding_failures(p, q)
            assert not fails, f"after {log}:\n" + "\n".join(fails[:5])
            p = q
    print(f"control-flow fuzz: {progs} procedures, {accepted} accepted "
          f"steps, {time.process_time() - t0:.1f} s CPU")
    assert progs >= 25 and accepted >= 80


# ----------------------------------------------------------------------
# inline_loop
def _producer_consumers(rng):
    typ = rng.choice(["f32", "f32", "f32", "f64", "i32", "i8"])
    two = rng.random() < 0.3
    lo = rng.choice(["2", "k + 2", "n + 1", "1"])
    hi = rng.choice(["10", "n + 2", "k + 5", "12"])
    r = rng.choice(["0", "1", "2", "-1"])
    win = rng.random() < 0.4
    src = rng.choice(["x", "z"] + (["w"] if win else []))
    e = rng.choice([f"{src}[(i + {rng.randint(-2, 2)}) % 8] * 2.0",
                    f"{src}[(i + k) % 8] + {src}[(i * 3) % 8]",
                    "3.5", f"0.5 * {src}[i % 8]", f"-{src}[i % 8]",
                    f"{src}[i % 8] * 100.0", f"{src}[i % 8] / 3.0"])
    if two:
        e = e.replace("[(i", "[(i + j2").replace("[i %", "[(i + j2) %")
    body = ["assert n <= 8", "assert k >= -2", "assert k <= 6"]
    if win:
        body.append("w = x[0:8]")
    if two:
        body += [f"t: {typ}[16, 3]", f"for i in seq({lo}, {hi}):",
                 "    for j2 in seq(0, 3):", f"        t[i + {r}, j2] = {e}"]
    else:
        body += [f"t: {typ}[16]", f"for i in seq({lo}, {hi}):",
                 f"    t[i + {r}] = {e}"]
    for _ in range(rng.randint(1, 3)):
        f = rng.choice(["j", "j + 1", "j + k + 2", "k + 3", "2 * j", "j + n"])
        acc = f"t[{f}, {rng.randint(0, 2)}]" if two else f"t[{f}]"
        st = rng.choice([f"y[j] = {acc}", f"y[j] += {acc} * 2.0",
                         f"y[j] = {acc} + x[j]",
                         f"y[(j + 1) % 8] = {acc} - y[j]"])
        body += [f"for j in seq(0, {rng.choice(['8', 'n', '4'])}):",
                 f"    if {f} >= {lo} + {r} and {f} < {hi} + {r}:",
                 f"        {st}"]
        if rng.random() < 0.25:
            body.append(rng.choice(
                ["x[3] = 7.0", "cp4(y[0:4], z[4:8])", "cp4(z[0:4], y[4:8])",
                 "z[1] = 2.0", "y[1] = 2.0"] + (["w[2] = 1.0"] if win
                                                else [])))
    return _HEADER + (
        "@proc\ndef f(n: size, k: index, x: f32[8], y: f32[8], z: f32[8]):\n"
        + "".join(f"    {x}\n" for x in body))


def _run_xyz(p, inp, seed, fn=None):
    g = np.random.default_rng(seed)
    arrs = {v: (g.integers(-40, 41, 8) / 4).astype(np.float32)
            for v in "xyz"}
    vals = dict(inp, **arrs)
    (fn or p.interpret)(*[vals[a.name.name] for a in p.ir().args])
    return arrs


def test_inline_loop_keeps_meaning(tmp_path):
    rng = random.Random(1415)
    t0 = time.process_time()
    seed = accepted = refused = 0
    inputs = [dict(n=n, k=k) for n in (1, 2, 5, 8) for k in (-2, 0, 1, 3, 6)]
    while seed < 250:      # ~7 s of CPU
        seed += 1
        try:
            mod = _load(tmp_path, _producer_consumers(rng), f"il{seed}")
        except Exception:
            continue
        try:
            q = mod.f.inline_loop("i")
        except SchedulingError:
            refused += 1
            continue
        accepted += 1
        fns = (mod.f.compile(), q.compile()) if rng.random() < 0.1 else None
        for s, inp in enumerate(inputs):
            a = _run_xyz(mod.f, inp, s)
            outs = [_run_xyz(q, inp, s)]
            if fns:
                outs += [_run_xyz(mod.f, inp, s, fns[0]),
                         _run_xyz(q, inp, s, fns[1])]
            for b in outs:
                assert all(np.array_equal(a[v], b[v], equal_nan=True)
                           for v in "xyz"), f"{inp}\n{mod.f}\n{q}"
    print(f"inline_loop fuzz: {accepted} accepted, {refused} refused, "
          f"{time.process_time() - t0:.1f} s CPU")
    assert accepted >= 20 and refused >= 20
