"""What a block does to a buffer staged by ``stage_mem``: each access
proven inside the window or wholly apart from it (then it keeps using the
buffer), the kinds of access per top-level statement (they decide the load
and the store), and the window statements in the block that view it.
"""
from __future__ import annotations

from typing import NamedTuple

from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.paths import walk_with_paths
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import walk, walk_stmts
from ..effects.api import prove_at
from ..effects.effects import write_kinds
from ._buffer_uses import param_uses, stmt_exprs, window_roots
from ._window_cover import Point, Slice, Window, coords


class Survey(NamedTuple):
    """What the block does to the buffer: every kind of access ('read',
    'write', 'reduce'), the kinds per top-level statement, and the window
    statements inside the block that view the buffer."""
    kinds: set
    top_kinds: list
    derived: set
    outside: frozenset   # keys of the accesses kept on the buffer


def survey_block(proc, blk, w: Window, window, fail, guards) -> Survey:
    """Every access of the block to the buffer: its kind, proven covered
    by the window under its own context (and, for a guarded dimension,
    inside the buffer: the guarded copies hold only those elements); any
    access to the buffer through another name is refused (aliasing)."""
    buf, dims = w.buf, w.dims
    root = window_roots(proc.ir())
    my_root = root.get(buf, buf)
    derived = set()   # window statements inside the block viewing buf
    for s in walk_stmts(blk.stmts):
        if isinstance(s, IR.WindowStmt) and (s.rhs.name == buf
                                             or s.rhs.name in derived):
            derived.add(s.name)
    staged = {buf} | derived
    kinds = set()
    # what each top-level statement of the block does to the buffer
    top_kinds = [set() for _ in blk.stmts]
    depth = len(blk.parent)
    top = 0

    def note(*ks):
        kinds.update(ks)
        top_kinds[top].update(ks)

    def alias_check(s, name):
        if name in staged:
            return
        if root.get(name, name) == my_root:
            raise fail(s, f"the block accesses '{buf}' through another name "
                       f"'{name}' (aliasing); staging would bypass it")

    shape = T.shape(w.type)

    def inside(coords):
        """The predicate that an access lies inside the window (and inside
        the buffer on the guarded sides of the window)."""
        conds = []
        for k, (d, acc) in enumerate(zip(dims, coords)):
            if isinstance(d, Slice):
                sides = guards.get(k, ())
                if isinstance(acc, Slice):
                    conds += [B.cmp("<=", d.lo, acc.lo),
                              B.cmp("<=", acc.hi, d.hi)]
                    if "lo" in sides:
                        conds.append(B.cmp("<=", B.const(0), acc.lo))
                    if "hi" in sides:
                        conds.append(B.cmp("<=", acc.hi, shape[k]))
                else:
                    conds += [B.cmp("<=", d.lo, acc.pt),
                              B.cmp("<", acc.pt, d.hi)]
                    if "lo" in sides:
                        conds.append(B.cmp("<=", B.const(0), acc.pt))
                    if "hi" in sides:
                        conds.append(B.cmp("<", acc.pt, shape[k]))
            else:
                if isinstance(acc, Slice):
                    return None     # a slice where the window has a point
                conds.append(B.cmp("==", acc.pt, d.pt))
        return B.conj(conds)

    def apart(coords):
        """The predicate that an access lies wholly outside the window: in
        some dimension its point or slice misses the window's."""
        alts = []
        for d, acc in zip(dims, coords):
            lo, hi = ((d.lo, d.hi) if isinstance(d, Slice)
                      else (d.pt, B.add(d.pt, B.const(1))))
            if isinstance(acc, Slice):
                alts += [B.cmp("<=", acc.hi, lo), B.cmp("<=", hi, acc.lo)]
            else:
                alts += [B.cmp("<", acc.pt, lo), B.cmp("<=", hi, acc.pt)]
        pred = alts[0]
        for a in alts[1:]:
            pred = IR.BinOp("or", pred, a, type=IR.Bool)
        return pred

    def cover(path, s, coords, key=None):
        """Is an access inside the window (True) or, when ``key`` is given
        (an access the block may keep on the buffer), provably apart from
        it (False, and ``key`` is recorded)? Anything else may partially
        overlap the window and is refused."""
        pred = inside(coords)
        if pred is not None and prove_at(proc, path, pred):
            verdict = True
        elif key is not None and prove_at(proc, path, apart(coords)):
            verdict = False
        elif pred is None:
            raise fail(s, f"the block takes a slice of a dimension of "
                       f"'{buf}' which the window fixes to a point")
        else:
            what = ("does not cover this access to" if not guards else
                    "(guarded: it runs past the buffer) does not cover, "
                    "inside the buffer, this access to")
            apart_note = (", nor provably lies apart from it"
                          if key is not None else "")
            raise fail(s, f"the window {window!r} {what} '{buf}'"
                       f"{apart_note} (cannot prove {expr_to_str(pred)})")
        if key is not None:
            # the rewrite tells the two apart by their indices
            at = f"{buf}[{', '.join(_idx_text(i) for i in key[1])}]"
            if seen.setdefault(key, verdict) != verdict:
                raise fail(s, f"the access {at} lies inside the window in "
                           f"one place and apart from it in another")
            if not verdict:
                if any(isinstance(n, IR.StrideExpr) for i in key[1]
                       for n in walk(i)):
                    raise fail(s, f"the access {at}, apart from the "
                               f"window, reads a stride in its indices")
                outside.add(key)
        return verdict

    seen = {}
    outside = set()   # accesses kept on the buffer (apart from the window)
    whole = [Slice(B.const(0), h) for h in T.shape(w.type)]
    for path, s in walk_with_paths(blk.stmts, tuple(blk.parent), blk.field,
                                   blk.lo):
        top = path[depth][1] - blk.lo
        if isinstance(s, (IR.Assign, IR.Reduce)):
            alias_check(s, s.name)
            if s.name in staged and (s.name != buf or cover(
                    path, s, [Point(i) for i in s.idx], ("p", s.idx))):
                note(*write_kinds(s))
        if isinstance(s, IR.Call):
            for k, a in enumerate(s.args):
                if isinstance(a, IR.WindowExpr) or (
                        isinstance(a, IR.Read) and not a.idx
                        and T.is_tensor_or_window(a.type)):
                    alias_check(s, a.name)
                    if a.name not in staged:
                        continue
                    if a.name == buf:
                        if isinstance(a, IR.Read):
                            cover(path, s, whole)
                        elif not cover(path, s, coords(a.idx),
                                       ("w", a.idx)):
                            continue
                    note(*param_uses(s.f, k))
        if isinstance(s, IR.WindowStmt):
            alias_check(s, s.rhs.name)
        call_windows = tuple(a for a in getattr(s, "args", ())
                             if isinstance(s, IR.Call)
                             and isinstance(a, IR.WindowExpr))
        for e in stmt_exprs(s) + ((s.rhs, ) if isinstance(s, IR.WindowStmt)
                                   else ()) + call_windows:
            for n in walk(e):
                if isinstance(n, IR.Read) and n.idx:
                    alias_check(s, n.name)
                    if n.name in staged and (n.name != buf or cover(
                            path, s, [Point(i) for i in n.idx],
                            ("p", n.idx))):
                        note("read")
                elif isinstance(n, IR.WindowExpr):
                    alias_check(s, n.name)
                    if n.name == buf:
                        # a window statement's name is re-pointed at the
                        # staged buffer: it must lie inside the window
                        cover(path, s, coords(n.idx),
                              None if isinstance(s, IR.WindowStmt)
                              else ("w", n.idx))
                elif isinstance(n, IR.StrideExpr):
                    alias_check(s, n.name)
    return Survey(kinds, top_kinds, derived, frozenset(outside))


def _idx_text(i):
    if isinstance(i, IR.Interval):
        return f"{expr_to_str(i.lo)}:{expr_to_str(i.hi)}"
    return expr_to_str(i.pt if isinstance(i, IR.Point) else i)
