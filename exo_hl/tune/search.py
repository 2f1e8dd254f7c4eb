"""``tune``: search a schedule's parameters by building and timing
candidates, each in a process of its own.

Every candidate is ``template(params)``, a chain of checked rewrites: a
schedule that cannot be proven safe raises ``SchedulingError`` and is
recorded as *refused*; one that is built is equivalent to the algorithm,
so the search can only choose between correct kernels. What it must
survive is the rest: a benchmark that crashes the process (a segfault in
the user's harness, an abort) is recorded as *crashed*, one that hangs is
killed after ``timeout_s`` and recorded as *timeout*, and the search goes
on.

How candidates run: each is a fresh process (``multiprocessing`` with the
``forkserver`` start method, ``spawn`` where there is none: no state of
the caller, no threads or OpenMP pool forked half-initialized). Up to ``workers`` of them build at once
(template, then ``compile()``: the expensive part); then, with no build
running, each built candidate is sent "go" in turn and runs ``bench``
alone, so one timing does not share the cores with another candidate's
build. ``template`` and ``bench`` are therefore sent to the children by
name: they must be functions defined at the top level of an importable
module (not lambdas, closures or functions defined in ``__main__`` of an
interactive session; a script needs ``if __name__ == "__main__":`` around
its call of ``tune``).

The search itself is optuna's (TPE sampler, seeded): a maintained
library whose samplers handle categorical, integer and conditional
spaces, are reproducible from a seed and take parameter points in
batches (``ask``/``tell``), which is what building candidates in parallel
needs. A hand-written optimizer would be one more thing to get right.

Example (``mykernels`` is a module of yours)::

    from exo_hl.tune import tune
    from mykernels import template, bench      # top-level functions
    result = tune(template, {"tile": [4, 8, 16], "kc": range(64, 513, 64)},
                  bench, budget_s=300, seed=0, units="GFLOP/s")
    print(result.best_params, result.best_value)
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from dataclasses import dataclass, field

from .confirm import (Confirmation, choose, confirm_rounds, finalists,
                      reserve)
from .workers import Running, context, wait_builds


#: the outcomes of a candidate
STATUSES = ("ok", "refused", "crashed", "timeout")

#: the search ends after this many batches in a row proposed only points
#: already tried (the sampler has converged)
MAX_STALE = 25
#: proposals ``valid`` may refuse in a row before a batch goes without
MAX_ASKS = 50


@dataclass(frozen=True)
class Trial:
    """One candidate: its number (in the order the search proposed it),
    parameters, status (``ok``, ``refused``, ``crashed``, ``timeout``),
    measured value (``ok`` only), a message (the ``SchedulingError`` of a
    refused schedule, the exception or signal of a crash) and the seconds
    spent building and benchmarking it. ``repeat_of``: the number of an
    earlier trial with the same parameters, whose outcome was reused.

    >>> Trial(0, {"kc": 256}, "ok", 150.0).ok
    True
    """

    number: int
    params: dict
    status: str
    value: float | None = None
    message: str = ""
    build_s: float = 0.0
    bench_s: float = 0.0
    repeat_of: int | None = None

    @property
    def ok(self) -> bool:
        """Whether the candidate was built and measured."""
        return self.status == "ok"


@dataclass(frozen=True)
class TuneResult:
    """What ``tune`` found: the best parameters and their measured value
    (None when no candidate ran; after a confirmation, its winner and
    median), every trial in order, the seconds the search took
    (confirmation included), the units of the values, the tuning record
    written (``record_path``, None without a database), notes, and the
    ``Confirmation`` (None when there was none).

    >>> r = TuneResult({"kc": 256}, 150.0, (), 1.0)
    >>> r.best_params
    {'kc': 256}
    """

    best_params: dict | None
    best_value: float | None
    trials: tuple
    elapsed_s: float
    units: str = ""
    record_path: str | None = None
    notes: tuple = field(default=())
    confirmation: Confirmation | None = None

    def counts(self) -> dict:
        """{status: number of trials} (repeats not counted).

        >>> TuneResult(None, None, (Trial(0, {}, "refused"),), 0).counts()
        {'ok': 0, 'refused': 1, 'crashed': 0, 'timeout': 0}
        """
        out = {s: 0 for s in STATUSES}
        for t in self.trials:
            if t.repeat_of is None:
                out[t.status] += 1
        return out

    def summary(self) -> str:
        """A few lines for people: best, counts, time.

        >>> "no candidate" in TuneResult(None, None, (), 0.5).summary()
        True
        """
        c = self.counts()
        head = (f"best {self.best_value:.4g} {self.units} with "
                f"{self.best_params}" if self.best_params is not None
                else "no candidate was measured")
        lines = [head]
        if self.confirmation is not None:
            lines.append(self.confirmation.note)
        lines.extend(self.notes)
        lines.append(f"{len(self.trials)} trials in {self.elapsed_s:.0f} s:"
                     f" " + ", ".join(f"{n} {s}" for s, n in c.items()))
        return "\n".join(lines)


def _distributions(space):
    from optuna.distributions import (CategoricalDistribution,
                                      IntDistribution)
    if not isinstance(space, dict) or not space:
        raise TypeError("tune: the space must be a non-empty dict of "
                        "name -> list of choices or range")
    out, size = {}, 1
    for name, choices in space.items():
        if isinstance(choices, range):
            if len(choices) == 0:
                raise ValueError(f"tune: parameter {name!r}: empty range")
            hi = choices.start + (len(choices) - 1) * choices.step
            lo, hi = min(choices.start, hi), max(choices.start, hi)
            out[name] = IntDistribution(lo, hi, step=abs(choices.step))
            size *= len(choices)
        elif isinstance(choices, (list, tuple)) and choices:
            out[name] = CategoricalDistribution(tuple(choices))
            size *= len(choices)
        else:
            raise TypeError(f"tune: parameter {name!r}: give a non-empty "
                            f"list of choices or a range, not "
                            f"{type(choices).__name__}")
    return out, size


def _invalid(valid, params):
    """Why ``valid`` refuses ``params`` (None when it accepts them)."""
    if valid is None:
        return None
    verdict = valid(dict(params))
    if verdict is None or verdict is True:
        return None
    return verdict if isinstance(verdict, str) and verdict else \
        "refused by valid()"


def _progress_bar(progress, total, desc):
    from ..progress import wanted
    if not progress or not wanted():
        return None
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="trial", file=sys.stderr,
                leave=True, dynamic_ncols=True)


def tune(template, space: dict, bench, *, budget_s: float = 600.0,
         n_trials: int | None = None, seed: int = 0, workers: int = 2,
         timeout_s: float = 60.0, build_timeout_s: float | None = None,
         db=None, key: str | None = None, units: str = "",
         initial=(), compile: bool = True,
         compile_opts: dict | None = None, progress: bool = True,
         n_startup: int = 10, confirm: int = 3,
         confirm_top: int = 3, valid=None) -> TuneResult:
    """Search ``space`` for the parameters whose schedule ``bench`` rates
    highest.

    ``template(params) -> Procedure`` builds a schedule from a dict of
    parameters; ``space`` maps each name to a list of choices or a
    ``range``; ``bench(compiled, params) -> float`` times the compiled
    procedure (``compile_opts``: the options of ``compile()``;
    ``compile=False`` hands ``bench`` the ``Procedure`` itself, to compile
    as it likes) and returns a speed: **higher is
    better** (e.g. GFLOP/s, or 1 / seconds; ``units`` names it for the
    record and the summary). Both must be top-level functions of an
    importable module (see the module docstring).

    The search proposes points with optuna's TPE sampler seeded by
    ``seed`` (the points in ``initial``, e.g. an analytical model's
    defaults, first; then ``n_startup`` random points before the model
    of the measurements takes over), builds up to ``workers`` candidates at once, times
    them one at a time, and stops after ``n_trials`` candidates, when
    ``budget_s`` seconds have passed (checked between batches; builds
    still running then are stopped, status ``timeout``, once some
    candidate has been built, so a slow build does not hold the search
    past its budget), when
    every point of the space has been tried, or when the sampler has
    proposed only points already tried for ``MAX_STALE`` batches in a
    row. A point proposed again
    reuses its first outcome. Each candidate has ``build_timeout_s``
    (default ``max(timeout_s, 600)``) to build and ``timeout_s`` to run
    ``bench``; past them its process is killed (status ``timeout``).

    ``valid(params)``, when given, says before anything is built whether
    a point can be built at all: ``None`` or ``True`` for yes, a reason
    (a string) or ``False`` for no (e.g. a loop order that needs a block
    size the point leaves at 0). Such points are told to the sampler as
    failed, are not built and take no worker's place in a batch (up to
    ``MAX_ASKS`` proposals per place); ``TuneResult.notes`` counts them.
    Without it the template's refusal does the same job, but each one
    takes a place of its batch.

    Confirmation (``confirm`` rounds, 0 for none): one measurement per
    candidate picks the luckiest of many noisy values as well as the
    fastest, so after the search the ``initial`` points and the
    ``confirm_top`` best others are built again, each in a process of its
    own, and timed in ``confirm`` alternating rounds (at least two; the
    third and later while the budget lasts); the search stops early
    enough to leave the time this takes (estimated from its own build
    and benchmark times). The first initial point (e.g. the model's)
    stays unless another finalist's median is higher by more than the
    spread (largest minus smallest round) of either; then the best
    median wins;
    ``TuneResult.confirmation`` says who won and by how much, and
    ``best_value`` is the winner's median. An ``initial`` point must
    give every parameter of the space (one left out would be drawn at
    random, and the "model's point" measured would not be the model's).

    With ``db`` (a ``TuningDB``, a directory, or True for the default
    one in the cache directory) and ``key``, the best point is stored as
    this machine's record of ``key``. A progress bar is drawn on stderr
    when ``progress`` and stderr is a terminal (``EXO_HL_PROGRESS``
    decides as for compile bars).

    Example::

        result = tune(template, {"kc": [128, 256, 512]}, bench,
                      n_trials=3, units="GFLOP/s")
    """
    try:
        import optuna
        from optuna.trial import TrialState
    except ImportError:                  # pragma: no cover
        raise ImportError("exo_hl.tune.tune needs optuna: "
                          "pip install 'exo_hl[tune]'") from None

    dists, size = _distributions(space)
    if db not in (None, False) and key is None:
        raise ValueError("tune: a database needs a key")
    if workers < 1:
        raise ValueError("tune: workers must be at least 1")
    if confirm < 0 or confirm_top < 0:
        raise ValueError("tune: confirm and confirm_top are at least 0")
    confirm = max(confirm, 2) if confirm else 0
    build_timeout_s = (max(timeout_s, 600.0) if build_timeout_s is None
                       else build_timeout_s)
    compile_opts = (dict(compile_opts or {}) if compile else None)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # multivariate is "experimental"
        # constant_liar: the points of one batch, asked before any is
        # measured, are kept apart instead of proposed twice
        sampler = optuna.samplers.TPESampler(
            seed=seed, multivariate=True, constant_liar=True,
            n_startup_trials=n_startup)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    initial_ids = set()
    for point in initial:
        for name, value in dict(point).items():
            try:
                inside = name in dists and dists[name]._contains(
                    dists[name].to_internal_repr(value))
            except (ValueError, TypeError):
                inside = False
            if not inside:
                raise ValueError(f"tune: initial point {point}: {name}="
                                 f"{value!r} is not in the space")
        missing = [n for n in space if n not in dict(point)]
        if missing:
            raise ValueError(f"tune: initial point {point} does not give "
                             f"{', '.join(missing)} (it would be drawn at "
                             f"random)")
        why = _invalid(valid, {n: dict(point)[n] for n in space})
        if why is not None:
            raise ValueError(f"tune: initial point {point} fails valid(): "
                             f"{why}")
        initial_ids.add(json.dumps({n: dict(point)[n] for n in space},
                                   sort_keys=True, default=str))
        study.enqueue_trial(dict(point), skip_if_exists=True)
    ctx = context()
    start = time.monotonic()
    trials, seen = [], {}
    best = None
    stale = 0                # batches in a row with no new point
    bar = _progress_bar(progress, n_trials, key or "tune")
    verdict, notes = None, []
    invalid = {}             # reason -> points proposed outside ``valid``

    def ask():
        """The sampler's next point that ``valid`` accepts (None after
        MAX_ASKS refusals in a row)."""
        for _ in range(MAX_ASKS):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ot = study.ask(dists)
            params = {n: ot.params[n] for n in space}
            why = _invalid(valid, params)
            if why is None:
                return ot, params
            invalid[why] = invalid.get(why, 0) + 1
            study.tell(ot, state=TrialState.FAIL)
        return None

    def limit_reached():
        kept = reserve(trials, initial_ids, confirm, confirm_top, workers)
        return ((n_trials is not None and len(trials) >= n_trials)
                or time.monotonic() - start >= budget_s - kept
                or len(seen) >= size or stale >= MAX_STALE)

    try:
        while not limit_reached():
            want = workers if n_trials is None else min(
                workers, n_trials - len(trials))
            batch, fresh = [], []
            for _ in range(want):
                asked = ask()
                if asked is None:
                    break
                ot, params = asked
                ident = json.dumps(params, sort_keys=True, default=str)
                number = len(trials) + len(batch)
                batch.append((ot, params, ident, number))
                if ident not in seen and ident not in [f[2] for f in fresh]:
                    fresh.append((number, params, ident))
                if len(seen) + len(fresh) >= size:
                    break
            stale = 0 if fresh else stale + 1
            running = {num: Running(ctx, num, params, template, bench,
                                     compile_opts)
                       for num, params, _ in fresh}
            outcome = {}
            try:
                # build: all at once
                built = []
                t_build = time.monotonic()
                msgs = wait_builds(running, t_build + build_timeout_s,
                                   start + budget_s, best is not None)
                for num, params, ident in fresh:
                    msg = msgs.get(num)
                    if msg is None:
                        waited = time.monotonic() - t_build
                        outcome[ident] = Trial(
                            num, params, "timeout", build_s=waited,
                            message=f"building took more than "
                            f"{build_timeout_s:g} s" if waited >=
                            build_timeout_s else f"building stopped after "
                            f"{waited:.3g} s: the time budget "
                            f"({budget_s:g} s) ran out")
                        running[num].stop()
                    elif msg[0] == "built":
                        built.append((num, params, ident, msg[2]))
                    else:
                        outcome[ident] = Trial(num, params, msg[0],
                                               message=msg[1],
                                               build_s=msg[2])
                # time: one at a time
                for num, params, ident, build_s in built:
                    r = running[num]
                    try:
                        r.conn.send("go")
                    except (OSError, EOFError):
                        pass
                    msg = r.wait(timeout_s)
                    if msg is None:
                        outcome[ident] = Trial(
                            num, params, "timeout", build_s=build_s,
                            message=f"the benchmark ran more than "
                            f"{timeout_s:g} s", bench_s=timeout_s)
                    elif msg[0] == "ok":
                        outcome[ident] = Trial(num, params, "ok", msg[1],
                                               build_s=build_s,
                                               bench_s=msg[2])
                    else:
                        outcome[ident] = Trial(num, params, msg[0],
                                               message=msg[1],
                                               build_s=build_s,
                                               bench_s=msg[2])
                    r.stop()
            finally:
                for r in running.values():
                    r.stop()
            for ot, params, ident, number in batch:
                if ident in outcome and outcome[ident].number == number:
                    t = outcome[ident]
                    seen[ident] = t
                else:
                    first = seen[ident] if ident in seen else outcome[ident]
                    t = Trial(number, params, first.status, first.value,
                              first.message, repeat_of=first.number)
                trials.append(t)
                if t.ok:
                    study.tell(ot, t.value)
                    if best is None or t.value > best.value:
                        best = t
                else:
                    study.tell(ot, state=TrialState.FAIL)
                if bar is not None:
                    bar.update(1)
                    if best is not None:
                        bar.set_postfix_str(f"best {best.value:.4g} {units}")
        if confirm and best is not None:
            if bar is not None:
                bar.set_postfix_str(f"best {best.value:.4g} {units}; "
                                    f"confirming")
            finals = finalists(trials, initial_ids, confirm_top)
            confirmed, rounds = confirm_rounds(
                ctx, finals, template, bench, compile_opts, confirm,
                workers, timeout_s, build_timeout_s, start + budget_s)
            verdict = choose(confirmed, rounds, units)
            if verdict is None:
                notes.append("confirmation: no finalist could be timed "
                             "again (" + "; ".join(
                                 f"#{c.number}: {c.message}"
                                 for c in confirmed) + "); the search's "
                             "best is kept, unconfirmed")
    finally:
        if bar is not None:
            bar.close()
    if invalid:
        notes.append(f"{sum(invalid.values())} proposed points failed "
                     f"valid() and were not built: " + "; ".join(
                         f"{n} x {why}" for why, n in sorted(
                             invalid.items(), key=lambda kv: -kv[1])))
    elapsed = time.monotonic() - start
    best_params = None if best is None else dict(best.params)
    best_value = None if best is None else best.value
    extra = {"trials": len(trials), "tuning_s": round(elapsed, 1),
             "seed": seed}
    if verdict is not None:
        best_params = dict(verdict.winner.params)
        best_value = verdict.winner.median
        extra["confirmed"] = {
            "rounds": verdict.rounds,
            "winner": verdict.winner.source,
            "winner_trial": verdict.winner.number,
            "margin_over_initial": verdict.margin,
            "spread": verdict.spread, "note": verdict.note,
            "finalists": [{"trial": c.number, "source": c.source,
                           "params": c.params, "first": c.first,
                           "values": list(c.values),
                           "median": c.median, "message": c.message}
                          for c in verdict.finalists]}
    record = None
    if db not in (None, False) and best is not None:
        from .database import TuningDB
        store = db if isinstance(db, TuningDB) else TuningDB(
            None if db is True else db)
        record = store.store(key, best_params, best_value, units=units,
                             extra=extra)
    return TuneResult(best_params, best_value, tuple(trials), elapsed,
                      units, record, tuple(notes), confirmation=verdict)
