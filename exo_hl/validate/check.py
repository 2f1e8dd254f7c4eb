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
   reported refuted without that confirmation, and, where a float
   reduction may be reordered, only a difference on exact inputs that no
   order explains counts (``refute``); otherwise the verdict is unknown.

Nothing here reads how the scheduled procedure was made: no rewrite, no
effect analysis, no provenance is trusted.
"""
from __future__ import annotations

import time

from ..core_ir.buffers import written_buffers
from ..core_ir.nodes import IR
from ..core_ir.types import DATA_TYPES, basetype, is_control
from . import refute
from .limits import RLIMIT, TIMEOUT_MS
from .parametric import Failed
from .parametric import prove as prove_ir
from .sizes import size_models
from .symexec import ProgramError, SymExec, Unsupported, fresh_inputs
from .terms import Terms
from .verdict import PROVEN, REFUTED, UNKNOWN, Verdict

__all__ = ["validate_ir"]


def _signature_problem(o, s):
    """Why the scheduled procedure ``s`` may refuse inputs the original
    ``o`` takes (None when it takes them all, shapes aside: those are a
    verification condition)."""
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
        elif _is_window(a.type) and not _is_window(b.type):
            # the scheduled one refuses the strided arrays the original
            # takes (a dense argument must be contiguous)
            return (f"argument '{a.name.name}' is a window in the original, "
                    f"a dense tensor in the scheduled procedure")
    wo, ws = written_buffers(o), written_buffers(s)
    for a, b in zip(o.args, s.args):
        if b.name in ws and a.name not in wo:
            # a written argument must be writeable, apart from the other
            # arguments, and an array (not a number) for a scalar:
            # inputs of the original the scheduled one refuses
            return (f"argument '{a.name.name}' is only read by the "
                    f"original, written by the scheduled procedure")
    return None


def _is_window(t):
    return isinstance(t, IR.Tensor) and t.is_window


def control_config(procs):
    """Initial values of the control config fields the procedures use: a
    fixed value (3, or True), given to both symbolic runs and to the
    interpreted ones (the verdict at sizes covers these values only)."""
    out = {}
    for key in refute.config_fields(procs):
        ft = key[0].lookup_type(key[1])
        if ft in DATA_TYPES:
            continue
        out[key] = True if ft is IR.Bool else 3
    return out


def _sym_run(terms, proc, sizes, cfg0):
    """(final data arrays by position, final config) or raises."""
    vals, types = fresh_inputs(terms, proc, sizes)
    cfg = dict(cfg0)
    SymExec(terms, cfg).run(proc, vals, types)
    return vals, cfg


def _difference(terms, o, s, sizes, skip):
    """None when both runs end in the same terms, else a description."""
    cfg0 = control_config([o, s])
    ovals, ocfg = _sym_run(terms, o, sizes, cfg0)
    try:
        svals, scfg = _sym_run(terms, s, sizes, cfg0)
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
        if skip(key):
            continue
        if ocfg.get(key, "unset") != scfg.get(key, "unset"):
            return f"config {key[0].name()}.{key[1]} ends differently"
    return None


def _sizes_of(o, params):
    """The failed condition's model as an assignment of ``o``'s control
    arguments (None unless it gives them all, within the budget)."""
    out = {}
    for pos, a in enumerate(o.args):
        if is_control(a.type):
            v = params.get(f"p{pos}")
            if v is None:
                return None
            out[a.name.name] = v
    cost = 1
    for v in out.values():
        cost *= max(1, abs(v))
    return out if cost <= 1 << 16 else None


def _ndindex(shape):
    import numpy as np
    return np.ndindex(*shape)


class _Modulo:
    """Which config fields' final values are left out of the comparison."""

    def __init__(self, modulo):
        self.all = modulo == "config"
        self.keys = set() if self.all else {
            (k.config, k.field) if hasattr(k, "field") else tuple(k)
            for k in modulo}

    def __call__(self, key):
        return self.all or key in self.keys


def _concrete(o, s, models, rounds, seed, checked, skip):
    """("refuted"|"unknown", condition, counterexample) at the first size
    assignment where the symbolic runs differ, or None (all equal;
    ``checked`` collects the assignments)."""
    cfg = control_config([o, s])
    for sizes in models:
        terms = Terms()
        try:
            diff = _difference(terms, o, s, sizes, skip)
        except Unsupported as e:
            return UNKNOWN, f"outside the fragment: {e}", None
        except ProgramError as e:
            return UNKNOWN, f"the original fails at sizes {sizes}: {e}", None
        if diff is not None:
            checked.append(sizes)
            notes = []
            cex = refute.search(o, s, [sizes], rounds=rounds, seed=seed,
                                control=cfg, skip=skip, notes=notes)
            if cex is not None:
                return REFUTED, f"at sizes {sizes}: {diff}", cex
            if refute.float_reductions([o, s]):
                # a float reduction may be reordered: only exact inputs
                # refute, and they did not (refute.py)
                seen = (f"the runs differ only where float reassociation "
                        f"allowed in reductions may explain it, not on "
                        f"exact inputs: {notes[0]!r}" if notes else
                        "a float reduction may be reordered (float "
                        "reassociation allowed in reductions): only exact "
                        "inputs refute, and the runs agree on them")
                return (UNKNOWN, f"value equality not established at sizes "
                        f"{sizes}: {diff}; {seen} (docs/semantics.md)",
                        None)
            return (UNKNOWN, f"value equality not established at sizes "
                    f"{sizes}: {diff}", None)
        checked.append(sizes)
    return None


def _runs_cover_all(o, s):
    """Whether runs at every admitted size cover every input: not when a
    control config field is read before it is set (the runs fix it) or
    an argument is a window (the runs make it contiguous)."""
    if control_config([o, s]):
        return False
    return not any(isinstance(a.type, IR.Tensor) and a.type.is_window
                   for a in o.args)


def _admitted(o, sizes):
    """Whether the original's preconditions hold at ``sizes``."""
    env = {a.name: sizes.get(a.name.name) for a in o.args
           if is_control(a.type)}
    try:
        return all(SymExec._ctrl_static(p, env) for p in o.preds)
    except Exception:  # noqa: BLE001 - config reads etc.: let the run say
        return True


def validate_ir(o, s, *, max_sizes=3, budget=4096, rounds=24, seed=0,
                rlimit=RLIMIT, timeout=TIMEOUT_MS, sizes=(),
                prove_first=True, prove=True, modulo=()):
    """The ``Verdict`` for procedure IRs ``o`` (the original) and ``s``.

    ``sizes``: extra size assignments (name -> value) to run at, first;
    ``prove_first=False`` looks for a counterexample before attempting the
    parametric proof (faster on wrong procedures); ``prove=False`` skips
    that proof (runs at sizes only: never 'proven' unless the sizes are
    all there are); ``modulo``: config fields ``(Config, field)`` whose
    final values are not compared (equivalence modulo them, as Exo's), or
    ``"config"`` for all; ``rlimit``: Z3 resource units per query (the
    verdict's bound, the same on any machine), ``timeout``: ms of wall
    clock per query (a backstop)."""
    skip = _Modulo(modulo)
    t0 = time.perf_counter()
    hint = None
    checked = []
    why = ""

    def done(status, cond="", cex=None):
        return Verdict(status, cond, cex, list(checked),
                       time.perf_counter() - t0)

    bad = _signature_problem(o, s)
    if bad:
        return done(UNKNOWN, f"signatures differ: {bad}")
    extra = [dict(z) for z in sizes if _admitted(o, z)]
    if not prove_first and extra:
        got = _concrete(o, s, extra, rounds, seed, checked, skip)
        if got is not None and got[0] == REFUTED:
            return done(*got)
    try:
        if not prove:
            raise Unsupported("the parametric proof was not attempted")
        prove_ir(o, s, rlimit=rlimit, timeout=timeout, skip=skip)
        checked.clear()
        return done(PROVEN)
    except Failed as e:
        why = f"no size-parametric proof: {e}"
        hint = _sizes_of(o, e.params)
    except Unsupported as e:
        why = f"no size-parametric proof: {e}"
    except Exception as e:  # noqa: BLE001 - isl/z3 limits: no proof
        why = f"no size-parametric proof: {type(e).__name__}: {e}"
    checked.clear()
    try:
        models, complete = size_models(o, limit=max_sizes, budget=budget,
                                       config=control_config([o, s]))
    except Unsupported as e:
        return done(UNKNOWN, f"cannot solve the preconditions: {e}; {why}")
    if not models:
        return done(PROVEN, "the preconditions admit no sizes")
    if hint is not None and hint not in models and not complete:
        # the sizes of a model violating the failed condition come first
        models = [hint] + models[:max_sizes - 1]
    models = extra + [m for m in models if m not in extra]
    got = _concrete(o, s, models, rounds, seed, checked, skip)
    if got is not None:
        status, cond, cex = got
        if status == UNKNOWN:
            cond = f"{cond}; {why}"
        return done(status, cond, cex)
    if complete and _runs_cover_all(o, s):
        return done(PROVEN, "")
    return done(UNKNOWN, f"{why}; equal at the sizes checked")
