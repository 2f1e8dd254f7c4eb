"""The validation procedure: symbolic runs at sizes, then the verdict.

0. The size-parametric proof (``parametric``): proven when it holds.
1. The signatures must agree (the same arguments, in order, of the same
   kinds and element types): inputs are matched by position.
2. Size assignments are drawn from the original's preconditions
   (``sizes.size_models``).
3. At each, both procedures run symbolically on the same input terms
   (``symexec``); every data argument's final elements and the final config
   state are compared as terms (``terms``: equal trees are equal bits).
4. A difference, a failing run or a race sends the case to ``refute``,
   which looks for inputs on which ``interpret()`` confirms it. Nothing is
   reported refuted without that confirmation.

Nothing here reads how the scheduled procedure was made: no rewrite, no
effect analysis, no provenance is trusted.
"""
from __future__ import annotations

import time

from ..core_ir.types import basetype, is_control
from . import refute
from .parametric import Failed, prove
from .sizes import size_models
from .symexec import ProgramError, SymExec, Unsupported, fresh_inputs
from .terms import Terms
from .verdict import PROVEN, REFUTED, UNKNOWN, Verdict

__all__ = ["validate_ir"]


def _signature_problem(o, s):
    if len(o.args) != len(s.args):
        return (f"'{o.name}' has {len(o.args)} arguments, '{s.name}' "
                f"{len(s.args)}")
    for a, b in zip(o.args, s.args):
        if is_control(a.type) != is_control(b.type):
            return f"argument '{a.name.name}' changes kind"
        if is_control(a.type):
            if a.type is not b.type:
                return f"argument '{a.name.name}' changes type"
        elif basetype(a.type) is not basetype(b.type):
            return f"argument '{a.name.name}' changes element type"
    return None


def _sym_run(terms, proc, sizes):
    """(final data arrays by position, final config) or raises."""
    vals, types = fresh_inputs(terms, proc, sizes)
    cfg = {}
    SymExec(terms, cfg).run(proc, vals, types)
    return vals, cfg


def _difference(terms, o, s, sizes):
    """None when both runs end in the same terms, else a description."""
    ovals, ocfg = _sym_run(terms, o, sizes)
    try:
        svals, scfg = _sym_run(terms, s, sizes)
    except ProgramError as e:
        return f"the scheduled procedure fails: {e}"
    for a, x, y in zip(o.args, ovals, svals):
        if is_control(a.type):
            continue
        if x.shape != y.shape:
            return f"'{a.name.name}' changes shape"
        for idx in _ndindex(x.shape):
            if x[idx] != y[idx]:
                return (f"{a.name.name}[{', '.join(map(str, idx))}]: "
                        f"original computes {terms.show(x[idx])}, scheduled "
                        f"{terms.show(y[idx])}")
    for key in set(ocfg) | set(scfg):
        if ocfg.get(key, "unset") != scfg.get(key, "unset"):
            return f"config {key[0].name()}.{key[1]} ends differently"
    return None


def _ndindex(shape):
    import numpy as np
    return np.ndindex(*shape)


def validate_ir(o, s, *, max_sizes=3, budget=4096, rounds=24, seed=0,
                timeout=20000):
    """The ``Verdict`` for procedure IRs ``o`` (the original) and ``s``."""
    t0 = time.perf_counter()

    def done(status, cond="", cex=None, sizes=()):
        return Verdict(status, cond, cex, list(sizes),
                       time.perf_counter() - t0)

    bad = _signature_problem(o, s)
    if bad:
        return done(UNKNOWN, f"signatures differ: {bad}")
    try:
        prove(o, s, timeout=timeout)
        return done(PROVEN)
    except (Failed, Unsupported) as e:
        why = f"no size-parametric proof: {e}"
    except Exception as e:  # noqa: BLE001 - isl/z3 limits: no proof
        why = f"no size-parametric proof: {type(e).__name__}: {e}"
    try:
        models, complete = size_models(o, limit=max_sizes, budget=budget)
    except Unsupported as e:
        return done(UNKNOWN, f"cannot solve the preconditions: {e}")
    if not models:
        return done(PROVEN, "the preconditions admit no sizes")
    checked = []
    for sizes in models:
        terms = Terms()
        try:
            diff = _difference(terms, o, s, sizes)
        except Unsupported as e:
            return done(UNKNOWN, f"outside the fragment: {e}", sizes=checked)
        except ProgramError as e:
            return done(UNKNOWN, f"the original fails at sizes {sizes}: {e}",
                        sizes=checked)
        if diff is not None:
            cex = refute.search(o, s, [sizes], rounds=rounds, seed=seed)
            if cex is not None:
                return done(REFUTED, f"at sizes {sizes}: {diff}", cex,
                            checked + [sizes])
            return done(UNKNOWN, f"value equality not established at sizes "
                        f"{sizes}: {diff}", sizes=checked + [sizes])
        checked.append(sizes)
    if complete:
        return done(PROVEN, "", sizes=checked)
    return done(UNKNOWN, f"{why}; equal at the sizes checked", sizes=checked)
