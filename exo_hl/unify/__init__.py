"""Unification modulo linear equalities, for ``replace`` (paper §3.3.4).

``unify(sub_ir, block, scope)`` matches the body of the sub-procedure
``sub_ir`` against the caller statements ``block`` and returns the call
arguments that make the call's body *be* the block (up to renaming of bound
symbols and integer arithmetic identities), or raises ``UnifyError``.

Two steps:
1. ``match.Matcher``: structural match; integer control expressions become
   linear equations over the unknowns (the sub-procedure's integer control
   parameters and the per-dimension offsets of its window arguments).
2. for each choice of which caller dimensions the window arguments slice
   (trailing dimensions first), ``solve.solve`` finds integer coefficients
   expressing every unknown as an affine combination of the block's known
   atoms; the first choice that works wins (deterministic).

When the equations leave freedom between a window's offset and a control
argument (``b[lane]`` against ``A_reg[r, 2]``: ``b = A_reg[r, 2:6]`` with
lane 0, or ``b = A_reg[r, 0:4]`` with lane 2), the solver's preferred
reading comes first and the one with window offsets 0 second
(``Unified.alternatives``): ``replace`` checks each reading in full and
takes the first that holds, so either is only ever used when proven.

The caller (``rewrites/replace.py``) then checks what unification cannot
see: memories, the callee's preconditions and the bounds of the inferred
windows, in context.
"""
from __future__ import annotations

import itertools
from typing import Callable, Optional

from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.traversal import subst
from ..core_ir.windows import make_window
from .match import (ChoiceFailed, Matcher, UnifyError, choices_for,
                    constraints_for, off)
from .solve import NoSolution, solve

#: at most this many window-choice combinations are tried
MAX_CHOICES = 512


class Unified:
    """A successful unification: the matcher state, the window choice and
    the solved coefficients."""

    def __init__(self, matcher, choice, solution, alternatives=()):
        self.m = matcher
        self.choice = choice
        self.solution = solution
        #: other readings of the same match (Unified), to try in order
        #: when this one fails the caller's checks
        self.alternatives = tuple(alternatives)

    def args(self, srcinfo=None, norm: Optional[Callable] = None):
        """The call arguments (IR expressions), one per parameter.

        ``norm`` normalizes integer expressions (e.g. the simplifier with the
        ranges known at the block)."""
        norm = norm or (lambda e: e)
        m, sol = self.m, self.solution
        ctrl = {}
        for p in m.ctrl:
            c0, cs = sol[("arg", p)]
            ctrl[p] = norm(_affine(c0, cs, m.atoms, srcinfo))
        out = []
        for fa in m.sub.args:
            p = fa.name
            if p in ctrl:
                out.append(ctrl[p])
            elif T.is_control(fa.type):
                out.append(m.exprs[p])
            elif T.is_real_scalar(fa.type):
                out.append(IR.Read(m.bufs[p], (), type=m.scope[m.bufs[p]],
                                   srcinfo=srcinfo))
            else:
                out.append(self._window(fa, ctrl, srcinfo, norm))
        return tuple(out)

    def _window(self, fa, ctrl, si, norm):
        m, sol = self.m, self.solution
        p = fa.name
        ksym = m.bufs[p]
        kt = m.scope[ksym]
        if not fa.type.is_window:  # dense tensor: the whole buffer
            return IR.Read(ksym, (), type=kt, srcinfo=si)
        dims = self.choice[p]
        idx = []
        for d in range(len(T.shape(kt))):
            c0, cs = sol[off(p, d)]
            o = norm(_affine(c0, cs, m.atoms, si))
            if d in dims:
                ext = norm(subst(fa.type.hi[dims.index(d)], ctrl))
                hi = norm(B.add(o, ext, si))
                idx.append(IR.Interval(o, hi, srcinfo=si))
            else:
                idx.append(IR.Point(o, srcinfo=si))
        return make_window(ksym, kt, idx, si)


def _affine(c0, coeffs, basis, si):
    e = None
    for a in basis:
        c = coeffs.get(a, 0)
        if not c:
            continue
        t = a if c == 1 else B.mul(B.const(c, si), a, si)
        e = t if e is None else B.add(e, t, si)
    if e is None:
        return B.const(c0, si)
    if c0:
        e = B.add(e, B.const(c0, si), si)
    return e


def unify(sub_ir, block, scope) -> Unified:
    """Unify ``sub_ir``'s body with ``block`` (see module docstring)."""
    m = Matcher(sub_ir, block, scope)
    try:
        m.run()
    except UnifyError as e:
        e.progress = m.progress
        raise
    try:
        return _solve_all(m, sub_ir)
    except UnifyError as e:
        # the structure matched: only index equations or windows failed
        e.progress = m.progress + 1
        raise


def _solve_all(m, sub_ir) -> Unified:
    bparams = [fa.name for fa in sub_ir.args
               if fa.name in m.bufs and not T.is_real_scalar(fa.type)]
    positive = [("arg", p) for p in m.ctrl if m.params[p].type is IR.Size]
    unknowns = [("arg", p) for p in m.ctrl]
    unknowns += [off(p, d) for p in bparams
                 for d in range(len(T.shape(m.scope[m.bufs[p]])))]
    # equations that hold whatever the window choice: fail early and precisely
    try:
        solve(m.eqs, [("arg", p) for p in m.ctrl], m.atoms, optimize=False)
    except NoSolution as e:
        raise UnifyError(_why(e.desc)) from None
    options = [choices_for(m, p) for p in bparams]
    for p, opts in zip(bparams, options):
        if not opts:
            raise UnifyError(
                f"parameter '{p.name}' is a dense tensor of "
                f"{len(m.params[p].type.hi)} dimensions; '{m.bufs[p].name}' "
                "cannot be passed whole (only a window parameter [T][...] "
                "accepts part of a buffer)")
    fails = []
    for n, combo in enumerate(itertools.product(*options)):
        if n >= MAX_CHOICES:
            break
        choice = dict(zip(bparams, combo))
        try:
            eqs = list(m.eqs) + constraints_for(m, choice)
            sol = solve(eqs, unknowns, m.atoms, positive)
        except ChoiceFailed as e:
            fails.append((choice, str(e)))
            continue
        except NoSolution as e:
            fails.append((choice, _why(e.desc)))
            continue
        offsets = [u for u in unknowns if u[0] != "arg"]
        alt = solve(eqs, unknowns, m.atoms, positive, prefer_zero=offsets)
        return Unified(m, choice, sol,
                       [Unified(m, choice, alt)] if alt != sol else [])
    if not fails:
        raise UnifyError("no window choice fits the accesses")
    if len(fails) == 1:
        raise UnifyError(fails[0][1])
    lines = [f"with {_choice_str(m, c)}: {why}" for c, why in fails[:4]]
    raise UnifyError("no choice of windows works:\n      "
                     + "\n      ".join(lines), _distinct(fails))


def _distinct(fails):
    """The different reasons of the failed window choices, for the user
    (who did not choose windows): the first, then the others."""
    whys = []
    for _, why in fails:
        if why not in whys:
            whys.append(why)
    if len(whys) == 1:
        return whys[0]
    return (whys[0] + "; passing the buffers' other dimensions instead: "
            + "; ".join(whys[1:3]))


def _choice_str(m, choice):
    parts = []
    for p, dims in choice.items():
        if dims is None:
            continue
        r = len(T.shape(m.scope[m.bufs[p]]))
        acc = ", ".join("lo:hi" if d in dims else "_" for d in range(r))
        parts.append(f"'{p.name}' = {m.bufs[p].name}[{acc}]")
    return ", ".join(parts) or "no windows"


def _why(desc):
    return desc + " (no argument values make these indices equal)"


__all__ = ["unify", "Unified", "UnifyError", "MAX_CHOICES"]
