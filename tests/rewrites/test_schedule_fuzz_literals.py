"""Random schedules on random procedures of literal-only expressions.

The class this closes (issue 32, A1/A2): a literal takes the type of its
context, so a literal-only expression moved between a location and its
readers may change value (``x: i32 = 2.5 + 2.5`` is 4, ``2.5 + 2.5`` into an
``f32`` is 5); and ``0.0``/``-0.0`` (or NaN payloads) taken for one value
let rewrites merge or unify what differs. The generator builds procedures
that store literal-only expressions (from a pool of edge cases: halves that
truncate, values ``f16``/``f32`` round or overflow, signed zeros made in
several ways, divisions by zero) into locals and outputs of the types
``i8 i32 f16 f32 f64``, read them back through other types, branch between
zeros of two signs, store both zeros in neighbouring loops and bind literal
expressions through config fields. Random scheduling steps concentrate on
the rewrites that move expressions across locations (``inline_assign``,
``inline_loop``, ``bind_expr`` with and without ``cse`` or a ``precision``, ``bind_config``,
``merge_writes``, ``replace`` by instructions storing constants) and on those
that compare programs (``join_loops``, ``fission_after``), mixed with the
general steps of ``test_schedule_fuzz``.

Inputs include NaN, infinities, signed zeros and denormals. Every accepted
step must leave every output equal bit for bit (``-0.0`` is not ``0.0``;
NaNs compare as NaN because a NaN result's sign and payload are not
specified, docs/semantics.md) in ``interpret()``, and print text that parses
back. ``EXO_HL_LITERAL_FUZZ_S=<seconds>`` runs a longer fuzz that also
compiles each final procedure and compares its C results bit for bit.
"""
from __future__ import annotations

import functools
import os
import random
import time

import numpy as np
import pytest

from exo_hl import (R, MemGenError, SchedulingError, config, f16, f32,
                    f64, i32, instr, seq)
from exo_hl.core_ir import types as T
from exo_hl.core_ir.nodes import IR
from exo_hl.cursors import ExprCursor, StmtCursor, get_expr
from exo_hl.errors import ExoTypeError
from exo_hl.frontend.decorators import parse_proc_source

from test_schedule_fuzz import (Namer, _exprs, _next_sibling, _stmts,
                                random_step)

LONG_ENV = "EXO_HL_LITERAL_FUZZ_S"

TYPES = ["i8", "i32", "f16", "f32", "f64"]
FLOATS = ["f16", "f32", "f64"]

#: literal-only expressions whose value depends on the type they meet
LITERALS = [
    "2.5 + 2.5", "16777217.0 - 1.0", "0.1 + 0.2", "2048.0 + 1.0",
    "65520.0", "300.7", "-2.5", "1e10", "1e-8 * 1e-8", "7.0 % 2.5",
    "3.0 * 0.5", "1.0 / 0.0", "-1.0 / 0.0", "0.0 / 0.0", "2.0 + 3.0",
    "-0.0", "0.0", "0.0 * -1.0", "-0.0 - 0.0", "-0.0 + 0.0", "0.5 - 0.5",
    "-(0.0)", "1.0", "-128.5", "127.9", "200.0 - 100.5",
]
ZEROS = ["0.0", "-0.0", "0.0 * -1.0", "-0.0 + 0.0", "-(0.0)"]

#: input values: both zeros, NaN, infinities, a denormal, f16's largest
SPECIAL = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.5, -2.5, 3.0, 1e-40,
           65504.0, -7.0, 0.5]


@config
class LitFuzzCfg:
    f: f32
    d: f64
    n: i32
    h: f16


@instr("for (int k_ = 0; k_ < 2; k_++) (&{x_data})[k_] = 0.0f;")
def lit_store_pos(x: [R][2]):
    for i in seq(0, 2):
        x[i] = 0.0


@instr("for (int k_ = 0; k_ < 2; k_++) (&{x_data})[k_] = -0.0f;")
def lit_store_neg(x: [R][2]):
    for i in seq(0, 2):
        x[i] = -0.0


# f32, not R: the template stores 5, which the body (``2.5 + 2.5``)
# computes only in a float; stored into an i8 or i32 the body's literals
# are integers (2 + 2 = 4), so a replace of such a store (equal in the
# interpreter) ran 5 in C (a new seed of the long run, session 12)
@instr("for (int k_ = 0; k_ < 2; k_++) (&{x_data})[k_] = 5.0f;")
def lit_store_five(x: [f32][2]):
    for i in seq(0, 2):
        x[i] = 2.5 + 2.5


INSTRS = [lit_store_pos, lit_store_neg, lit_store_five]
_SCOPE = {"LitFuzzCfg": LitFuzzCfg}


# ----------------------------------------------------------------------
# the generator
def gen_source(rng: random.Random, name: str) -> str:
    """The text of a random procedure of literal-only stores and reads."""
    pick = rng.choice
    lit = lambda: pick(LITERALS)  # noqa: E731
    ty = [pick(TYPES) for _ in range(3)]
    tt, tu, tp, tv = pick(TYPES), pick(TYPES), pick(FLOATS), pick(TYPES)
    use_t = pick(["t", f"t + {lit()}", f"{lit()} + t", "t * a[1]",
                  "1.0 / t", "t - b[1]", "-t", "t * t", "t * 0.5"])
    use_u = pick(["u[j]", f"u[j] + {lit()}", "u[j] * k[j]", "1.0 / u[j]",
                  "u[j] * b[j]", f"{lit()} - u[j]"])
    shared = lit()
    second = pick(["a[2]", "k[2]", lit(), "b[2]"])
    z1 = pick(ZEROS + [lit()])
    z2 = z1 if rng.random() < .4 else pick(ZEROS)
    cfg_use = pick([f"({lit()}) * a[3]", f"{lit()} + b[3]", lit(),
                    f"k[3] * ({lit()})"])
    return f"""
def {name}(a: f32[4], b: f64[4], k: i8[4], y0: {ty[0]}[4],
           y1: {ty[1]}[4], y2: {ty[2]}[4], P: {tp}[1], w: f32[4],
           v: {tv}[4]):
    t: {tt}
    t = {lit()}
    y0[0] = t
    y1[0] = {use_t}
    u: {tu}[4]
    for i in seq(0, 4):
        u[i] = {lit()}
    for j in seq(0, 4):
        y2[j] = {use_u}
    y0[1] = {shared}
    y1[1] = {shared}
    for x in seq(0, 4):
        if x == 0:
            P[0] = {pick(ZEROS)}
        else:
            P[0] = {pick(ZEROS)}
        w[x] = 1.0 / P[0]
    for i in seq(0, 2):
        v[i] = {z1}
    for i in seq(2, 4):
        v[i] = {z2}
    y1[2] = {lit()}
    y1[2] += {second}
    y0[3] = {cfg_use}
"""


def gen_proc(rng, name):
    return parse_proc_source(gen_source(rng, name), dict(_SCOPE))


# ----------------------------------------------------------------------
# the steps
def literal_step(p, rng: random.Random, fresh):
    """(description, thunk) of one scheduling call aimed at the rewrites
    that move literal-only expressions or compare constants."""
    stmts = _stmts(p)
    cur = lambda t: StmtCursor(p, t[0])  # noqa: E731
    pick = rng.choice
    ops = []
    writes = [t for t in stmts if isinstance(t[1], (IR.Assign, IR.Reduce))]
    assigns = [t for t in writes if isinstance(t[1], IR.Assign)]
    loops = [t for t in stmts if isinstance(t[1], IR.For)]
    allocated = {t[1].name for t in stmts if isinstance(t[1], IR.Alloc)}
    if assigns:
        # mostly the stores into locals: those have readers to forward to
        local = [t for t in assigns if t[1].name in allocated]
        A = pick(local) if local and rng.random() < .85 else pick(assigns)
        ops.append(("inline_assign", p.inline_assign, (cur(A), ), {}))
    if writes:
        S = pick(writes)
        data = [e for e in _exprs(S[1]) if e[0][0] == "rhs"
                and T.is_real_scalar(get_expr(S[1], e).type)]
        if data:
            ep = pick(data)
            cse = rng.random() < .5
            ops.append((f"bind_expr(cse={cse})", p.bind_expr,
                        (ExprCursor(p, S[0], ep), fresh("b")), {"cse": cse}))
            # a precision asked for: proven to hold the value, or refused
            # (bind_const's f32 for a literal stored into an f64 or an i8
            # changed the result, session 12)
            prec = pick(["f32", "f64", "f16", "bf16", "i8", "ui8", "i16",
                         "i32"])
            ops.append((f"bind_expr(precision={prec})", p.bind_expr,
                        (ExprCursor(p, S[0], pick(data)), fresh("b")),
                        {"precision": prec}))
            field = pick(["f", "d", "n", "h"])
            ops.append((f"bind_config({field})", p.bind_config,
                        (ExprCursor(p, S[0], pick(data)), LitFuzzCfg, field),
                        {}))
        bins = [e for e in _exprs(S[1])
                if isinstance(get_expr(S[1], e), IR.BinOp)
                and T.is_real_scalar(get_expr(S[1], e).type)]
        if bins:
            ops.append(("commute_expr", p.commute_expr,
                        (ExprCursor(p, S[0], pick(bins)), ), {}))
        pairs = [(t, u) for t in writes for u in _next_sibling(stmts, t)
                 if isinstance(u[1], (IR.Assign, IR.Reduce))]
        if pairs:
            same = [(t, u) for t, u in pairs if t[1].name == u[1].name]
            t, u = pick(same) if same and rng.random() < .85 else pick(pairs)
            ops.append(("merge_writes", p.merge_writes,
                        ((cur(t), cur(u)), ), {}))
            t, u = pick(pairs)
            ops.append(("reorder_stmts", p.reorder_stmts,
                        (cur(t), cur(u)), {}))
    if loops:
        # mostly a nest producing a local
        prod = [t for t in loops if len(t[1].body) == 1
                and isinstance(t[1].body[0], IR.Assign)
                and t[1].body[0].name in allocated]
        L = pick(prod) if prod and rng.random() < .85 else pick(loops)
        ops.append(("inline_loop", p.inline_loop, (cur(L), ), {}))
        lpairs = [(t, u) for t in loops for u in _next_sibling(stmts, t)
                  if isinstance(u[1], IR.For)]
        if lpairs:
            meet = [(t, u) for t, u in lpairs if t[1].hi == u[1].lo]
            t, u = pick(meet) if meet and rng.random() < .85 \
                else pick(lpairs)
            ops.append(("join_loops", p.join_loops, (cur(t), cur(u)), {}))
        two = [t for t in loops if isinstance(t[1].hi, IR.Const)
               and isinstance(t[1].lo, IR.Const)
               and t[1].hi.val - t[1].lo.val == 2]
        if two:
            ins = pick(INSTRS)
            ops.append((f"replace({ins.name()})", p.replace,
                        (cur(pick(two)), ins), {}))
    inner = [t for t in stmts if t[2] and _next_sibling(stmts, t)]
    if inner:
        # a statement inside a loop with one after it: a place to split
        S = pick(inner)
        ops.append(("fission_after", p.fission_after, (cur(S), ),
                    {"n_lifts": rng.randint(1, len(S[2]))}))
    desc, fn, args, kwargs = pick(ops)
    return desc, functools.partial(fn, *args, **kwargs)


# ----------------------------------------------------------------------
# checking: bit for bit
def _bits(x):
    """The integer bits of an array, NaNs made one NaN (a NaN result's
    sign and payload are not specified)."""
    x = np.array(x)
    if x.dtype.kind == "f":
        x[np.isnan(x)] = np.nan
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _datasets(p, rng, n=3):
    out = []
    nrng = np.random.default_rng(rng.randint(0, 2**31))
    for _ in range(n):
        base = {}
        for fa in p.ir().args:
            dt = np.dtype(T.NUMPY_DTYPES[fa.type.type])
            shape = tuple(h.val for h in fa.type.hi)
            if dt.kind == "f":
                v = nrng.choice(SPECIAL, size=shape)
            else:
                v = nrng.choice([0, 1, -1, 127, -128, 5, -3], size=shape)
            base[fa.name.name] = np.asarray(v).astype(dt)
        out.append(base)
    return out


def _outputs(p, base, fn=None):
    args = {k: v.copy() for k, v in base.items()}
    order = [args[fa.name.name] for fa in p.ir().args]
    if fn is None:
        p.interpret(*order)
    else:
        fn(*order)
    return args


def _same(ref, got):
    return [k for k in ref
            if not np.array_equal(_bits(ref[k]), _bits(got[k]))]


def fuzz(n_seqs, n_steps, seed, roundtrip, budget_s=None,
         compile_final=False, failures=None, p_generic=0.3):
    """Random sequences on freshly generated procedures: (sequences,
    steps, accepted, per-op counts, finals compiled)."""
    rng = random.Random(seed)
    t0 = time.time()
    seqs = steps = accepted = compiled = 0
    per_op = {}
    for s in range(n_seqs):
        if budget_s is not None and time.time() - t0 > budget_s:
            break
        p0 = gen_proc(rng, f"lits{s}")
        data = [(b, _outputs(p0, b)) for b in _datasets(p0, rng)]
        p, fresh, log = p0, Namer(), []
        seqs += 1
        for _ in range(n_steps):
            if rng.random() < p_generic:
                desc, thunk = random_step(p, rng, fresh)
            else:
                desc, thunk = literal_step(p, rng, fresh)
            op = desc.split("(")[0]
            tried, ok = per_op.get(op, (0, 0))
            steps += 1
            try:
                q = thunk()
            except SchedulingError:
                per_op[op] = (tried + 1, ok)
                continue
            except Exception as e:
                err = AssertionError(f"{desc} raised {type(e).__name__}: {e}"
                                     f" after {log} on\n{p}")
                if failures is None:
                    raise err from e
                failures.append((op, str(err)))
                break
            per_op[op] = (tried + 1, ok + 1)
            accepted += 1
            log.append(desc)
            bad = []
            for base, ref in data:
                bad += _same(ref, _outputs(q, base))
            try:
                assert not bad, f"outputs {sorted(set(bad))} changed"
                roundtrip(q)
            except AssertionError as e:
                err = AssertionError(f"after {log}: {e}\nbefore:\n{p}\n"
                                     f"after:\n{q}\noriginal:\n{p0}")
                if failures is None:
                    raise err from e
                failures.append((op, str(err)))
                break
            p = q
        if compile_final:
            try:
                fn = p.compile()
            except (MemGenError, ExoTypeError):
                continue   # mixed precisions, R given f64...: C refuses
            compiled += 1
            for base, ref in data:
                bad = _same(ref, _outputs(p, base, fn))
                if bad:
                    err = AssertionError(f"compiled {sorted(set(bad))} "
                                         f"differ after {log}:\n{p}")
                    if failures is None:
                        raise err
                    failures.append(("<compiled>", str(err)))
    return seqs, steps, accepted, per_op, compiled


def _report(name, res, dt, failures=()):
    seqs, steps, accepted, per_op, compiled = res
    print(f"\n[{name}] {seqs} sequences, {steps} steps, {accepted} accepted, "
          f"{compiled} finals compiled, {len(failures)} findings "
          f"({dt:.1f}s)")
    for op, (t, a) in sorted(per_op.items()):
        print(f"    {op:22s} {a:4d}/{t:<4d} accepted")


_NO_C = pytest.mark.no_c_audit(
    "random procedures of mixed precisions: equivalence is checked bit for "
    "bit in the interpreter; the long run compiles the finals")


def test_generator_makes_the_class():
    """The corpus holds what the class needs: literal-only stores into
    every type, both zeros, and a literal value that differs by type."""
    rng = random.Random(5)
    text = "".join(gen_source(rng, f"g{i}") for i in range(30))
    for t in TYPES:
        assert f": {t}" in text
    assert "-0.0" in text and "2.5 + 2.5" in text
    p = gen_proc(random.Random(1), "g")
    data = _datasets(p, random.Random(2))
    assert any(np.isnan(d["a"]).any() for d in data)
    assert any((np.signbit(d["b"]) & (d["b"] == 0)).any() for d in data)


@_NO_C
def test_random_literal_schedules(assert_roundtrip):
    t0 = time.time()
    res = fuzz(n_seqs=14, n_steps=8, seed=3232, roundtrip=assert_roundtrip,
               budget_s=25)
    _report("fuzz-literals", res, time.time() - t0)
    seqs, steps, accepted, per_op, _ = res
    assert seqs >= 6
    assert accepted >= steps // 6
    # the rewrites of the class are exercised, and accepted sometimes
    moved = {"inline_assign", "bind_expr", "bind_config", "inline_loop"}
    assert sum(per_op.get(op, (0, 0))[1] for op in moved) > 0


@_NO_C
def test_random_literal_schedules_long(assert_roundtrip):
    """Compiles the final procedures too: a few seconds with a fixed seed in
    the suite; ``EXO_HL_LITERAL_FUZZ_S=<seconds>`` for a long run with a
    new seed."""
    long_run = os.environ.get(LONG_ENV)
    budget = float(long_run) if long_run else 6.0
    seed = int(time.time()) % 10**6 if long_run else 4242
    failures = []
    t0 = time.time()
    res = fuzz(n_seqs=10**6, n_steps=14, seed=seed,
               roundtrip=assert_roundtrip, budget_s=budget,
               compile_final=True, failures=failures)
    _report("fuzz-literals-long", res, time.time() - t0, failures)
    for op, msg in failures[:5]:
        print(f"--- {op}\n{msg}\n")
    assert not failures, f"{len(failures)} findings"
