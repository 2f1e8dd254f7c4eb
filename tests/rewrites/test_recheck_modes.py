"""Random schedules decided alike by the incremental and the whole-procedure
re-check of rewrite results.

The random-schedule fuzz machinery (``test_schedule_fuzz``) draws each step
once and runs it twice on the same procedure: with the default incremental
re-check, and with ``EXO_HL_FULL_RECHECK=1`` (every result re-checked from
scratch). Rewrites reject most bad steps with their own safety conditions,
before the re-check runs; so that the re-check itself is exercised, about a
third of the steps are raw edits (``ir_mutations``: constants of bounds,
indices, sizes, windows and config values moved, statements swapped,
deleted or duplicated, loop modes, memories) handed to
``Procedure._derive`` like a rewrite result, which only the re-check
stands between. Both runs must accept, or both reject with the same error class
and message; accepted results must be the same procedure (up to the fresh
names a rewrite invents). Besides the fuzz's own procedures, a few here
are made of what the incremental check reasons about: config writes
feeding loop bounds, indices and callee preconditions, window statements,
allocations used by later statements and calls, par loops, and loops with
constant bounds that unroll into long blocks.

The comparison mode ``EXO_HL_RECHECK_COMPARE=1`` runs both re-checks on
every rewrite result and raises ``RecheckMismatch`` when they disagree: it
is tested here on planted disagreements, and runs the random schedules
(with their equivalence checks) once.
"""
from __future__ import annotations

import random
import time

import pytest

from exo_hl import (DRAM, BoundsError, SchedulingError, config, f32, index,
                    par, proc, seq, size)
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.printer import alpha_equal
from exo_hl.frontend import recheck
from exo_hl.frontend.recheck import (COMPARE_ENV, FULL_RECHECK_ENV,
                                     RecheckMismatch)

import test_schedule_fuzz as F
from ir_mutations import mutate
from test_recheck import (_assert_structural_caches_fresh, _at, _checked,
                          _const, _replace, ctx)


class SCR(DRAM):
    pass


@config
class MC:
    k: index


@proc
def row_add(n: size, x: [f32][n], y: [f32][n]):
    assert MC.k < n
    for i in seq(0, n):
        y[i] += x[i] * 2.0


@proc
def cfg_chain(N: size, A: f32[N, 6], B: f32[6]):
    MC.k = 2
    t: f32[6]
    for i in seq(0, 6):
        t[i] = B[i]
    for i in seq(0, N):
        w = A[i, 0:6]
        row_add(6, t[0:6], w)
    for i in seq(0, 4):
        B[i + MC.k] = t[MC.k] + B[i]
    MC.k = 1
    for i in seq(0, 4):
        B[i + MC.k] += 1.0


@proc
def unrollable(A: f32[4, 4], x: f32[4], y: f32[4]):
    for i in seq(0, 4):
        acc: f32
        acc = 0.0
        for j in seq(0, 4):
            acc += A[i, j] * x[j]
        y[i] = acc
    for i in par(0, 4):
        x[i] = y[3 - i] * 2.0
    for i in seq(0, 3):
        y[i + 1] += x[i]


PROCS = F.PROCS + [cfg_chain, unrollable]


def _run(thunk, monkeypatch, full):
    monkeypatch.delenv(COMPARE_ENV, raising=False)
    if full:
        monkeypatch.setenv(FULL_RECHECK_ENV, "1")
    else:
        monkeypatch.delenv(FULL_RECHECK_ENV, raising=False)
    try:
        return thunk(), None
    except SchedulingError as e:
        return None, e
    finally:
        monkeypatch.delenv(FULL_RECHECK_ENV, raising=False)


@F._NO_C
def test_incremental_and_full_recheck_decide_alike(monkeypatch):
    rng = random.Random(4321)
    t0 = time.time()
    steps = accepted = rejected = net = 0
    for s in range(60):
        if time.time() - t0 > 40 and s >= len(PROCS):
            break
        p = PROCS[s % len(PROCS)]
        fresh = F.Namer()
        log = []
        for _ in range(10):
            desc, thunk = F.random_step(p, rng, fresh)
            if rng.random() < 0.35:
                new = mutate(p.ir(), rng, (DRAM, SCR))
                if new is not None:
                    desc = "edit"
                    thunk = (lambda p=p, new=new: p._derive(new, "edit"))
            q_inc, e_inc = _run(thunk, monkeypatch, full=False)
            q_full, e_full = _run(thunk, monkeypatch, full=True)
            steps += 1
            where = f"step {desc} after {log} on\n{p}"
            if e_inc is not None or e_full is not None:
                assert e_inc is not None and e_full is not None, (
                    f"only the {'incremental' if e_inc else 'full'} re-check "
                    f"rejected {where}:\n{e_inc or e_full}")
                assert type(e_inc) is type(e_full), where
                assert str(e_inc) == str(e_full), where
                rejected += 1
                net += "would not be well formed" in str(e_inc)
                continue
            assert alpha_equal(q_inc.ir(), q_full.ir()), where
            _assert_structural_caches_fresh(q_inc.ir())
            accepted += 1
            log.append(desc)
            p = q_inc
    print(f"\n[recheck modes] {steps} steps: {accepted} accepted, "
          f"{rejected} rejected, {net} of them by the re-check "
          f"({time.time() - t0:.1f}s)")
    assert steps >= 100 and accepted >= 30 and rejected >= 30
    assert net >= 15   # rejected by the re-check itself


def _edits():
    """A procedure known to pass the checks, a harmless edit of it and an
    edit that breaks a bound (``RC.n = 5`` makes ``w[i + 4]`` overflow)."""
    base = _checked(ctx)
    ir = base.ir()
    safe = _replace(ir, (13, ), [_at(ir, 13).update(hi=_const(3))])
    unsafe = _replace(ir, (0, ), [_at(ir, 0).update(rhs=_const(5))])
    return base, safe, unsafe


def test_compare_mode_agrees_on_real_verdicts(monkeypatch):
    base, safe, unsafe = _edits()
    monkeypatch.delenv(FULL_RECHECK_ENV, raising=False)
    monkeypatch.delenv(COMPARE_ENV, raising=False)
    with pytest.raises(SchedulingError) as plain:
        base._derive(unsafe, "edit")
    monkeypatch.setenv(COMPARE_ENV, "1")
    q = base._derive(safe, "edit")
    assert q.ir().body[13].hi == _const(3)
    with pytest.raises(SchedulingError) as compared:
        base._derive(unsafe, "edit")
    assert "out of bounds" in str(compared.value)
    assert str(compared.value) == str(plain.value)


def test_compare_mode_reports_disagreements(monkeypatch):
    base, safe, unsafe = _edits()
    monkeypatch.delenv(FULL_RECHECK_ENV, raising=False)
    monkeypatch.setenv(COMPARE_ENV, "1")
    # an incremental check that accepts everything: unsound, and caught
    monkeypatch.setattr(recheck._Recheck, "run", lambda self: None)
    with pytest.raises(RecheckMismatch, match="incremental re-check accepts"):
        base._derive(unsafe, "edit")

    def reject(self):
        raise BoundsError("planted")
    # one that rejects everything: incomplete, and caught
    monkeypatch.setattr(recheck._Recheck, "run", reject)
    with pytest.raises(RecheckMismatch, match="incremental re-check rejects"):
        base._derive(safe, "edit")
    # without the comparison, the planted rejection is what the user sees
    # (once the result is not known good: the comparison's whole-procedure
    # check passed it, and a passed result is not checked again)
    monkeypatch.delenv(COMPARE_ENV)
    recheck.clear_cache()
    with pytest.raises(SchedulingError, match="planted"):
        base._derive(safe, "edit")


@F._NO_C
def test_random_schedules_in_compare_mode(assert_roundtrip, monkeypatch):
    """The random-schedule fuzz (equivalence in the interpreter, round
    trip) with both re-checks compared on every rewrite result."""
    monkeypatch.delenv(FULL_RECHECK_ENV, raising=False)
    monkeypatch.setenv(COMPARE_ENV, "1")
    calls = []
    orig = recheck._compare

    def spy(*args):
        calls.append(1)
        return orig(*args)
    monkeypatch.setattr(recheck, "_compare", spy)
    t0 = time.time()
    # a fixed number of sequences (no time budget: a busy machine must
    # not shorten the run)
    res = F.fuzz(n_seqs=12, n_steps=10, seed=808, roundtrip=assert_roundtrip,
                 procs=PROCS + F.CONFIG_PROCS)
    F._report("fuzz, compared re-checks", res, time.time() - t0)
    seqs, steps, accepted, _ = res
    assert seqs == 12 and accepted >= steps // 6
    assert len(calls) >= accepted // 2   # (some results skip the check:
    # no-op steps, and changed arguments get the whole-procedure check)


@proc
def dead_store(n: size, x: f32[n]):
    for i in seq(0, n):
        if i >= n:
            x[i] = 0.0


def test_compare_mode_runs_the_incremental_path_whole(monkeypatch):
    """The comparison's incremental side is what ``check_rewritten`` runs
    without the switch: the quasi-affinity and 64-bit range walk, then the
    re-check. A store under a guard that never holds proves anything, so
    ``x[i % 0]`` there passes the re-check alone, and only the range walk
    refuses it, as the whole-procedure check does: no mismatch."""
    monkeypatch.delenv(FULL_RECHECK_ENV, raising=False)
    base = _checked(dead_store)
    ir = base.ir()
    st = _at(ir, 0, 0, 0)
    i = st.idx[0]
    bad = st.update(idx=(IR.BinOp("%", i, _const(0), type=i.type), ))
    new = _replace(ir, (0, 0, 0), [bad])
    monkeypatch.delenv(COMPARE_ENV, raising=False)
    with pytest.raises(SchedulingError, match="not quasi-affine") as plain:
        base._derive(new, "edit")
    recheck.clear_cache()
    monkeypatch.setenv(COMPARE_ENV, "1")
    with pytest.raises(SchedulingError, match="not quasi-affine") as compared:
        base._derive(new, "edit")
    assert str(compared.value) == str(plain.value)
