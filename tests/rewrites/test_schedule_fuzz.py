"""Random schedules: scheduling either refuses (SchedulingError) or is right.

Seeded random sequences of rewrites, with random targets and parameters
(valid and invalid), are applied to a handful of procedures covering the
shapes rewrites must reason about: loop nests with reductions (gemm), a
stencil with a loop-carried dependence, a scalar accumulator allocation,
if/else, and a call through windows; and a second corpus whose loop bounds,
conditions and call arguments read config fields that the statements they
govern write (a rewrite that moves such an expression must refuse). The
properties checked at every step:

* a scheduling call raises nothing but ``SchedulingError``;
* an accepted step yields a procedure equal to the original in the
  interpreter on random small-integer inputs (exact under reordering), whose
  printed text parses back to the same procedure (round trip).

The number of sequences run and steps accepted is printed (``pytest -s``).
The main runs are made twice: with the incremental re-check of rewrite
results (the default) and with ``EXO_HL_FULL_RECHECK=1`` (every result
checked from scratch); ``test_recheck_modes`` compares the two verdicts
step by step.
"""
from __future__ import annotations

import functools
import os
import random
import time

import numpy as np
import pytest

from exo_hl import (DRAM_STATIC, MemGenError, SchedulingError, config, f32,
                    index, proc, seq, size)
from exo_hl.codegen_c.openmp import has_par_loops
from exo_hl.core_ir import types as T
from exo_hl.core_ir.interpret import ConfigState
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.traversal import free_vars, walk
from exo_hl.core_ir.printer import expr_to_str
from exo_hl.cursors import ExprCursor, StmtCursor, get_expr
from kernels import gemm  # the suite's shared GEMM
from exo_hl.frontend.recheck import FULL_RECHECK_ENV


# ----------------------------------------------------------------------
# the procedures
@proc
def axpy(n: size, a: [f32][n], b: [f32][n]):
    for i in seq(0, n):
        b[i] += 2.0 * a[i]


@proc
def stencil(N: size, x: f32[N], y: f32[N]):
    for i in seq(1, N):
        x[i] = x[i - 1] + y[i]          # forward (loop-carried) dependence
    for i in seq(0, N - 1):
        y[i] = y[i + 1] * 2.0 - x[i]    # reads the next element (anti-dep.)


@proc
def matvec(M: size, N: size, A: f32[M, N], x: f32[N], y: f32[M]):
    for i in seq(0, M):
        acc: f32
        acc = 0.0
        for j in seq(0, N):
            acc += A[i, j] * x[j]
        y[i] = acc


@proc
def branchy(N: size, x: f32[N], y: f32[N]):
    for i in seq(0, N):
        if i < 3:
            y[i] = x[i] * 2.0
        else:
            y[i] = x[i] + y[i]
    for i in seq(0, N):
        for j in seq(0, 2):
            if N > 2:
                x[i] += y[i]
        for j in seq(0, 3):
            y[i] = x[i] * 0.5 + 1.0


@proc
def caller(M: size, N: size, A: f32[M, N], B: f32[M, N]):
    for i in seq(0, M):
        axpy(N, A[i, 0:N], B[i, 0:N])
    for i in seq(0, M):
        for j in seq(0, N):
            A[i, j] = B[i, j] * 3.0


@proc
def pipeline(N: size, x: f32[N + 2], t: f32[N + 2], y: f32[N]):
    for i in seq(0, N + 2):
        t[i] = x[i] * 2.0               # a producer read with overlap
    for i in seq(0, N):
        y[i] = t[i] + t[i + 1] + t[i + 2]


@proc
def hoist(N: size, x: f32[4], y: f32[N, 3]):
    b: f32
    for i in seq(0, N):
        for j in seq(0, 3):
            b = x[1] * 2.0              # loop-invariant, idempotent
            y[i, j] += b


@proc
def temps(N: size, x: f32[N], y: f32[N]):
    t: f32[N]
    for r in seq(0, N):
        t[r] = x[r] * 2.0
        if r >= 2:
            y[r] = t[r] + t[r - 1] + t[r - 2]   # a sliding window
    for i in seq(0, N):
        a: f32
        a = x[i] * 3.0
        y[i] += a
        b: f32[2]
        b[0] = y[i] + x[i]
        b[1] = b[0] * 0.5
        x[i] = b[1]
        c: f32


@proc
def mix(N: size, x: f32[N + 2], y: f32[N + 2]):
    t: f32
    for i in seq(0, 2):                 # two loops that join: same body
        t = x[i] * 2.0
        y[i] = t + 1.0
    for i in seq(2, N + 2):
        t = x[i] * 2.0
        y[i] = t + 1.0
    for i in seq(0, N):
        u: f32                          # written before it is read
        u = x[i] + 1.0
        y[i] += u
        if i < 0:                       # never taken
            y[i] = 0.0
        y[i] += x[i]                    # two updates that merge
        y[i] += 1.0
    v: f32                              # private to each iteration
    for i in seq(0, N):
        v = x[i] * 3.0
        y[i + 2] += v
    w: f32[4]                           # never used


@proc
def staged(N: size, x: f32[N + 2], y: f32[N]):
    t: f32[N + 2]                       # a producer nest to inline
    for i in seq(0, N + 2):
        t[i] = x[i] * 2.0
    for i in seq(0, N):
        y[i] = t[i] + t[i + 1] + t[i + 2]
    u: f32[2, N]                        # a 2-d temporary to rearrange
    for k in seq(0, 2):
        for i in seq(0, N):
            u[k, i] = y[i] + x[i + k]
    for i in seq(0, N):
        y[i] = u[0, i] * u[1, i]


PROCS = [gemm, stencil, matvec, branchy, caller, pipeline, hoist, temps, mix,
         staged]


# ----------------------------------------------------------------------
# procedures whose control expressions read config their bodies write
@config
class FuzzCfg:
    n: size
    k: index


@proc
def cfg_loops(N: size, x: f32[N], y: f32[8]):
    FuzzCfg.n = 6
    FuzzCfg.k = 1
    for i in seq(FuzzCfg.k, FuzzCfg.n):    # both bounds rewritten by the body
        FuzzCfg.n = 3
        y[i] += x[0] * 2.0
        FuzzCfg.k = 0
    FuzzCfg.n = 4
    for i in seq(0, FuzzCfg.n):
        for j in seq(0, 2):
            y[i + j] = y[i + j] * 0.5 + x[0]
        FuzzCfg.n = 1


@proc
def cfg_conds(N: size, x: f32[N], y: f32[8]):
    FuzzCfg.k = 0
    for i in seq(0, 8):
        if FuzzCfg.k == 0:                 # true in the first iteration only
            y[i] = x[0] + 1.0
            FuzzCfg.k = 1
        else:
            y[i] = y[i] * 2.0
    for i in seq(0, 4):
        FuzzCfg.k = i
        if FuzzCfg.k < 2:
            y[FuzzCfg.k] += x[0]
        FuzzCfg.k = 7


@proc
def set_k_then_use(k: index, y: [f32][8]):
    assert 0 <= k and k < 4
    FuzzCfg.k = 7
    for i in seq(k, 4):
        y[i] += 1.0


@proc
def cfg_calls(N: size, x: f32[N], y: f32[8]):
    FuzzCfg.k = 2
    for i in seq(0, 2):
        set_k_then_use(FuzzCfg.k - 2 + i, y[0:8])   # callee rewrites k
        FuzzCfg.k = 2
    FuzzCfg.n = 3
    for i in seq(FuzzCfg.n, 6):
        FuzzCfg.n = 1
        y[i] = y[i - 1] + x[0]


CONFIG_PROCS = [cfg_loops, cfg_conds, cfg_calls]


# ----------------------------------------------------------------------
# targets: enumerate statements and expressions of the current procedure
def _stmts(p):
    """(path, stmt, enclosing loop iterator names) for every statement."""
    out = []

    def go(stmts, prefix, field, loops):
        for i, s in enumerate(stmts):
            path = prefix + ((field, i), )
            out.append((path, s, loops))
            if isinstance(s, IR.For):
                go(s.body, path, "body", loops + (s.iter.name, ))
            elif isinstance(s, IR.If):
                go(s.body, path, "body", loops)
                go(s.orelse, path, "orelse", loops)

    go(p.ir().body, (), "body", ())
    return out


def _exprs(stmt):
    """Expression paths inside a statement's right-hand side / indices."""
    out = []

    def go(e, path):
        out.append(path)
        if isinstance(e, IR.BinOp):
            go(e.lhs, path + (("lhs", None), ))
            go(e.rhs, path + (("rhs", None), ))
        elif isinstance(e, IR.USub):
            go(e.arg, path + (("arg", None), ))
        elif isinstance(e, IR.Read):
            for k, ix in enumerate(e.idx):
                go(ix, path + (("idx", k), ))

    if isinstance(stmt, (IR.Assign, IR.Reduce)):
        go(stmt.rhs, (("rhs", None), ))
        for k, ix in enumerate(stmt.idx):
            go(ix, (("idx", k), ))
    elif isinstance(stmt, IR.If):
        go(stmt.cond, (("cond", None), ))
    return out


def _accesses(stmt):
    """(buffer name, idx exprs) of tensor accesses anywhere in ``stmt``."""
    out = []
    for n in walk(stmt):
        if isinstance(n, (IR.Read, IR.Assign, IR.Reduce)) and n.idx:
            out.append((n.name.name, n.idx))
    return out


class Namer:
    def __init__(self):
        self.k = 0

    def __call__(self, base="v"):
        self.k += 1
        return f"{base}{self.k}"


def _next_sibling(stmts, t):
    return [u for u in stmts if u[0][:-1] == t[0][:-1]
            and u[0][-1][0] == t[0][-1][0]
            and u[0][-1][1] == t[0][-1][1] + 1]


def random_step(p, rng: random.Random, fresh):
    """(description, thunk) of one random scheduling call on ``p``.

    Targets are drawn from the current procedure, mostly plausible ones
    (a loop with its nested loop, a statement with its successor, ...) so
    that many steps get accepted, with invalid parameters mixed in.
    """
    stmts = _stmts(p)
    loops = [t for t in stmts if isinstance(t[1], IR.For)]
    ifs = [t for t in stmts if isinstance(t[1], IR.If)]
    allocs = [t for t in stmts if isinstance(t[1], IR.Alloc)]
    calls = [t for t in stmts if isinstance(t[1], IR.Call)]
    cur = lambda t: StmtCursor(p, t[0])
    pick = rng.choice
    ops = []  # (description, fn, args, kwargs)

    if loops:
        L = pick(loops)
        c = cur(L)
        tail = pick(["guard", "cut", "cut", "guard", "perfect"])
        factor = pick([1, 2, 3, 4, 4, 8] + ([0] if rng.random() < .1 else []))
        ops.append((f"split({L[1].iter.name}, {factor}, {tail})", p.split,
                    (c, factor, fresh("o"), fresh("n")), {"tail": tail}))
        nests = [t for t in loops if len(t[1].body) == 1
                 and isinstance(t[1].body[0], IR.For)]
        if nests and rng.random() < .8:
            o = pick(nests)
            ops.append(("reorder", p.reorder,
                        (cur(o), StmtCursor(p, o[0] + (("body", 0), ))), {}))
        else:
            ops.append(("reorder", p.reorder, (c, cur(pick(loops))), {}))
        small = [t for t in loops if isinstance(t[1].hi, IR.Const)
                 and isinstance(t[1].lo, IR.Const)
                 and t[1].hi.val - t[1].lo.val <= 8]
        ops.append(("unroll", p.unroll,
                    (cur(pick(small)) if small and rng.random() < .8
                     else c, ), {}))
        ops.append(("parallelize", p.parallelize, (c, ), {}))
        cut = rng.randint(0, 3)
        ops.append((f"partition_loop({cut})", p.partition_loop, (c, cut), {}))
        lo = rng.randint(-1, 3)
        ops.append((f"shift_loop({lo})", p.shift_loop, (c, lo), {}))
        pairs = [(t, u) for t in loops for u in _next_sibling(stmts, t)
                 if isinstance(u[1], IR.For)]
        if pairs:
            t, u = pick(pairs)
            ops.append(("fuse_loop", p.fuse_loop, (cur(t), cur(u)), {}))
        # loop primitives under Exo's names
        ops.append((f"cut_loop({cut})", p.cut_loop, (c, cut), {}))
        uf = pick([1, 2, 3, 4])
        ops.append((f"unroll_loop({uf})", p.unroll_loop, (c, uf), {}))
        if pairs:
            meet = [(t, u) for t, u in pairs
                    if expr_to_str(t[1].hi) == expr_to_str(u[1].lo)]
            t, u = pick(meet) if meet and rng.random() < .8 else pick(pairs)
            ops.append(("join_loops", p.join_loops, (cur(t), cur(u)), {}))
        if nests:
            o = pick(nests)
            ops.append(("mult_loops", p.mult_loops,
                        (cur(o), StmtCursor(p, o[0] + (("body", 0), )),
                         fresh("m")), {}))
        stride = pick([1, 2, 3])
        ohi = pick(["1", "2", "N / 2", "M - 1", "3"])
        ops.append((f"divide_with_recompute({ohi}, {stride})",
                    p.divide_with_recompute, (c, ohi, stride,
                                              [fresh("d"), fresh("r")]), {}))
        unused = [t for t in loops if t[1].iter not in free_vars(t[1].body)]
        ops.append(("remove_loop", p.remove_loop,
                    (cur(pick(unused)) if unused else c, ), {}))
        # stage a window of a buffer the loop touches, at the loop
        acc = _accesses(L[1])
        inner_iters = {n.iter for n in walk(L[1]) if isinstance(n, IR.For)}
        if acc:
            buf, idx = pick(acc)
            shape = None
            for fa in p.ir().args:
                if fa.name.name == buf and isinstance(fa.type, IR.Tensor):
                    shape = fa.type.hi
            if shape is not None and len(shape) == len(idx):
                dims = []
                for ix, hi in zip(idx, shape):
                    e = expr_to_str(ix)
                    full = f"0:{expr_to_str(hi)}"
                    if free_vars(ix) & inner_iters or rng.random() < .4:
                        dims.append(full)
                    else:
                        dims.append(f"{e}:{e} + 1")
                edge = rng.random() < .35
                if edge:
                    # a window that may run past the buffer's end (or
                    # start): staged with guarded loads and stores
                    d = rng.randrange(len(idx))
                    e = expr_to_str(idx[d])
                    lo = pick([e, e, f"{e} - 1", "0"])
                    dims[d] = f"{lo}:{lo} + {pick([2, 3, 4])}"
                win = f"{buf}[{', '.join(dims)}]"
                accum = rng.random() < 0.3
                op = "stage_mem[edge]" if edge else "stage_mem"
                ops.append((f"{op}({win}, accum={accum})", p.stage_mem,
                            (c, win, fresh("s")), {"accum": accum}))
    if stmts:
        S = pick(stmts)
        c = cur(S)
        n = rng.randint(1, 2)
        ops.append((f"fission_after(n={n})", p.fission_after, (c, ),
                    {"n_lifts": n}))
        sib = _next_sibling(stmts, S)
        if sib:
            ops.append(("reorder_stmts", p.reorder_stmts,
                        (c, cur(sib[0])), {}))
        if S[2]:
            cond = pick([f"{pick(S[2])} < 2", f"{pick(S[2])} == 0"])
        else:
            cond = pick(["1 < 2", "0 == 1"])
        if any(isinstance(n, (IR.ReadConfig, IR.WriteConfig))
               for n in walk(S[1])) and rng.random() < .5:
            cond = pick(["FuzzCfg.k < 2", "FuzzCfg.n == 3"])
        ops.append((f"add_guard({cond})", p.add_guard, (c, cond), {}))
        conds = [cond] + ([pick(["1 < 2", "0 == 1", cond])]
                          if rng.random() < .5 else [])
        ops.append((f"specialize({conds})", p.specialize, (c, conds), {}))
        scopes = [t for t in loops + ifs if t[0][:-1]]
        if scopes:
            ops.append(("lift_scope", p.lift_scope, (cur(pick(scopes)), ),
                        {}))
        ex = _exprs(S[1])
        data = [e for e in ex if T.is_data(get_expr(S[1], e).type)]
        if ex:
            ep = pick(data) if data and rng.random() < .85 else pick(ex)
            cse = rng.random() < 0.5
            ops.append((f"bind_expr(cse={cse})", p.bind_expr,
                        (ExprCursor(p, S[0], ep), fresh("b")), {"cse": cse}))
    if ifs:
        n = rng.randint(1, 2)
        ops.append((f"lift_if(n={n})", p.lift_if, (cur(pick(ifs)), ),
                    {"n_lifts": n}))
    if allocs:
        c = cur(pick(allocs))
        n = rng.randint(1, 2)
        ops.append((f"lift_alloc(n={n})", p.lift_alloc, (c, ),
                    {"n_lifts": n}))
        ops.append(("set_memory", p.set_memory, (c, DRAM_STATIC), {}))
    if calls:
        ops.append(("inline", p.inline, (cur(pick(calls)), ), {}))
    # buffer and expression rewrites
    ops.extend(_buffer_expr_ops(p, rng, stmts, loops, ifs, allocs, cur))
    ops.extend(_exo_alias_ops(p, rng, stmts, loops, allocs, cur, fresh))
    ops.append(("simplify", p.simplify, (), {}))
    desc, fn, args, kwargs = pick(ops)
    return desc, functools.partial(fn, *args, **kwargs)


def _buffer_expr_ops(p, rng, stmts, loops, ifs, allocs, cur):
    """Draws of sink_alloc, delete_buffer, eliminate_dead_code,
    inline_assign, inline_loop, commute_expr, merge_writes, rewrite_expr,
    reuse_buffer, resize_dim and rearrange_dim (targets mostly plausible,
    parameters sometimes not)."""
    pick = rng.choice
    ops = []
    if loops:
        # mostly a producer nest: loops down to one indexed assignment
        def producer(t):
            s = t[1]
            while len(s.body) == 1 and isinstance(s.body[0], IR.For):
                s = s.body[0]
            return (len(s.body) == 1 and isinstance(s.body[0], IR.Assign)
                    and bool(s.body[0].idx))
        nests = [t for t in loops if producer(t)]
        L = pick(nests) if nests and rng.random() < .85 else pick(loops)
        ops.append(("inline_loop", p.inline_loop, (cur(L), ), {}))
    if allocs:
        A = pick(allocs)
        ops.append(("sink_alloc", p.sink_alloc, (cur(A), ), {}))
        ops.append(("delete_buffer", p.delete_buffer, (cur(A), ), {}))
        if len(allocs) > 1:
            earlier = [t for t in allocs if t[0] < A[0]]
            B = pick(earlier) if earlier and rng.random() < .8 \
                else pick(allocs)
            ops.append(("reuse_buffer", p.reuse_buffer,
                        (cur(A), cur(B)), {}))
        tens = [t for t in allocs if isinstance(t[1].type, IR.Tensor)]
        if tens:
            Tn = pick(tens)
            nd = len(Tn[1].type.hi)
            dim = rng.randrange(nd + (1 if rng.random() < .1 else 0))
            ext = Tn[1].type.hi[min(dim, nd - 1)]
            size = pick([1, 2, 3, 4, expr_to_str(ext)])
            off = pick([0, 0, 1])
            fold = rng.random() < .35
            ops.append((f"resize_dim({dim}, {size}, {off}, fold={fold})",
                        p.resize_dim, (cur(Tn), dim, size, off),
                        {"fold": fold}))
            Tr = pick(tens)
            perm = list(range(len(Tr[1].type.hi)))
            rng.shuffle(perm)
            if rng.random() < .3:    # not a permutation: must be refused
                perm = pick([perm + [len(perm)], perm[:-1] or [1],
                             [0] * (len(perm) + 1), [-1] + perm[1:]])
            ops.append((f"rearrange_dim({perm})", p.rearrange_dim,
                        (cur(Tr), perm), {}))
    dead = ifs + loops
    if dead:
        ops.append(("eliminate_dead_code", p.eliminate_dead_code,
                    (cur(pick(dead)), ), {}))
    assigns = [t for t in stmts if isinstance(t[1], IR.Assign)]
    if assigns:
        ops.append(("inline_assign", p.inline_assign,
                    (cur(pick(assigns)), ), {}))
    if stmts:
        S = pick(stmts)
        bins = [e for e in _exprs(S[1])
                if isinstance(get_expr(S[1], e), IR.BinOp)]
        if bins:
            ops.append(("commute_expr", p.commute_expr,
                        (ExprCursor(p, S[0], pick(bins)), ), {}))
        writes = [t for t in stmts if isinstance(t[1], (IR.Assign, IR.Reduce))]
        pairs = [(t, u) for t in writes for u in _next_sibling(stmts, t)
                 if isinstance(u[1], (IR.Assign, IR.Reduce))]
        if pairs:
            t, u = pick(pairs)
            ops.append(("merge_writes", p.merge_writes,
                        ((cur(t), cur(u)), ), {}))
    if loops:
        L = pick(loops)
        c = cur(L).hi()
        txt = expr_to_str(L[1].hi)
        new = pick([f"{txt} + 0", f"({txt}) * 1", f"{txt} - 1", f"{txt} + 1",
                    f"2 * ({txt}) - ({txt})"])
        ops.append((f"rewrite_expr({new})", p.rewrite_expr, (c, new), {}))
    conds = [(t, e) for t in stmts for e in _exprs(t[1])
             if get_expr(t[1], e).type is IR.Bool]
    if conds:
        t, e = pick(conds)
        ops.append(("rewrite_expr(cond)", p.rewrite_expr,
                    (ExprCursor(p, t[0], e), pick(["True", "False"])), {}))
    return ops


def _exo_alias_ops(p, rng, stmts, loops, allocs, cur, fresh):
    """Draws of Exo's spellings (``divide_loop``, ``reorder_loops 'a b'``,
    ``fission``/``autofission`` at gap cursors, ``autolift_alloc``,
    ``fuse``, ``parallelize_loop``, ``unroll_loop`` without a factor,
    ``reorder_stmts`` of a block, ``mult_loops 'i j'``, ``write_config``),
    of ``commute_expr`` at a cursor reached by ``.lhs()``/``.rhs()``, and
    of ``expand_dim``/``divide_dim``/``unroll_buffer``."""
    pick = rng.choice
    ops = []
    if loops:
        L = pick(loops)
        name = L[1].iter.name
        target = pick([name, cur(L)])
        factor = pick([2, 3, 4])
        perfect = rng.random() < .25
        tail = pick(["guard", "cut"])
        ops.append((f"divide_loop({factor}, {tail}, perfect={perfect})",
                    p.divide_loop, (target, factor, [fresh("o"), fresh("n")]),
                    {"tail": tail, "perfect": perfect}))
        nests = [t for t in loops if len(t[1].body) == 1
                 and isinstance(t[1].body[0], IR.For)]
        if nests:
            o = pick(nests)
            pat = f"{o[1].iter.name} {o[1].body[0].iter.name}"
            ops.append((f"reorder_loops('{pat}')", p.reorder_loops, (pat, ),
                        {}))
            ops.append((f"mult_loops('{pat}')", p.mult_loops,
                        (pat, fresh("m")), {}))
        ops.append(("parallelize_loop", p.parallelize_loop, (cur(L), ), {}))
        ops.append(("unroll_loop", p.unroll_loop, (cur(L), ), {}))
        sib = [(t, u) for t in loops for u in _next_sibling(stmts, t)
               if isinstance(u[1], IR.For)]
        if sib:
            t, u = pick(sib)
            ops.append(("fuse", p.fuse, (cur(t), cur(u)), {}))
    if stmts:
        S = pick(stmts)
        n = rng.randint(1, 3)
        gap = cur(S).after() if rng.random() < .6 else cur(S).before()
        op = pick(["fission", "autofission"])
        ops.append((f"{op}(n={n})", getattr(p, op), (gap, ), {"n_lifts": n}))
        sib = _next_sibling(stmts, S)
        if sib:
            ops.append(("reorder_stmts[block]", p.reorder_stmts,
                        (cur(S).expand(0, 1), ), {}))
        bins = [e for e in _exprs(S[1])
                if isinstance(get_expr(S[1], e), IR.BinOp)]
        if bins:   # expression-cursor navigation: a child of a binop
            ec = ExprCursor(p, S[0], pick(bins))
            ec = ec.lhs() if rng.random() < .5 else ec.rhs()
            ops.append(("commute_expr[child]", p.commute_expr, (ec, ), {}))
        if any(isinstance(n, (IR.ReadConfig, IR.WriteConfig))
               for t in stmts for n in walk(t[1])):
            field, rhs = pick([("k", pick(["0", "1", "2"])),
                               ("n", pick(["1", "3", "4"]))])
            ops.append((f"write_config({field}, {rhs})", p.write_config,
                        (gap, FuzzCfg, field, rhs), {}))
    if allocs:
        A = pick(allocs)
        n = rng.randint(1, 2)
        ops.append((f"autolift_alloc(n={n})", p.autolift_alloc, (cur(A), ),
                    {"n_lifts": n}))
        if A[2]:
            it = pick(A[2])
            ext = pick(["4", "N", "M", "8", "2"])
            ix = pick([it, f"{it} - 1", "0"])
            ops.append((f"expand_dim({ext}, {ix})", p.expand_dim,
                        (cur(A), ext, ix), {}))
        if isinstance(A[1].type, IR.Tensor):
            nd = len(A[1].type.hi)
            dim = rng.randrange(nd)
            ops.append(("divide_dim", p.divide_dim,
                        (cur(A), dim, pick([2, 4])), {}))
            ops.append(("unroll_buffer", p.unroll_buffer, (cur(A), dim), {}))
    return ops


# ----------------------------------------------------------------------
# checking
def _sizes(p, rng):
    return {fa.name.name: rng.randint(1, 5) for fa in p.ir().args
            if fa.type is IR.Size}


def _outputs(p, base, par_order="forward", race_check=False):
    args = {k: (v.copy() if isinstance(v, np.ndarray) else v)
            for k, v in base.items()}
    st = ConfigState()
    st.par_order = par_order
    st.race_check = race_check
    p.interpret(*[args[fa.name.name] for fa in p.ir().args],
                config_state=st)
    return args


def _check_equal(p0, p, datasets):
    """``p`` gives ``p0``'s outputs; with par loops, also when they run
    last iteration first (``ConfigState.par_order``), and on the first
    data set with the interpreter's race recorder on
    (``ConfigState.race_check``: ``RaceError`` when two iterations of a par
    loop touch one location, one writing). The interpreter runs par loops
    sequentially, so a race the analysis missed shows in a plain run only
    as an order dependence (the class of a callee's scalar parameter left
    out of the race check's footprint, session 11); the recorder sees the
    rest (one value written twice, ``+=`` into one location)."""
    runs = [("forward", False)]
    if has_par_loops([p.ir()]):
        runs += [("reverse", False), ("forward", True)]
    for n, (base, ref) in enumerate(datasets):
        for order, race in runs:
            if race and n:
                continue
            got = _outputs(p, base, order, race)
            for k, v in ref.items():
                if isinstance(v, np.ndarray):
                    np.testing.assert_array_equal(
                        got[k], v, err_msg=f"buffer {k}, par loops {order}"
                        + (", race_check" if race else ""))


def _datasets(p0, rng, n=2):
    out = []
    nrng = np.random.default_rng(rng.randint(0, 2**31))
    for _ in range(n):
        sizes = _sizes(p0, rng)
        base = {}
        for fa in p0.ir().args:
            name = fa.name.name
            if fa.type is IR.Size:
                base[name] = sizes[name]
            else:
                shape = tuple(_ev(h, base) for h in fa.type.hi)
                base[name] = nrng.integers(-4, 5, size=shape).astype(
                    T.NUMPY_DTYPES[fa.type.type])
        out.append((base, _outputs(p0, base)))
    return out


def _ev(e, env):
    """Value of a size expression of an argument's shape."""
    if isinstance(e, IR.Const):
        return e.val
    if isinstance(e, IR.Read):
        return env[e.name.name]
    if isinstance(e, IR.BinOp) and e.op in ("+", "-", "*"):
        a, b = _ev(e.lhs, env), _ev(e.rhs, env)
        return {"+": a + b, "-": a - b, "*": a * b}[e.op]
    raise NotImplementedError(repr(e))


def fuzz(n_seqs, n_steps, seed, roundtrip, budget_s=None, compile_final=False,
         procs=PROCS, failures=None, progress=None, verdicts=None):
    """Run ``n_seqs`` random sequences on ``procs``; return (sequences,
    steps, accepted, per-op acceptance counts). With a ``failures`` list, a
    failing step is appended to it (and its sequence abandoned) instead of
    raising, so a long run reports every failure it meets. ``progress``
    (a number n) prints the counts every n sequences. With a ``verdicts``
    dict, each sequence's final procedure is also checked against its
    algorithm by ``exo_hl.validate`` (independent of the rewrites' own
    checks): a 'refuted' is a failure, and the statuses are counted."""
    rng = random.Random(seed)
    t0 = time.time()
    steps = accepted = seqs = 0
    per_op = {}
    for s in range(n_seqs):
        if budget_s is not None and time.time() - t0 > budget_s:
            break
        if progress and s and s % progress == 0:
            print(f"  ... {seqs} sequences, {steps} steps, {accepted} "
                  f"accepted, {len(failures or ())} failing "
                  f"({time.time() - t0:.0f}s)", flush=True)
        p0 = procs[s % len(procs)]
        data = _datasets(p0, rng)
        p = p0
        fresh = Namer()
        log = []
        seqs += 1
        for _ in range(n_steps):
            desc, thunk = random_step(p, rng, fresh)
            op = desc.split("(")[0]
            tried, ok = per_op.get(op, (0, 0))
            steps += 1
            try:
                q = thunk()
            except SchedulingError:
                per_op[op] = (tried + 1, ok)
                continue
            except Exception as e:  # the property under test
                err = AssertionError(
                    f"{desc} raised {type(e).__name__} (not SchedulingError)"
                    f" after {log} on\n{p}")
                if failures is None:
                    raise err from e
                failures.append((op, str(err)))
                break
            log.append(desc)
            per_op[op] = (tried + 1, ok + 1)
            accepted += 1
            try:
                _check_equal(p0, q, data)
                roundtrip(q)
            except Exception as e:
                err = AssertionError(
                    f"after {log}: {type(e).__name__}: {e}\n"
                    f"before:\n{p}\nafter:\n{q}")
                if failures is None:
                    raise err from e
                failures.append((op, str(err)))
                break
            p = q
        if verdicts is not None and p is not p0:
            from exo_hl.validate import validate
            v = validate(p0, p, max_sizes=1, rounds=8)
            verdicts[v.status] = verdicts.get(v.status, 0) + 1
            if v.refuted:
                err = AssertionError(f"accepted {log}, but the validator "
                                     f"refutes it: {v}\n{p}")
                if failures is None:
                    raise err
                failures.append(("validate", str(err)))
        if compile_final and p is not p0:
            try:
                fn = p.compile()
            except MemGenError as e:
                # set_memory(DRAM_STATIC) is accepted for symbolic shapes;
                # the backend then refuses it (a documented MemGenError)
                assert "DRAM_STATIC" in str(e) and "constant" in str(e), e
                per_op["<compile refused>"] = (
                    per_op.get("<compile refused>", (0, 0))[0] + 1, 0)
                continue
            for base, ref in data:
                args = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                        for k, v in base.items()}
                fn(*[args[fa.name.name] for fa in p.ir().args])
                for k, v in ref.items():
                    if isinstance(v, np.ndarray):
                        np.testing.assert_array_equal(
                            args[k], v, err_msg=f"compiled {k} after {log}")
    return seqs, steps, accepted, per_op


def _report(name, res, dt):
    seqs, steps, accepted, per_op = res
    print(f"\n[{name}] {seqs} sequences, {steps} steps, {accepted} accepted "
          f"({dt:.1f}s)")
    for op, (t, a) in sorted(per_op.items()):
        if op == "<compile refused>":
            print(f"    final procedures refused by the C backend: {t}")
        else:
            print(f"    {op:16s} {a:4d}/{t:<4d} accepted")


# The suite-wide audit (tests/conftest.py) compiles every procedure a test
# makes as C; for hundreds of random procedures that costs minutes, so the
# big runs are exempt from its C part (not from its round trip) and a small
# sample is audited as C by test_random_schedules_audited_as_c; the slow
# variant compiles each sequence's final procedure and compares it.
_NO_C = pytest.mark.no_c_audit(
    "hundreds of random procedures: equivalence is checked in the "
    "interpreter; a C-audited sample runs in "
    "test_random_schedules_audited_as_c")


@pytest.fixture(params=["incremental", "full"])
def recheck_mode(request, monkeypatch):
    """Both ways of re-checking rewrite results: incremental (the default)
    and whole-procedure (``EXO_HL_FULL_RECHECK=1``)."""
    if request.param == "full":
        monkeypatch.setenv(FULL_RECHECK_ENV, "1")
    else:
        monkeypatch.delenv(FULL_RECHECK_ENV, raising=False)
    return request.param


@_NO_C
def test_random_schedules(assert_roundtrip, recheck_mode):
    t0 = time.time()
    res = fuzz(n_seqs=40, n_steps=10, seed=1234, roundtrip=assert_roundtrip,
               budget_s=30)
    _report(f"fuzz, {recheck_mode} re-check", res, time.time() - t0)
    seqs, steps, accepted, per_op = res
    assert seqs >= 15
    # the generator must exercise real schedules, not only rejections
    assert accepted >= steps // 5
    assert sum(1 for t, a in per_op.values() if a > 0) >= 10


def test_random_schedules_audited_as_c(assert_roundtrip):
    """A few sequences whose every procedure the suite audit compiles with
    -Wall -Wextra -Werror (gcc and clang)."""
    t0 = time.time()
    res = fuzz(n_seqs=6, n_steps=8, seed=77, roundtrip=assert_roundtrip)
    _report("fuzz-audited", res, time.time() - t0)
    assert res[2] > 0


#: ``EXO_HL_SCHEDULE_FUZZ_S=<seconds>``: the long runs below go on for that
#: many seconds with a new seed (by hand, after changing a rewrite); the
#: suite runs a fixed number of sequences with a fixed seed
LONG_ENV = "EXO_HL_SCHEDULE_FUZZ_S"


def _long_run(n_seqs, seed):
    """(n_seqs, seed, budget) of a long test: the suite's fixed sample, or
    a timed run with a fresh seed when ``LONG_ENV`` is set."""
    long_run = os.environ.get(LONG_ENV)
    if not long_run:
        return n_seqs, seed, None
    return 10**6, int(time.time()) % 10**6, float(long_run)


@_NO_C
@pytest.mark.slow
def test_random_schedules_long(assert_roundtrip):
    """Long sequences (16 steps) over every procedure, each final procedure
    compiled and compared with the interpreter's result. The suite runs 40
    sequences (each procedure of ``PROCS`` 4 times; it used to run up to
    150 under a 240 s budget, over two minutes of the suite's time): set
    ``LONG_ENV`` for the long sweep."""
    n_seqs, seed, budget = _long_run(4 * len(PROCS), 99)
    t0 = time.time()
    res = fuzz(n_seqs=n_seqs, n_steps=16, seed=seed,
               roundtrip=assert_roundtrip, compile_final=True,
               budget_s=budget)
    _report(f"fuzz-long, seed {seed}", res, time.time() - t0)
    seqs, steps, accepted, per_op = res
    assert budget is not None or seqs == n_seqs
    assert accepted > 0
    assert sum(1 for t, a in per_op.values() if a > 0) >= 10


@_NO_C
def test_random_schedules_config_bounds(assert_roundtrip, recheck_mode):
    """Bounds, conditions and call arguments reading config state their
    loops, branches and callees write: every rewrite either refuses or
    keeps the meaning (the interpreter evaluates each of them once)."""
    t0 = time.time()
    res = fuzz(n_seqs=24, n_steps=10, seed=4321, roundtrip=assert_roundtrip,
               budget_s=20, procs=CONFIG_PROCS)
    _report(f"fuzz-config, {recheck_mode} re-check", res, time.time() - t0)
    seqs, steps, accepted, per_op = res
    assert seqs >= 9
    assert accepted >= steps // 6
    assert sum(1 for t, a in per_op.values() if a > 0) >= 8


def test_random_schedules_config_bounds_compiled(assert_roundtrip):
    """A few config sequences whose final procedures run as C too."""
    res = fuzz(n_seqs=3, n_steps=8, seed=55, roundtrip=assert_roundtrip,
               procs=CONFIG_PROCS, compile_final=True)
    assert res[2] > 0


@_NO_C
@pytest.mark.slow
def test_random_schedules_config_bounds_long(assert_roundtrip):
    """Long (16-step) config sequences, compiled: 30 in the suite (each
    config procedure 10 times; it used to run 90), a timed sweep with
    ``LONG_ENV``."""
    n_seqs, seed, budget = _long_run(10 * len(CONFIG_PROCS), 2024)
    t0 = time.time()
    res = fuzz(n_seqs=n_seqs, n_steps=16, seed=seed,
               roundtrip=assert_roundtrip, procs=CONFIG_PROCS,
               compile_final=True, budget_s=budget)
    _report(f"fuzz-config-long, seed {seed}", res, time.time() - t0)
    seqs, steps, accepted, per_op = res
    assert budget is not None or seqs == n_seqs
    assert accepted > 0


@_NO_C
def test_random_schedules_validated(assert_roundtrip):
    """Translation validation of accepted sequences: a second, independent
    check (exo_hl.validate reads only the two procedures). Any 'refuted'
    is a disagreement between a rewrite that accepted and the validator."""
    t0 = time.time()
    verdicts = {}
    res = fuzz(n_seqs=10, n_steps=6, seed=3737, roundtrip=assert_roundtrip,
               budget_s=20, verdicts=verdicts)
    _report("fuzz-validated", res, time.time() - t0)
    print(f"    validator verdicts: {verdicts}")
    assert "refuted" not in verdicts
    assert verdicts.get("proven", 0) >= 1
