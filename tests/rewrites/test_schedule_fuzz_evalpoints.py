"""Random schedules over procedures whose control flow observes *where*
control expressions are evaluated: conditions that read strides
(``stride(A, 0)``, ``stride(t, 0)``, a callee branching on the stride of
a window it is passed), and allocations whose sizes read config fields
that the surrounding code writes (so the strides the program reads depend
on where the sizes are evaluated).

Every rewrite the schedule fuzzer draws (``test_schedule_fuzz.random_step``)
runs against them; the properties are the fuzzer's: a scheduling call
raises nothing but ``SchedulingError``, and an accepted step computes the
same outputs as the original in the interpreter (and, at the end of some
sequences, as C), and round-trips through its printed text.

The default run takes seconds. ``EXO_HL_EVALPOINT_FUZZ_S=<seconds>`` runs
longer (its figures are printed with ``pytest -s``); all failures are
collected and reported together.
"""
from __future__ import annotations

import functools
import os
import time

from exo_hl import f32, proc, seq, stride
from exo_hl.core_ir.nodes import IR
from exo_hl.cursors import StmtCursor

import test_schedule_fuzz as F
from test_schedule_fuzz import FuzzCfg, recheck_mode  # noqa: F401 (fixture)


# ----------------------------------------------------------------------
# the corpus
@proc
def ev_row_or_col(v: [f32][4], o: [f32][1]):
    if stride(v, 0) == 1:
        o[0] += v[0] + v[1]
    else:
        o[0] += v[2] * 2.0


@proc
def ev_strides(A: f32[4, 4], y: f32[8]):
    for i in seq(0, 4):
        for j in seq(0, 4):
            if stride(A, 0) == 4:
                y[i] += A[i, j]
            else:
                y[i + 4] += A[j, i]
    for i in seq(0, 2):
        if stride(A, 1) == 1 and stride(A, 0) > 2:
            y[i + 2] += A[i, 2] * 3.0
    for i in seq(0, 2):
        ev_row_or_col(A[i, 0:4], y[i:i + 1])
        ev_row_or_col(A[0:4, i], y[i + 4:i + 5])


@proc
def ev_sized(x: f32[8], y: f32[8]):
    FuzzCfg.n = 4
    t: f32[2, FuzzCfg.n]
    for i in seq(0, 4):
        t[0, i] = x[i] * 2.0
        t[1, i] = x[i + 4]
        if stride(t, 0) == 4:
            y[i] = t[0, i] + t[1, i]
        FuzzCfg.n = 3
    u: f32[2, FuzzCfg.n]
    for i in seq(0, 2):
        u[0, i] = x[i]
        u[1, i] = x[i + 1]
        if stride(u, 0) == 3:
            y[i + 4] += u[0, i] * u[1, i]
        FuzzCfg.n = 5


@proc
def ev_sized_loop(x: f32[8], y: f32[8]):
    FuzzCfg.n = 2
    for i in seq(0, 4):
        t: f32[2, FuzzCfg.n]
        t[0, 0] = x[i]
        t[1, 0] = x[i + 4]
        if stride(t, 0) == 2:
            y[i] = t[0, 0] + t[1, 0]
        else:
            y[i + 4] = t[1, 0] * 2.0
        FuzzCfg.n = 3
    FuzzCfg.k = 1
    for i in seq(0, 2):
        FuzzCfg.n = 4 + i
        w: f32[FuzzCfg.n]
        for j in seq(0, 4):
            w[j] = x[j + 4]
        if stride(w, 0) == 1:
            y[i] += w[0] + w[FuzzCfg.k]


@proc
def ev_branch_sized(x: f32[8], y: f32[8]):
    FuzzCfg.n = 3
    for i in seq(0, 4):
        if FuzzCfg.n == 3:
            FuzzCfg.n = 4
            s: f32[FuzzCfg.n, 2]
            s[0, 0] = x[i]
            s[3, 1] = x[i + 1]
            if stride(s, 0) == 2:
                y[i] = s[0, 0] + s[3, 1]
        else:
            FuzzCfg.n = 3
            y[i + 4] = x[i] * 3.0


EVAL_PROCS = [ev_strides, ev_sized, ev_sized_loop, ev_branch_sized]


# ----------------------------------------------------------------------
# the generator: the fuzzer's steps, and more of those that move an
# evaluation point across a config write or change a layout
_BASE_STEP = F.random_step


def evalpoint_step(p, rng, fresh):
    """(description, thunk) of one random scheduling call on ``p``: one of
    ``test_schedule_fuzz.random_step``'s, or (about a third of the time)
    one aimed at this corpus: ``stage_mem`` of a random sub-window of a
    2-d argument around a loop or statement that reads its strides,
    ``reorder_stmts`` of an allocation with a neighbour,
    ``configwrite_at`` of a config field next to an allocation,
    ``fission_after`` of a statement before a config write, and
    ``lift_alloc``/``sink_alloc``."""
    if rng.random() > .35:
        return _BASE_STEP(p, rng, fresh)
    stmts = F._stmts(p)
    cur = lambda t: StmtCursor(p, t[0])
    pick = rng.choice
    ops = []
    allocs = [t for t in stmts if isinstance(t[1], IR.Alloc)]
    mats = [fa for fa in p.ir().args if isinstance(fa.type, IR.Tensor)
            and len(fa.type.hi) == 2]
    users = [t for t in stmts if isinstance(t[1], (IR.For, IR.If,
                                                   IR.Call))]
    if mats and users:
        a = pick(mats).name.name
        t = pick(users)
        dims = []
        for k in range(2):
            lo = pick([0, 0, 1, 2])
            if t[2] and rng.random() < .3:
                it = pick(t[2])
                dims.append(pick([it, f"{it}:{it} + 1"]))
            else:
                dims.append(f"{lo}:{min(4, lo + pick([1, 2, 4]))}")
        win = f"{a}[{', '.join(dims)}]"
        ops.append((f"stage_mem*({win})", p.stage_mem,
                    (cur(t), win, fresh("S")), {}))
    for t in allocs:
        for u in F._next_sibling(stmts, t):
            ops.append(("reorder_stmts*(alloc, next)", p.reorder_stmts,
                        (cur(t), cur(u)), {}))
        for u in stmts:
            if F._next_sibling(stmts, u) and \
                    F._next_sibling(stmts, u)[0][0] == t[0]:
                ops.append(("reorder_stmts*(prev, alloc)", p.reorder_stmts,
                            (cur(u), cur(t)), {}))
        field, val = pick([("n", pick(["2", "3", "4"])),
                           ("k", pick(["0", "1"]))])
        before = rng.random() < .6
        ops.append((f"configwrite_at*({field}={val}, before={before})",
                    p.configwrite_at, (cur(t), FuzzCfg, field, val),
                    {"before": before}))
        ops.append(("lift_alloc*", p.lift_alloc, (cur(t), ), {}))
        ops.append(("sink_alloc*", p.sink_alloc, (cur(t), ), {}))
    writes = [t for t in stmts if isinstance(t[1], IR.WriteConfig)]
    for w in writes:
        prev = [u for u in stmts if F._next_sibling(stmts, u)
                and F._next_sibling(stmts, u)[0][0] == w[0]]
        for u in prev:
            ops.append(("fission_after*", p.fission_after, (cur(u), ),
                        {"n_lifts": rng.randint(1, 2)}))
    if not ops:
        return _BASE_STEP(p, rng, fresh)
    desc, fn, args, kwargs = pick(ops)
    return desc, functools.partial(fn, *args, **kwargs)


def _run(assert_roundtrip, name, seconds, n_seqs, seed, compile_final,
         monkeypatch):
    # the fuzzer draws its steps from ``random_step``: ours extends it
    monkeypatch.setattr(F, "random_step", evalpoint_step)
    failures = []
    t0 = time.time()
    res = F.fuzz(n_seqs=n_seqs, n_steps=12, seed=seed,
                 roundtrip=assert_roundtrip, budget_s=seconds,
                 procs=EVAL_PROCS, failures=failures,
                 compile_final=compile_final,
                 progress=200 if seconds > 60 else None)
    F._report(name, res, time.time() - t0)
    print(f"    seed {seed}, failures: {len(failures)}")
    assert not failures, "\n\n".join(msg for _, msg in failures[:3])
    return res


@F._NO_C
def test_random_schedules_eval_points(assert_roundtrip, recheck_mode,
                                      monkeypatch):
    long_s = float(os.environ.get("EXO_HL_EVALPOINT_FUZZ_S", "0") or 0)
    if long_s and recheck_mode == "full":
        return   # a long run is made once, in the default mode
    seconds = long_s or 12
    seqs, steps, accepted, per_op = _run(
        assert_roundtrip, f"fuzz-evalpoints, {recheck_mode} re-check",
        seconds, 10**6 if long_s else 24, 8128 if not long_s else
        int(time.time()), compile_final=False,
        monkeypatch=monkeypatch)
    assert seqs >= len(EVAL_PROCS)
    # the generator must exercise real schedules, not only rejections
    assert accepted >= steps // 6
    assert sum(1 for t, a in per_op.values() if a > 0) >= 8


def test_random_schedules_eval_points_compiled(assert_roundtrip,
                                               monkeypatch):
    """A few sequences whose final procedures run as C too."""
    res = _run(assert_roundtrip, "fuzz-evalpoints-compiled", 20, 4, 31,
               compile_final=True, monkeypatch=monkeypatch)
    assert res[2] > 0
