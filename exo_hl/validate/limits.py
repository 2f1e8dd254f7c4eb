"""How long one Z3 query of the validator may run.

Each query is bounded by Z3's resource count (``rlimit``, per check), so a
verdict is the same on a fast or a loaded machine; the wall clock is only
a backstop against a query that spends little of the count per second.
(The effect analysis bounds its queries the same way in
``effects/smt.py``; the validator keeps its own, as it imports nothing of
the analysis it checks.)
"""
from __future__ import annotations

__all__ = ["RLIMIT", "SIZES_RLIMIT", "TIMEOUT_MS", "bound", "why_unknown"]

#: Z3 resource units per query. Calibrated on every shipped schedule
#: (benchmarks/validate_bench.py --rlimits; z3 5.4.1, Intel Xeon,
#: 2026-11-28): see docs/validate.md for the largest query answered.
RLIMIT = 50_000_000

#: Z3 resource units per query choosing sizes (``sizes``): a precondition
#: and the models found so far, small next to the proof's queries
SIZES_RLIMIT = 20_000_000

#: the wall-clock backstop per query, in ms
TIMEOUT_MS = 600_000


def bound(s, rlimit=RLIMIT, timeout=TIMEOUT_MS):
    """Bound solver (or optimizer) ``s``: ``rlimit`` decides, ``timeout``
    (ms) backstops."""
    s.set("rlimit", int(rlimit))
    s.set("timeout", int(timeout))
    return s


def why_unknown(s):
    """'timeout' when the wall clock stopped ``s``, else 'resource limit'."""
    try:
        r = s.reason_unknown()
    except Exception:  # noqa: BLE001 - no reason recorded
        r = ""
    return "timeout" if "timeout" in r else "resource limit"
