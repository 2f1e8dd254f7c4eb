"""The confirmation after a search: the initial points (a model's
default) and the search's best few are re-timed in alternating rounds,
and a point of the search displaces the first initial one only when its
median beats it by more than the rounds' spread. One measurement per
candidate ranks noise on a busy machine (docs/tuning.md)."""
from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import dataclass

from .workers import Running

@dataclass(frozen=True)
class Confirmed:
    """A finalist re-timed in the confirmation rounds: its parameters,
    where it came from (``source``: ``'initial'``, a point of ``initial``
    such as a model's default, or ``'search'``), the number of its trial,
    its value in the search (``first``), the value of each round
    (``values``, in order) and, if it failed in the rounds, why
    (``message``; it is then out of the comparison).

    >>> c = Confirmed({"kc": 256}, "search", 4, 1.2, (1.0, 1.1, 0.9))
    >>> c.median, round(c.spread, 3)
    (1.0, 0.2)
    """

    params: dict
    source: str
    number: int
    first: float | None
    values: tuple = ()
    message: str = ""

    @property
    def median(self) -> float | None:
        """The median of the rounds (None without one)."""
        return statistics.median(self.values) if self.values else None

    @property
    def spread(self) -> float:
        """Largest minus smallest value of the rounds (0 for one)."""
        return max(self.values) - min(self.values) if self.values else 0.0


@dataclass(frozen=True)
class Confirmation:
    """What the confirmation phase found: the finalists (``Confirmed``),
    the rounds run, the ``winner`` (a finalist), the first ``initial``
    point that ran, the one to beat (None without one), ``margin``: the
    winner's median minus the initial point's (0 when the initial point
    won or there was none), ``spread``: the larger spread of the two
    (what the margin had to exceed), and ``note``: one line saying
    so.

    >>> c = Confirmed({"kc": 160}, "initial", 0, 1.0, (1.0, 1.02))
    >>> Confirmation((c,), 2, c, c, 0.0, c.spread, "kept").winner.source
    'initial'
    """

    finalists: tuple
    rounds: int
    winner: Confirmed
    initial: Confirmed | None
    margin: float
    spread: float
    note: str


# ---------------------------------------------------------------------------
# the confirmation rounds

def finalists(trials, initial_ids, top):
    """The trials to confirm: every distinct ``ok`` trial of an initial
    point, then the ``top`` best other ``ok`` trials (by their value in
    the search)."""
    ok = [t for t in trials if t.ok and t.repeat_of is None]
    ident = {t.number: json.dumps(t.params, sort_keys=True, default=str)
             for t in ok}
    first = [t for t in ok if ident[t.number] in initial_ids]
    rest = sorted((t for t in ok if ident[t.number] not in initial_ids),
                  key=lambda t: -t.value)
    return [(t, "initial") for t in first] + [(t, "search")
                                              for t in rest[:top]]


def reserve(trials, initial_ids, rounds, top, workers):
    """Seconds to keep for the confirmation: building the finalists again
    (``workers`` at a time) and ``rounds`` timings of each, from the
    median build and benchmark times of the search so far (a margin of a
    fifth; 0 before any candidate ran)."""
    ok = [t for t in trials if t.ok and t.repeat_of is None]
    if rounds <= 0 or not ok:
        return 0.0
    f = len(finalists(trials, initial_ids, top))
    build = statistics.median(t.build_s for t in ok)
    run = statistics.median(t.bench_s for t in ok)
    return 1.2 * (math.ceil(f / workers) * build + rounds * f * run) + 1.0


def confirm_rounds(ctx, finals, template, bench, compile_opts, rounds, workers,
             timeout_s, build_timeout_s, deadline):
    """Build each finalist again in a process of its own (``workers`` at a
    time) and time them all in ``rounds`` alternating rounds (the order
    rotated each round), each process measuring once per round. Rounds
    past the second are run only while ``deadline`` allows one more.
    Returns ([Confirmed], rounds run)."""
    values = {t.number: [] for t, _ in finals}
    failed = {}
    running = {}
    done = 0
    try:
        for i in range(0, len(finals), workers):
            chunk = finals[i:i + workers]
            for t, _ in chunk:
                running[t.number] = Running(ctx, t.number, t.params,
                                             template, bench, compile_opts)
            end = time.monotonic() + build_timeout_s
            for t, _ in chunk:
                msg = running[t.number].wait(max(0.0,
                                                 end - time.monotonic()))
                if msg is None or msg[0] != "built":
                    failed[t.number] = ("building again timed out"
                                        if msg is None else
                                        f"{msg[0]} when built again: "
                                        f"{msg[1]}")
                    running.pop(t.number).stop()
        order = [t for t, _ in finals if t.number in running]
        round_s = 0.0
        for r in range(rounds):
            if r >= 2 and time.monotonic() + round_s > deadline:
                break
            t0 = time.monotonic()
            k = r % len(order) if order else 0
            for t in order[k:] + order[:k]:
                if t.number in failed:
                    continue
                proc = running[t.number]
                try:
                    proc.conn.send("go")
                except (OSError, EOFError):
                    pass
                msg = proc.wait(timeout_s)
                if msg is not None and msg[0] == "ok":
                    values[t.number].append(msg[1])
                else:
                    failed[t.number] = (
                        f"the benchmark ran more than {timeout_s:g} s"
                        if msg is None else f"{msg[0]}: {msg[1]}")
                    proc.stop()
            done += 1
            round_s = time.monotonic() - t0
    finally:
        for proc in running.values():
            proc.stop()
    out = [Confirmed(dict(t.params), src, t.number, t.value,
                     tuple(values[t.number]) if t.number not in failed
                     else (), failed.get(t.number, ""))
           for t, src in finals]
    return out, done


def _fmt(v):
    return f"{v:.4g}"


def choose(finalists, rounds, units):
    """The confirmation's verdict. The first initial point that ran (the
    model's, say) stays unless another finalist (a point of the search,
    or a later initial point) has a median higher by more than the
    larger spread of the two, and at least two rounds ran; then the
    finalist of the best median wins. With no initial point, the best
    median wins. None when no finalist was measured."""
    ran = [c for c in finalists if c.values]
    if not ran:
        return None
    inits = [c for c in ran if c.source == "initial"]
    inc = inits[0] if inits else None
    found = [c for c in ran if c is not inc]
    best = max(found, key=lambda c: c.median) if found else None
    how = f"confirmed in {rounds} alternating round(s), medians"
    if inc is None:
        return Confirmation(tuple(finalists), rounds, best, None, 0.0,
                            best.spread,
                            f"{how}: #{best.number} {_fmt(best.median)} "
                            f"{units} (first measured "
                            f"{_fmt(best.first)}); no initial point to "
                            f"compare with")
    if best is None:
        return Confirmation(tuple(finalists), rounds, inc, inc, 0.0,
                            inc.spread,
                            f"{how}: the initial point #{inc.number} won, "
                            f"{_fmt(inc.median)} {units} (no other "
                            f"candidate was confirmed)")
    margin = best.median - inc.median
    spread = max(best.spread, inc.spread)
    rel = (f" ({margin / inc.median:+.1%})" if inc.median > 0 else "")
    if rounds >= 2 and margin > spread:
        return Confirmation(tuple(finalists), rounds, best, inc, margin,
                            spread,
                            f"{how}: #{best.number} {_fmt(best.median)} "
                            f"{units} (first measured {_fmt(best.first)}) "
                            f"beat the initial point #{inc.number} "
                            f"({_fmt(inc.median)}) by {_fmt(margin)}{rel}, "
                            f"more than the spread {_fmt(spread)}")
    why = ("fewer than two rounds ran" if rounds < 2 else
           f"within the spread {_fmt(spread)}" if margin > 0 else
           "no better")
    return Confirmation(tuple(finalists), rounds, inc, inc, 0.0, spread,
                        f"{how}: the initial point #{inc.number} won, "
                        f"{_fmt(inc.median)} {units}; the best other, "
                        f"#{best.number} (first measured "
                        f"{_fmt(best.first)}), {_fmt(best.median)}: "
                        f"{_fmt(margin)}{rel}, {why}")
