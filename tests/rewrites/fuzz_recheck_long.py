"""A long random-schedule run with both re-checks compared on every step.

Not collected by pytest (the suite runs short versions of both parts:
``test_schedule_fuzz`` in each re-check mode, ``test_recheck_modes``); run
it by hand after changing the incremental re-check:

    python tests/rewrites/fuzz_recheck_long.py --seqs 2000 [--steps 10]
        [--seed 1] [--mode compare|incremental|full] [--parts edits,fuzz]
        [--budget SECONDS] [--keep-going]

``--budget`` stops the random-schedule part after that many seconds (the
sequences run so far are reported); ``--keep-going`` records each failing
step (with its sequence) and carries on, printing them all at the end.

Part 1 is the random-schedule fuzz (``test_schedule_fuzz.fuzz``: every
accepted step is compared with the original procedure in the interpreter);
part 2 mixes rewrites with raw IR edits handed to ``Procedure._derive``
(``ir_mutations``), which only the re-check stands between, some of them
edits of a rewrite's result handed over as one step from the procedure
before the rewrite (so an edited copy of an unrolled loop or an edited
split nest meets the re-check's shortcuts for those, ``unrolled``). In the default
``compare`` mode (``EXO_HL_RECHECK_COMPARE=1``) every rewrite result is
checked both incrementally and from scratch, and any disagreement raises
``RecheckMismatch``. Prints the counts of each part.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_HERE))      # tests/: the shared kernels
sys.path.insert(0, _HERE)

from exo_hl import DRAM, SchedulingError  # noqa: E402
from exo_hl.frontend import recheck  # noqa: E402

import test_schedule_fuzz as F  # noqa: E402
from ir_mutations import mutate, respelled  # noqa: E402
from test_recheck_modes import PROCS, SCR  # noqa: E402
from test_recheck_unrolled import FUZZ_PROCS  # noqa: E402


def _count_compares():
    calls = [0]
    orig = recheck._compare

    def counted(*args):
        calls[0] += 1
        return orig(*args)
    recheck._compare = counted
    return calls


#: rewrites turning a loop into copies or nests of its body
_LOOP_COPIERS = ("unroll", "split", "shift_loop", "partition_loop",
                 "cut_loop", "divide_loop")


def edits(n_seqs, n_steps, seed, progress=None):
    """Rewrites and raw edits; (sequences, steps, accepted, rejected,
    rejected by the re-check)."""
    rng = random.Random(seed)
    steps = accepted = rejected = by_check = 0
    procs = PROCS + F.CONFIG_PROCS + FUZZ_PROCS
    for s in range(n_seqs):
        if progress and s and s % progress == 0:
            print(f"  ... {s} sequences, {steps} steps, {accepted} accepted, "
                  f"{rejected} rejected ({by_check} by the re-check)",
                  flush=True)
        p = procs[s % len(procs)]
        fresh = F.Namer()
        for _ in range(n_steps):
            desc, thunk = F.random_step(p, rng, fresh)
            r = rng.random()
            if desc.startswith(_LOOP_COPIERS) and r < 0.6:
                r = 0.4     # (most often edited after: their results
                #              are what the re-check's shortcuts match)
            if r < 0.35:
                new = mutate(p.ir(), rng, (DRAM, SCR))
                if new is not None:
                    thunk = (lambda p=p, new=new: p._derive(new, "edit"))
            elif r < 0.55:
                # the rewrite, then an edit of its result, as one step
                try:
                    q = thunk()
                except SchedulingError:
                    q = None
                new = q and (respelled(q.ir(), rng) if rng.random() < 0.5
                             else mutate(q.ir(), rng, (DRAM, SCR)))
                if new is not None:
                    thunk = (lambda p=p, new=new: p._derive(new, "edit"))
            steps += 1
            try:
                q = thunk()
            except SchedulingError as e:
                rejected += 1
                by_check += "would not be well formed" in str(e)
                continue
            accepted += 1
            p = q
    return n_seqs, steps, accepted, rejected, by_check


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mode", choices=("compare", "incremental", "full"),
                    default="compare")
    ap.add_argument("--parts", default="edits,fuzz",
                    help="which parts to run, in order")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds for the random-schedule part")
    ap.add_argument("--keep-going", action="store_true",
                    help="report failing steps instead of stopping")
    args = ap.parse_args(argv)
    os.environ.pop(recheck.COMPARE_ENV, None)
    os.environ.pop(recheck.FULL_RECHECK_ENV, None)
    if args.mode == "compare":
        os.environ[recheck.COMPARE_ENV] = "1"
    elif args.mode == "full":
        os.environ[recheck.FULL_RECHECK_ENV] = "1"
    compared = _count_compares()

    for part in args.parts.split(","):
        t0, compared[0] = time.time(), 0
        if part == "fuzz":
            failures = [] if args.keep_going else None
            res = F.fuzz(
                n_seqs=args.seqs, n_steps=args.steps, seed=args.seed,
                roundtrip=lambda q: None, procs=F.PROCS + F.CONFIG_PROCS,
                budget_s=args.budget, failures=failures, progress=100)
            seqs, steps, acc, _ = res
            print(f"[{args.mode}] random schedules: {seqs} sequences, "
                  f"{steps} steps, {acc} accepted, {steps - acc} rejected; "
                  f"{compared[0]} results re-checked both ways "
                  f"({time.time() - t0:.0f}s)", flush=True)
            F._report("per primitive", res, time.time() - t0)
            if failures is not None:
                print(f"failing steps: {len(failures)}")
                for op, msg in failures:
                    print(f"--- {op}\n{msg}\n", flush=True)
        else:
            seqs, steps, acc, rej, by_check = edits(
                args.seqs, args.steps, args.seed + 1, progress=250)
            print(f"[{args.mode}] rewrites and raw edits: {seqs} sequences, "
                  f"{steps} steps, {acc} accepted, {rej} rejected "
                  f"({by_check} by the re-check); {compared[0]} results "
                  f"re-checked both ways ({time.time() - t0:.0f}s)",
                  flush=True)


if __name__ == "__main__":
    main()
