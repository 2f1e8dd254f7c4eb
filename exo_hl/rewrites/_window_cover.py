"""A window of a buffer, and whether a statement (or a block, before it
reads the window) provably writes all of it.

``stage_mem`` needs this to skip loading values the staged block overwrites
before reading them; ``sink_alloc`` needs it to know that each iteration of
a loop overwrites a whole buffer. Both use the records and the proof here.
"""
from __future__ import annotations

from typing import NamedTuple

from ..core_ir import build as B
from ..core_ir.nodes import IR
from ..core_ir.simplify import simplify_expr
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
    ``[lo_k, hi_k)``; point dimensions are indexed by the window's point,
    proven at the assignment (an assignment that lies apart from the window
    in a point dimension, such as ``z[3, j]`` for the window ``z[2, 0:8]``,
    overwrites none of it: taking it for an overwrite skipped the load of
    ``stage_mem``, whose store then wrote back uninitialised values, audit
    15a)."""
    from ..core_ir.simplify import affine_form

    def visit(s, p, loops):
        if isinstance(s, IR.For):
            loops = loops + [(p, s)]
            return any(visit(b, p + (("body", i), ), loops)
                       for i, b in enumerate(s.body))
        if isinstance(s, IR.Assign) and s.name == w.buf:
            return _points_match(proc, p, s, w) and _assign_covers(
                proc, s, block, w, loops, affine_form)
        return False
    return visit(stmt, tuple(path), [])


def _points_match(proc, path, s, w: Window) -> bool:
    """The assignment ``s`` (at ``path``) indexes each point dimension of
    the window at the window's point, proven there (the point's config
    fields are not written by the block: ``stage_mem`` checks it)."""
    preds = [B.cmp("==", s.idx[k], d.pt) for k, d in enumerate(w.dims)
             if isinstance(d, Point)]
    return not preds or bool(prove_at(proc, path, B.conj(preds)))


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


def overwritten_first(proc, blk, w: Window, top_kinds, outside=frozenset(),
                       env0=None, derived=frozenset()) -> bool:
    """True when the block provably assigns every location of the window
    before it reads any of them (so the old values need not be loaded):
    some top-level statement of the block overwrites the whole window
    (``_overwrites_window``) and neither it nor any statement before it
    reads, reduces into or passes the buffer for reading; or, for a small
    window of constant extents, top-level assignments to its elements at
    constant offsets write all of them, each statement reading only
    elements written before it (Exo's recursive staging:
    ``y_tmp[0] = ...; y_tmp[1] = y_tmp[0] + ...``)."""
    elems = _const_elements(w, env0)
    written = set()
    for k, s in enumerate(blk.stmts):
        if elems and isinstance(s, IR.Assign) and top_kinds[k]:
            got = _assign_elements(s, w, outside, env0, derived)
            if got is not None and got[0] <= written:
                written |= got[1]
                if written >= elems:
                    return True
                continue
        if top_kinds[k] - {"write"}:
            return False  # reads old values (or we cannot tell)
        if top_kinds[k] and overwrites_window(
                proc, blk.parent + ((blk.field, blk.lo + k), ), s, blk.stmts,
                w):
            return True
    return False


#: the most elements ``overwritten_first`` counts one by one
_MAX_ELEMENTS = 64


def _offset(e, lo, env0):
    """``e - lo`` as an int when it simplifies to a constant, else None."""
    d = simplify_expr(B.sub(e, lo), env0)
    return d.val if isinstance(d, IR.Const) and isinstance(d.val, int) \
        and not isinstance(d.val, bool) else None


def _const_elements(w: Window, env0):
    """The window's elements as offset tuples (one per slice), when its
    extents are small constants; else None."""
    import itertools
    ext = []
    for k in w.slices():
        n = _offset(w.dims[k].hi, w.dims[k].lo, env0)
        if n is None or n < 0:
            return None
        ext.append(n)
    total = 1
    for n in ext:
        total *= n
    if total > _MAX_ELEMENTS:
        return None
    return set(itertools.product(*(range(n) for n in ext)))


def _element(idx, w: Window, env0):
    """The window element an access names (offsets from the window's
    lower bounds), or None when it is not a constant one."""
    out = []
    for k in w.slices():
        d = _offset(idx[k], w.dims[k].lo, env0)
        if d is None:
            return None
        out.append(d)
    return tuple(out)


def _assign_elements(s, w: Window, outside, env0, derived):
    """(elements of the window ``s`` reads, elements it writes) for a
    top-level assignment, or None when some access to the window is not
    at a constant element (or goes through a window name)."""
    reads = set()
    if s.name in derived:
        return None
    for e in tuple(s.idx) + (s.rhs, ):
        for n in walk(e):
            if getattr(n, "name", None) in derived:
                return None
            if isinstance(n, IR.WindowExpr) and n.name == w.buf:
                return None
            if isinstance(n, IR.Read) and n.name == w.buf and n.idx \
                    and ("p", n.idx) not in outside:
                el = _element(n.idx, w, env0)
                if el is None:
                    return None
                reads.add(el)
    writes = set()
    if s.name == w.buf and ("p", s.idx) not in outside:
        el = _element(s.idx, w, env0)
        if el is None:
            return None
        writes.add(el)
    return reads, writes
