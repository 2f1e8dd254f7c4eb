"""Generators for the expression-level rewrites: random procedures of mixed
data types (f16/bf16/f32/f64/i8/i32 buffers, scalars, an allocated scalar, data
config fields written and read), flat or inside a loop that may run zero
times with an if/else in it; every ``commute_expr``, ``bind_expr`` (plain,
``cse=True`` and with a random ``precision``), ``bind_config``,
``merge_writes`` and ``inline_assign`` that is accepted must compute, bit
for bit, what the original computes (interpreter, and the compiled C on a
few seeds) on inputs full of special values: signed zeros, infinities,
NaN, the largest f16, i8/i32 limits (NaNs compare as NaNs, any payload).

``x += a; x += b`` merged into ``x += a + b`` re-associates the sum
(reductions are treated as commutative and associative, as reordering
reduction loops does): checked to be accepted, not compared.

Plus the class found by this audit: a rewrite that puts a read of another
precision where an expression stood inside a *config write* (``bind_expr``
with ``precision=``, ``bind_config``) was accepted and ``compile()`` then
refused the procedure (mixed precisions); now refused by the rewrite."""
from __future__ import annotations

import itertools
import random
import re

import numpy as np
import pytest

from exo_hl import SchedulingError, bf16, config, f32, f64, i32, proc
from exo_hl.core_ir import types as T
from exo_hl.core_ir.nodes import IR
from exo_hl.cursors import BlockCursor, ExprCursor, StmtCursor
from exo_hl.patterns import expr_paths
from source_modules import load_source

TYPES = ["f32", "f64", "i8", "i32", "f16", "bf16"]
FLITS = ["0.5", "2.5", "-0.0", "0.0", "3.0", "300.0", "1e10", "100.0",
         "1e-08", "65504.0", "0.1", "-1.0"]
ILITS = ["0", "1", "100", "127", "300", "-128", "2", "-1"]
SPECIAL = {"f": [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e38,
                 65504.0, 1e-45, 0.1, 3.0, 1e10, -2.5, 1e-8],
           "i": [0, 1, -1, 127, -128, 100, 2**31 - 1, -2**31, 3, 50]}


class _Gen:
    """One random procedure's text (``self.text``)."""

    def __init__(self, r, name):
        self.r = r
        self.loop = r.random() < 0.5
        self.ctype = r.choice(["f32", "f64", "i32", "i8"])
        self.btype = r.choice(["f32", "f64", "i32", "i8", "f16"])
        ty = {b: r.choice(TYPES) for b in "xyoa"}
        if r.random() < 0.6:
            ty["x"] = ty["o"]
        tt = r.choice(TYPES) if r.random() < 0.5 else ty["o"]
        bufs, lines = dict(ty), []
        if r.random() < 0.5:
            lines += [f"t: {tt}", f"t = {self.expr(tt, 2, ty)}"]
            bufs["t"] = tt
        if r.random() < 0.5:
            lines.append(f"Cz.s = {self.expr(self.ctype, 2, ty)}")
            bufs["C"] = self.ctype
        for _ in range(r.randint(2, 4)):
            if "C" in bufs and r.random() < 0.2:
                lines.append(f"Cz.s = {self.expr(self.ctype, 1, bufs)}")
            d, k = r.choice(["o", "o", "y"]), self.idx()
            op = r.choice(["=", "+="])
            lines.append(f"{d}[{k}] {op} "
                         f"{self.expr(ty[d], r.randint(0, 3), bufs)}")
            if r.random() < 0.4:        # a second write of that location
                op = r.choice(["=", "+="])
                lines.append(f"{d}[{k}] {op} "
                             f"{self.expr(ty[d], r.randint(0, 2), bufs)}")
        if self.loop:
            sig = "n: size, " + ", ".join(f"{b}: {ty[b]}[n + 3]"
                                          for b in "xyo")
            lines = self._in_loop(lines)
        else:
            sig = ", ".join(f"{b}: {ty[b]}[3]" for b in "xyo")
        body = "\n".join("    " + ln for ln in lines)
        self.text = (
            f"from __future__ import annotations\nfrom exo_hl import *\n\n"
            f"@config\nclass Cz:\n    s: {self.ctype}\n\n"
            f"@config\nclass Cb:\n    v: {self.btype}\n\n"
            f"@proc\ndef {name}({sig}, a: {ty['a']}):\n{body}\n")

    def idx(self):
        k = self.r.randrange(3)
        return f"i + {k}" if self.loop and self.r.random() < 0.6 else str(k)

    def expr(self, t, depth, bufs):
        r = self.r
        if depth == 0 or r.random() < 0.3:
            if r.random() < 0.3:
                return r.choice(FLITS if t[0] == "f" else ILITS)
            same = [b for b, bt in bufs.items() if bt == t]
            b = r.choice(same if same and r.random() < 0.8 else list(bufs))
            return {"a": "a", "t": "t", "C": "Cz.s"}.get(
                b, f"{b}[{self.idx()}]")
        op = r.choice(["+", "*", "-"] + (["/"] if t[0] == "f" else []))
        e = (f"({self.expr(t, depth - 1, bufs)} {op} "
             f"{self.expr(t, depth - 1, bufs)})")
        return f"-{e}" if r.random() < 0.1 else e

    def _in_loop(self, lines):
        r = self.r
        pre = [ln for ln in lines if ln.startswith("t: ")]
        rest = [ln for ln in lines if not ln.startswith("t: ")]
        if r.random() < 0.5 and len(rest) >= 2:
            cut = r.randrange(1, len(rest))
            mid = r.randrange(cut + 1, len(rest) + 1)
            rest = (rest[:cut] + ["if i == 0:"]
                    + ["    " + ln for ln in rest[cut:mid]]
                    + (["else:"] + ["    " + ln for ln in rest[mid:]]
                       if mid < len(rest) else []))
        if pre and r.random() < 0.5:
            pre, rest = [], pre + rest
        return pre + ["for i in seq(0, n - 1):"] + ["    " + ln
                                                     for ln in rest]


def _stmts(blk, pre=(), field="body"):
    """(path, stmt, block, index, parent path, field) of every statement."""
    for j, st in enumerate(blk):
        yield pre + ((field, j), ), st, blk, j, pre, field
        here = pre + ((field, j), )
        if isinstance(st, (IR.For, IR.If)):
            yield from _stmts(st.body, here)
        if isinstance(st, IR.If):
            yield from _stmts(st.orelse, here, "orelse")


def _rewrites(p, cb, r):
    """(kind, thunk) for every rewrite to try on ``p``."""
    out = []
    for sp, s, blk, j, par, fld in list(_stmts(p.ir().body)):
        for ep, e in expr_paths(s):
            c = ExprCursor(p, sp, ep)
            if isinstance(e, IR.BinOp) and e.op in ("+", "*"):
                out.append(("commute", lambda c=c: p.commute_expr(c)))
            if not T.is_real_scalar(e.type):
                continue
            prec = r.choice(TYPES)
            out += [("bind", lambda c=c: p.bind_expr(c, "bnd")),
                    ("bind", lambda c=c: p.bind_expr(c, "bnd", cse=True)),
                    ("bind", lambda c=c, pr=prec: p.bind_expr(
                        c, "bnd", precision=pr))]
            if r.random() < 0.5:
                out.append(("bind_config",
                            lambda c=c: p.bind_config(c, cb, "v")))
        if j + 1 < len(blk):
            kind = ("merge_reassoc" if isinstance(s, IR.Reduce)
                    and isinstance(blk[j + 1], IR.Reduce) else "merge")
            out.append((kind, lambda j=j, par=par, fld=fld: p.merge_writes(
                BlockCursor(p, par, fld, j, j + 2))))
        if isinstance(s, IR.Assign):
            out.append(("inline_assign",
                        lambda sp=sp: p.inline_assign(StmtCursor(p, sp))))
    return out


def _inputs(p, r):
    loop = any(fa.name.name == "n" for fa in p.ir().args)
    n = r.choice([1, 1, 2, 3])
    out = []
    for fa in p.ir().args:
        if fa.name.name == "n":
            out.append(n)
            continue
        t = fa.type
        dt = np.dtype(T.NUMPY_DTYPES[t.type if isinstance(t, IR.Tensor)
                                     else t])
        kind = "f" if dt.kind == "f" else "i"
        m = (n + 3 if loop else 3) if isinstance(t, IR.Tensor) else 1
        vals = [r.choice(SPECIAL[kind]) if r.random() < 0.6 else
                (r.uniform(-5, 5) if kind == "f" else r.randint(-200, 200))
                for _ in range(m)]
        if kind == "i":
            lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
            vals = [(int(v) - lo) % (hi - lo + 1) + lo for v in vals]
        with np.errstate(all="ignore"):
            out.append(np.array(vals, dtype=dt))
    return out


def _same(a, b):
    if not isinstance(a, np.ndarray):
        return a == b
    if a.dtype.kind != "f":
        return np.array_equal(a, b)
    na, nb = np.isnan(a), np.isnan(b)
    u = np.dtype(f"u{a.itemsize}")
    return bool(np.array_equal(na, nb)
                and np.all((a.view(u) == b.view(u)) | na))


def _as_values(p, args):
    """The arguments with bf16 bits read as the f32 values they are."""
    return [(x.astype(np.uint32) << 16).view(np.float32)
            if T.basetype(fa.type) is IR.BF16 else x
            for fa, x in zip(p.ir().args, args)]


def _run(p, inputs, compiled):
    f = p.compile() if compiled else None
    res = []
    for a in inputs:
        for run in (p.interpret, f):
            if run is not None:
                b = [x.copy() if isinstance(x, np.ndarray) else x for x in a]
                run(*b)
                res.append(_as_values(p, b))
    return res


def _check_seed(tmp_path, seed, compiled, counts):
    r = random.Random(seed)
    g = _Gen(r, f"p{seed}")
    mod = load_source(tmp_path, f"m{seed}", g.text)
    p = getattr(mod, f"p{seed}")
    compiled = compiled and not re.search(r"\bf16", g.text)
    inputs = [_inputs(p, r) for _ in range(10)]
    try:
        p.c_code_str()
        has_c = True
    except Exception:       # a mix compile() refuses: interpret only
        has_c = compiled = False
    base = _run(p, inputs, compiled)
    for kind, thunk in _rewrites(p, mod.Cb, r):
        try:
            q = thunk()
        except SchedulingError:
            counts[kind + " refused"] = counts.get(kind + " refused", 0) + 1
            continue
        counts[kind] = counts.get(kind, 0) + 1
        if has_c:           # what compile() took, it takes after a rewrite
            q.c_code_str()
        got = _run(q, inputs, compiled)
        if kind == "merge_reassoc":
            continue
        for a, b in zip(base, got):
            assert all(_same(x, y) for x, y in zip(a, b)), (
                f"seed {seed}: {kind} changed the result\n{g.text}\n{q}")


def test_expression_rewrites_keep_bits(tmp_path):
    counts = {}
    for seed in range(28):     # 40 and ~900 offline: clean
        _check_seed(tmp_path, seed, seed < 3, counts)
    for kind in ("commute", "bind", "bind_config", "merge",
                 "inline_assign"):
        assert counts.get(kind, 0) >= 5, counts


# ----------------------------------------------------------------------
# the classes found

@proc
def bf16_sums(x: bf16[2], y: i32[2]):
    x[0] += y[0]
    x[0] += y[1]


def test_merge_writes_bf16_location_takes_only_bf16_operands():
    """``_fits`` took every type that is not f16/f32/f64 for an integer
    one: a bf16 location with i32 operands was merged, 257 + 1 summed
    first (258) where the stepwise sums round to 256."""
    with pytest.raises(SchedulingError, match="round differently"):
        bf16_sums.merge_writes(bf16_sums.body())


def test_merge_writes_type_rule_generator(tmp_path):
    """Every pair of writes ``=``/``+=`` of a location of each type with
    operands of each type (reads or literals), on inputs whose sums are
    exact in every operand's own type (integers of at most 300, often
    just above a power of two; floats of at most 40): whatever merge_writes accepts must give the same bits,
    re-association included (it changes nothing on such inputs). Before
    the fix the bf16 location with integer operands failed here."""
    r = random.Random(7)
    lits = ["1", "300", "257", "2.5", "-0.0", "0.1", "100000"]
    done = accepted = 0
    combos = list(itertools.product(TYPES, TYPES, TYPES, ["=", "+="],
                                    ["=", "+="]))
    for k, (tx, ta, tb, op1, op2) in enumerate(combos):
        ea = r.choice(["a[0]"] * 4 + [r.choice(lits)])
        eb = r.choice(["b[0]"] * 4 + [r.choice(lits)])
        text = (f"from __future__ import annotations\nfrom exo_hl import *\n"
                f"\n@proc\ndef mw{k}(x: {tx}[1], a: {ta}[1], b: {tb}[1]):\n"
                f"    x[0] {op1} {ea}\n    x[0] {op2} {eb}\n")
        try:
            p = getattr(load_source(tmp_path, f"mw{k}", text), f"mw{k}")
        except Exception:
            continue                    # a mix the frontend refuses
        done += 1
        try:
            q = p.merge_writes(p.body())
        except SchedulingError:
            continue
        accepted += 1
        for _ in range(8):
            args = []
            for fa in p.ir().args:
                t = T.basetype(fa.type)
                if t in (IR.BF16, IR.F16, IR.F32, IR.F64):
                    v = np.float32(r.randint(-40, 40))
                    args.append(np.array([v], np.float32).view(np.uint32)
                                .__rshift__(16).astype(np.uint16)
                                if t is IR.BF16 else
                                np.array([v], T.NUMPY_DTYPES[t]))
                else:
                    lo, hi = (0, 255) if t in (IR.UI8, ) else (-300, 300)
                    v = r.choice([r.randint(lo, hi), 257, 255, 129, 1, 0])
                    args.append(np.array([v]).astype(T.NUMPY_DTYPES[t]))
            got = []
            for proc_ in (p, q):
                b = [a.copy() for a in args]
                proc_.interpret(*b)
                got.append(_as_values(proc_, b))
            assert all(_same(u, v) for u, v in zip(*got)), (text, str(q))
    assert done > 500 and accepted > 200, (done, accepted)


# mixed precisions brought into a config write

@config
class MixCfg:
    v: f32
    w: f64


@proc
def writes_f64_field(x: f64[3], y: f64[3]):
    MixCfg.w = (-1 * 127) - x[0]
    y[0] = MixCfg.w


def test_bind_into_config_write_refuses_mixed_precision():
    p = writes_f64_field
    p.compile()                               # the original compiles
    with pytest.raises(SchedulingError, match="mix precisions"):
        p.bind_expr(p.find("-1 * 127"), "b", precision="f32")
    with pytest.raises(SchedulingError, match="mix precisions"):
        p.bind_config(p.find("-1 * 127"), MixCfg, "v")
    # one precision: accepted, and it compiles
    q = p.bind_expr(p.find("-1 * 127"), "b", precision="f64")
    q.compile()
    x, y = np.array([0.5, 0, 0]), np.zeros(3)
    q.interpret(x, y)
    assert y[0] == -127.5
