"""``resize_dim(alloc, dim, size, offset, fold=False)``: a new extent for one
dimension of an allocation.

    t: f32[n, 16]                       t: f32[n, 4]
    ... t[i, j0 + jj] ...        ~>     ... t[i, j0 + jj - j0] ...
            (dim=1, size=4, offset='j0')

Every index ``e`` of dimension ``dim`` becomes ``e - offset``. Checked, for
every access (reads, writes, reductions, window slices and points) under
its own context: ``offset <= e < offset + size`` (a window slice
``lo:hi`` needs ``offset <= lo`` and ``hi <= offset + size``), and
``size >= 1``. ``size`` and ``offset`` are read where the buffer is
allocated and may not read configuration state (they are evaluated at each
access). The buffer may not be passed whole to a call, nor the strides
it changes read (here or, through a window, by a callee): a row-major
stride is the product of the later extents, so resizing ``dim`` changes
the strides of the dimensions before it; a window of the buffer whose
slices all lie at or after ``dim`` keeps its strides.

``fold=True`` makes a circular buffer (Halide's storage folding): indices
become ``(e - offset) % size``, with a constant ``size``. Two locations
``e < e'`` congruent modulo ``size`` now share storage, which is safe when
their uses never interleave. Checked: every access of the buffer lies in
one sequential loop ``L`` placed directly in the buffer's scope, and for
every pair of accesses ``A`` (index ``e_A`` in iteration ``y_A`` of ``L``)
and ``B`` (``e_B`` in iteration ``y_B``, another or the same one):
``e_B - e_A >= size`` implies ``y_A < y_B``. Then all uses of a location
end (in an earlier iteration) before any use of a location ``size`` or
more above it begins, so each slot holds one location's value at a time
and every read sees the value the unfolded program read (a read of a
location before its first write saw an uninitialised value there too).
The accesses include those through window names (``w = t[e, ...]``;
windows of windows too) and a callee's through a window name passed to
it: each counts where it executes (the statement using ``w`` or the call,
in the iteration it runs in), not where ``w`` was bound, with the index
``e`` the window fixes in the folded dimension (the window statement
itself counts too). A folded dimension may not be sliced by a window, each
index must be proven
``>= offset``, and the indices, ``L``'s bounds and the guards between
``L`` and an access may not read configuration state. Accesses in
statements of the buffer's scope before ``L`` (a sliding window's first
rows) are allowed: they all run before ``L``'s first iteration, so they
count as an iteration ``lo - 1`` of ``L`` in the condition above.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.simplify import const_value, env_at, make_window, simplify_expr
from ..core_ir.traversal import walk, walk_stmts
from ..core_ir.visitors import map_accesses
from ..effects import api as EA
from ..effects import checks as CH
from ..effects import eexpr as E
from . import _common as C
from ._buffer_uses import aliases, reads_strides, uses
from ._check import check_allocatable
from ._expr_at import config_scope, expr_text, reads_config

OP = "resize_dim"


def _b(op, a, b, typ=IR.Bool):
    return IR.BinOp(op, a, b, type=typ)


def resize_dim(proc, alloc, dim, size, offset, fold=False):
    buf = C.resolve_alloc(proc, alloc, OP)
    ir = proc.ir()

    def fail(msg, st=None):
        return C.scheduling_error(proc, st if st is not None else buf.node,
                                  f"{OP}: {msg}")

    a = buf.node
    shape = T.shape(a.type)
    if not C.is_count(dim, 0) or dim >= len(shape):
        raise fail(f"dim must be a dimension index of '{a.name.name}' "
                   f"(0..{len(shape) - 1}), got {dim!r}")
    if not isinstance(fold, bool):
        raise fail(f"fold must be True or False, got {fold!r}")
    *parent, (field, k) = buf.loc
    parent = tuple(parent)
    cfg_scope = config_scope(ir)
    sz = C.parse_expr_at(proc, size, parent, field, k, OP, scope=cfg_scope)
    off = C.parse_expr_at(proc, offset, parent, field, k, OP, scope=cfg_scope)
    for what, e in (("size", sz), ("offset", off)):
        if not T.is_int_control(e.type):
            raise fail(f"the {what} '{expr_text(e)}' is not an integer "
                       f"control expression")
        if reads_config(e):
            raise fail(f"the {what} '{expr_text(e)}' reads configuration "
                       f"state")
    if not EA.prove_at(ir, buf.loc, _b(">=", sz, IR.Const(1, type=IR.Int))):
        raise fail(f"cannot prove the new size {expr_text(sz)} >= 1")
    if fold:
        n = const_value(sz, env_at(ir, buf.loc))
        if not isinstance(n, int):
            raise fail("a folded dimension needs a constant size")

    block = C.get_list(ir, parent, field)
    scope = block[k + 1:]
    names = aliases(ir, buf.sym)
    us = uses(scope, parent, field, k + 1, names)
    upper = _b("+", off, sz, IR.Index)

    checks = []   # (use, index expr) pairs of the folded/resized dimension
    fold_pt = _window_points(ir, buf.sym, dim) if fold else {}
    def strides_kept(u):
        """Does ``u`` (a stride read or a window) see only strides of
        dimensions at or after ``dim``, which resizing ``dim`` leaves as
        they were (a row-major stride is the product of the later
        extents)? Only for ``buf`` itself: a window name's dimensions map
        to the buffer's through its own slices."""
        if u.node.name != buf.sym:
            return False
        if u.kind == "stride":
            return u.node.dim >= dim
        return all(d >= dim for d, w in enumerate(u.node.idx)
                   if isinstance(w, IR.Interval))

    for u in us:
        if u.kind == "stride":
            if strides_kept(u):
                continue
            raise fail(f"'{expr_text(u.node)}' reads a stride, which "
                       f"resizing changes", u.stmt)
        if u.kind == "whole":
            if u.node.name == buf.sym:
                raise fail(f"'{buf.sym.name}' is passed whole to a call; its "
                           f"shape would change under it", u.stmt)
            if isinstance(u.stmt, IR.Call) and reads_strides(u.stmt.f):
                raise fail(f"'{u.stmt.f.name}' reads strides of a window of "
                           f"'{buf.sym.name}', which resizing changes",
                           u.stmt)
            if fold and u.node.name in fold_pt:
                # a window name passed to a call: the callee's accesses
                # happen at the call, at the window's point in ``dim``
                checks.append((u, fold_pt[u.node.name]))
            continue
        if u.kind == "window" and isinstance(u.stmt, IR.Call) and \
                reads_strides(u.stmt.f) and not strides_kept(u):
            raise fail(f"'{u.stmt.f.name}' reads strides of a window of "
                       f"'{buf.sym.name}', which resizing changes", u.stmt)
        if u.node.name != buf.sym:
            # through a window name: relative to the window, whose own
            # statement was checked. Folding: the access (or the callee's,
            # for a window passed to a call) happens here, not where the
            # window was bound; it reads or writes the buffer at the
            # window's point in ``dim`` (folded dimensions are not sliced)
            if fold and u.node.name in fold_pt:
                checks.append((u, fold_pt[u.node.name]))
            continue
        if u.kind == "window":
            w = u.node.idx[dim]
            if isinstance(w, IR.Interval):
                if fold:
                    raise fail(f"the window {expr_text(u.node)} slices the "
                               f"folded dimension", u.stmt)
                pred = _b("and", _b("<=", off, w.lo), _b("<=", w.hi, upper))
                if not EA.prove_at(ir, u.path, pred):
                    raise fail(f"cannot prove the window {expr_text(u.node)} "
                               f"lies in [{expr_text(off)}, "
                               f"{expr_text(upper)}) in dimension {dim}",
                               u.stmt)
                continue
            e = w.pt
        else:
            e = u.node.idx[dim]
        pred = _b("<=", off, e) if fold else \
            _b("and", _b("<=", off, e), _b("<", e, upper))
        if not EA.prove_at(ir, u.path, pred):
            rng = (f">= {expr_text(off)}" if fold else
                   f"in [{expr_text(off)}, {expr_text(upper)})")
            raise fail(f"cannot prove the index {expr_text(e)} of this "
                       f"access is {rng}", u.stmt)
        checks.append((u, e))
    if fold:
        _check_fold(proc, ir, buf, parent, field, k, checks, n, fail)

    # build
    hi = list(shape)
    hi[dim] = sz
    new_type = a.type.update(hi=tuple(hi))
    # a memory may take only some sizes (DRAM_STATIC: constants)
    check_allocatable(proc, a.update(type=new_type), a.mem, OP)

    def shift(e):
        d = _b("-", e, off, IR.Index)
        if fold:
            d = _b("%", d, sz, IR.Index)
        return simplify_expr(d)

    def point(nd):
        if not nd.idx:
            return None
        idx = list(nd.idx)
        idx[dim] = shift(idx[dim])
        return nd.update(idx=tuple(idx))

    def window(nd):
        idx = list(nd.idx)
        w = idx[dim]
        idx[dim] = (w.update(lo=shift(w.lo), hi=shift(w.hi))
                    if isinstance(w, IR.Interval)
                    else w.update(pt=shift(w.pt)))
        return make_window(buf.sym, new_type, idx, nd.srcinfo)
    new_scope = tuple(map_accesses(s, buf.sym, write=point, read=point,
                                   window=window) for s in scope)
    new_ir = C.replace_block_at(ir, parent, field, k, len(block),
                                (a.update(type=new_type), ) + new_scope)
    return proc._derive(new_ir, OP)


def _window_points(ir, sym, dim) -> dict:
    """Each window name viewing ``sym`` (directly or through windows of
    windows) mapped to the index it fixes in dimension ``dim`` of ``sym``:
    every access through the name is at that index there. Windows slicing
    ``dim`` are left out (folding refuses them at their own statement)."""
    out = {}
    for s in walk_stmts(ir.body):
        if not isinstance(s, IR.WindowStmt):
            continue
        if s.rhs.name == sym:
            w = s.rhs.idx[dim]
            if not isinstance(w, IR.Interval):
                out[s.name] = w.pt
        elif s.rhs.name in out:
            out[s.name] = out[s.rhs.name]
    return out


def _check_fold(proc, ir, buf, parent, field, k, checks, n, fail):
    """The reuse-distance condition of the module docstring. Accesses in
    statements before ``L`` (a prologue, e.g. the first rows of a sliding
    window) count as one more iteration ``lo - 1`` of ``L``: they all run
    before its first iteration."""
    if not checks:
        return
    depth = len(parent)
    tops = {u.path[depth][1] for u, _ in checks}
    lpath = parent + ((field, max(tops)), )
    L = C.get_stmt(ir, lpath)
    if not isinstance(L, IR.For) or L.mode is not IR.Seq:
        raise fail("a folded buffer must be used inside one sequential loop "
                   "(all of its accesses in one loop directly in its "
                   "scope, or in statements before that loop)", L)
    if len(tops) > 1 and reads_config(L.lo):
        raise fail("the lower bound of the loop holding the folded "
                   "buffer's accesses reads configuration state", L)
    for u, e in checks:
        if len(u.path) == len(lpath) and u.path[depth][1] == lpath[-1][1]:
            raise fail("a folded buffer may not be used in the bounds of "
                       "the loop holding its accesses", u.stmt)
        if reads_config(e):
            raise fail(f"the index {expr_text(e)} reads configuration state",
                       u.stmt)
        for d in range(depth + 1, len(u.path)):
            st = C.get_stmt(ir, u.path[:d])
            ctl = (st.lo, st.hi) if isinstance(st, IR.For) else \
                (st.cond, ) if isinstance(st, IR.If) else ()
            if any(reads_config(c) for c in ctl):
                raise fail("a loop bound or guard around an access of the "
                           "folded buffer reads configuration state", st)
    before = E.op("-", EA.context(ir, lpath).lift(L.lo), E.const(1))
    prepared = []
    for u, e in checks:
        ctx = EA.context(ir, u.path)
        inside = u.path[depth][1] == lpath[-1][1]
        first = len(lpath) if inside else depth + 1
        iters = [C.get_stmt(ir, u.path[:d]).iter
                 for d in range(first, len(u.path))
                 if isinstance(C.get_stmt(ir, u.path[:d]), IR.For)]
        prepared.append((u, ctx.lift(e), tuple(ctx.hyps), iters, inside))
    y = E.var(L.iter)
    for ua, ea, ha, _, ina in prepared:
        for ub, eb, hb, iters, inb in prepared:
            ren = {x: E.var(x.copy()) for x in iters}
            eb2 = E.subst(eb, ren)
            hb2 = tuple(E.subst(h, ren) for h in hb)
            ya = y if ina else before
            yb = ren[L.iter] if inb else before
            pred = E.or_(E.op("<", E.op("-", eb2, ea), E.const(n)),
                         E.op("<", ya, yb))
            r = CH.prove(pred, ha + hb2)
            if not r:
                raise fail(
                    f"folding by {n} is not proven safe: an access {n} or "
                    f"more elements above another one may happen in the same or "
                    f"an earlier iteration of '{L.iter.name}', so both would "
                    f"use one slot at once ({r.reason})", ub.stmt)
