"""A window of a buffer, and whether a statement provably writes all of it.

``stage_mem`` needs this to skip loading values the staged block overwrites
before reading them; ``sink_alloc`` needs it to know that each iteration of
a loop overwrites a whole buffer. Both use the records and the proof here.
"""
from __future__ import annotations

from typing import NamedTuple

from ..core_ir import build as B
from ..core_ir.nodes import IR
from ..core_ir.syms import Sym
from ..core_ir.traversal import walk
from ..effects.api import prove_at
from . import _common as C


class Slice(NamedTuple):
    """A dimension taken as the interval ``lo:hi``."""
    lo: object
    hi: object


class Point(NamedTuple):
    """A dimension fixed to the point ``pt``."""
    pt: object


def coords(idx):
    """The coordinates of a window expression's indices."""
    return [Slice(a.lo, a.hi) if isinstance(a, IR.Interval) else Point(a.pt)
            for a in idx]


class Window(NamedTuple):
    """The window to stage: buffer, its type, and one coordinate per
    buffer dimension."""
    buf: Sym
    type: object
    dims: list

    def slices(self):
        """Indices of the dimensions taken as intervals (those the staged
        buffer keeps)."""
        return [k for k, d in enumerate(self.dims) if isinstance(d, Slice)]


def overwrites_window(proc, path, stmt, block, w: Window) -> bool:
    """True when the statement ``stmt`` (at ``path``, inside ``block``)
    provably assigns every location of the window.

    Sufficient condition: some assignment ``buf[idx] = e`` sits in it under
    loops only (no ``if``), each loop between it and ``stmt`` runs at least
    once, and each interval dimension ``k`` of the window is indexed
    ``x_k + r_k`` by a distinct such loop ``x_k`` whose range shifted by
    ``r_k`` (free of those loops' variables) is exactly the window's
    ``[lo_k, hi_k)``; point dimensions are indexed by the window's point
    (already proven by the coverage check)."""
    from ..core_ir.simplify import affine_form

    def visit(s, p, loops):
        if isinstance(s, IR.For):
            loops = loops + [(p, s)]
            return any(visit(b, p + (("body", i), ), loops)
                       for i, b in enumerate(s.body))
        if isinstance(s, IR.Assign) and s.name == w.buf:
            return _assign_covers(proc, s, block, w, loops, affine_form)
        return False
    return visit(stmt, tuple(path), [])


def _assign_covers(proc, s, block, w: Window, loops, affine_form):
    """Each fact is proven where it is evaluated: a loop's bounds in that
    loop's own context (after the statements of the block before it, so a
    bound reading a configuration field written earlier in the block reads
    the new value); the offsets ``r_k`` may not read configuration state
    the block writes (they are evaluated at the assignment); the window's
    bounds name only variables the block cannot change. Each unmapped loop
    is proven non-empty in its own context (its enclosing loops are either
    proven non-empty too, or mapped: then empty means the window itself is
    empty)."""
    loop_vars = {l.iter: (p, l) for p, l in loops}
    mapped = {}
    for k in w.slices():
        terms, const = affine_form(s.idx[k])
        xs = [(a, c) for a, c in terms.items()
              if isinstance(a, IR.Read) and not a.idx and a.name in loop_vars]
        if len(xs) != 1 or xs[0][1] != 1 or xs[0][0].name in mapped.values():
            return False
        x = xs[0][0].name
        rest_vars = set()
        for a in terms:
            if a is not xs[0][0]:
                rest_vars |= {n.name for n in walk(a) if isinstance(n, IR.Read)}
        if rest_vars & set(loop_vars):
            return False
        rest = B.sub(s.idx[k], xs[0][0])
        if C.bounds_depend_on((rest, ), block):
            return False
        p, l = loop_vars[x]
        if {n.name for e in (l.lo, l.hi) for n in walk(e)
                if isinstance(n, IR.Read)} & set(loop_vars):
            return False
        pred = B.conj([B.cmp("==", B.add(l.lo, rest), w.dims[k].lo),
                       B.cmp("==", B.add(l.hi, rest), w.dims[k].hi)])
        if not prove_at(proc, p, pred):
            return False
        mapped[k] = x
    for x, (p, l) in loop_vars.items():
        if x in mapped.values():
            continue
        if not prove_at(proc, p, B.cmp("<", l.lo, l.hi)):
            return False
    return True


def written_windows(proc, path, stmt, block, buf) -> list:
    """The windows of ``buf`` that ``stmt`` (at ``path``, inside ``block``)
    provably assigns in full: one per assignment ``buf[idx] = e`` reached
    through loops only, read off its indices (a dimension indexed
    ``x + r`` by a loop ``x`` in ``[lo, hi)`` is the slice
    ``lo + r : hi + r``; a dimension free of the loops is the point it
    names), each proven for that assignment as ``overwrites_window`` does
    (every loop on the way runs, or its range is the window's). The
    windows' bounds may not read configuration state ``block`` writes, so
    they keep their values for the rest of the block."""
    from ..core_ir.simplify import affine_form
    out = []

    def visit(s, p, loops):
        if isinstance(s, IR.For):
            loops = loops + [(p, s)]
            for i, b in enumerate(s.body):
                visit(b, p + (("body", i), ), loops)
        elif isinstance(s, IR.Assign) and s.name == buf and s.idx:
            # proven for this very assignment (its points are its own)
            w = _window_of(s, [l for _, l in loops], buf, affine_form)
            if w is not None and not C.bounds_depend_on(
                    [e for d in w.dims for e in d], block) \
                    and _assign_covers(proc, s, block, w, loops, affine_form):
                out.append(w)
    visit(stmt, tuple(path), [])
    return out


def _window_of(s, loops, buf, affine_form):
    by_iter = {l.iter: l for l in loops}
    dims = []
    for e in s.idx:
        terms, _ = affine_form(e)
        xs = [a for a in terms if isinstance(a, IR.Read) and not a.idx
              and a.name in by_iter]
        if not xs:
            if {n.name for n in walk(e) if isinstance(n, IR.Read)} \
                    & set(by_iter):
                return None
            dims.append(Point(e))
            continue
        if len(xs) != 1 or terms[xs[0]] != 1:
            return None
        l = by_iter[xs[0].name]
        rest = B.sub(e, xs[0])
        dims.append(Slice(B.add(l.lo, rest), B.add(l.hi, rest)))
    return Window(buf, None, dims)


def inside_window(proc, path, idx, w: Window) -> bool:
    """True when the location ``buf[idx]`` (read at ``path``) provably lies
    in the window ``w``."""
    if len(idx) != len(w.dims):
        return False
    preds = []
    for e, d in zip(idx, w.dims):
        if isinstance(d, Point):
            preds.append(B.cmp("==", e, d.pt))
        else:
            preds += [B.cmp("<=", d.lo, e), B.cmp("<", e, d.hi)]
    return bool(prove_at(proc, path, B.conj(preds)))
