"""``stage_mem(block, window, new_name, accum=False)``: stage a window of a
buffer into a fresh buffer around a block.

    s                        new: T[e0, e1]
                             for i0, i1: new[i0, i1] = C[lo0 + i0, lo1 + i1]
                      ~>     s[C[a, b] -> new[a - lo0, b - lo1]]
                             for i0, i1: C[lo0 + i0, lo1 + i1] = new[i0, i1]

The load nest is emitted when the block may read old values of the window:
it reads (or reduces into) the buffer before it has provably overwritten the
whole window, or it writes only part of the window (the store writes back
the whole window, so the part the block does not write must hold the old
values). The overwrite is proven for one top-level statement of the block,
each fact in its own context (after the statements before it); when unsure
the load stays. The store nest is emitted when the block writes or reduces
into the buffer. ``accum=True`` zero-initialises instead of
loading and adds back (``+=``) instead of storing; it requires that the
block only reduces into the buffer.

A window may run past the buffer (``x[8 * io:8 * io + 8]`` where the last
block passes ``n``), as in Exo: on each side of a dimension whose bound is
not proven, the copies are *guarded*: the load copies only the elements
inside the buffer and sets the others to 0 (``if i0 < n - 8 * io: new[i0] =
x[8 * io + i0] else: new[i0] = 0.0``, the shape of a masked load's
specification), the store (or ``accum``'s add-back) writes back only the
elements inside the buffer.

Safety (each failure is a ``SchedulingError`` naming the check):
* the window's points lie in bounds of the buffer at the block, and each
  slice has ``lo <= hi``;
* each access of the block to the buffer is covered by the window or
  lies wholly apart from it, proven per access under its control context
  (enclosing loops, guards, preconditions); an access apart from it keeps
  using the buffer (as Exo allows: the block may read ``y[4 * io]`` while
  ``y[2 + 4 * io:6 + 4 * io]`` is staged), one that may partially overlap
  it is refused. A window statement's view and a whole buffer passed to a
  call must be covered. For a guarded window, each covered access is also
  proven inside the buffer on the guarded sides (so the block uses only
  staged elements that were loaded, and only those are stored back);
* nothing in the block reaches the buffer through another name (a window
  statement made before the block, the viewed buffer of a window), which
  would bypass the staged copy;
* a window statement at the top level of the block that views the buffer
  (and so views the staged copy after the rewrite) is not used after the
  block;
* ``accum=True``: the block neither reads nor overwrites the buffer;
* a ``bf16`` buffer with a load: the load copy (which quiets a signaling
  NaN) may not show: no store of elements the block may not write, no
  staged value copied without arithmetic into another type
  (``_stage_bf16``);
* no stride of the buffer that the block reads changes (``stride(buf,
  d)``, of a window name viewing it, or a callee reading strides that is
  passed a window of it): the staged buffer is dense over the window's
  slices (``_check_strides``).
Calls receiving the buffer (or a window of it) are analysed through their
callee's body: what it reads, writes or reduces decides load and store.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.memory import DRAM
from ..core_ir.nodes import IR
from ..core_ir.windows import make_window
from ..core_ir.simplify import env_at, simplify_expr
from ..core_ir.syms import Sym
from ..core_ir.traversal import used_syms, walk_stmts
from ..core_ir.typerules import control_arith_type
from ..core_ir.visitors import map_accesses
from ..core_ir.printer import expr_to_str
from ..effects.api import context, prove, prove_at
from ..effects.effects import truncating_reduce
from ..provenance import derive
from . import _common as C
from ._build import retype_window_reads
from ._buffer_uses import refuse_changed_stride_reads
from ._expr_at import config_scope
from ._stage_bf16 import bf16_refusal
from ._stage_survey import survey_block
from ._window_cover import (Point, Slice, Window, coords as _coords,
                            overwritten_first)

OP = "stage_mem"


# ----------------------------------------------------------------------
# 1. locate: the window
def _parse_window(proc, blk, window) -> Window:
    # offsets may read config fields (the block may not write them:
    # ``check_moved`` below)
    w = C.parse_expr_at(proc, window, blk.parent, blk.field, blk.lo, OP,
                        allow_window=True, scope=config_scope(proc.ir()))
    if isinstance(w, IR.WindowExpr):
        return Window(w.name, w.type.src_type, _coords(w.idx))
    if isinstance(w, IR.Read) and w.idx:
        names = C.names_at(proc.ir(), blk.parent, blk.field, blk.lo)
        typ = names[w.name.name][1]
        return Window(w.name, typ, [Point(i) for i in w.idx])
    raise C.reject(proc, blk.stmts[0],
                   f"{OP}: the window {window!r} must index a "
                   f"buffer, e.g. 'C[i0:i0+4, j]'")


def _fresh(base, used):
    k = 0
    while f"{base}{k}" in used:
        k += 1
    used.add(f"{base}{k}")
    return Sym(f"{base}{k}")


# ----------------------------------------------------------------------
# 2. check
def _check_new_name(proc, blk, new_name, fail):
    """The new name must not be visible at or bound inside the block."""
    visible = set(C.names_at(proc.ir(), blk.parent, blk.field, blk.lo))
    inner = {getattr(s, "name", None) or getattr(s, "iter", None)
             for s in walk_stmts(blk.stmts)}
    inner = {x.name for x in inner if isinstance(x, Sym)}
    if new_name in visible or new_name in inner:
        raise fail(blk.stmts[0], f"the name '{new_name}' is already used")


def _check_in_bounds(proc, path, w: Window, window, fail, s0):
    """The window's points lie in bounds of the buffer at the block and
    each slice is a well-formed interval (``lo <= hi``). A slice may run
    past the buffer on either side: it is then *guarded*, and the result
    maps each such dimension ``k`` to the sides (``'lo'``, ``'hi'``) whose
    bound could not be proven: the copies test them per element, and
    every access of the block must then be proven inside the buffer.

    All the facts are first asked as one conjunction (one query instead
    of up to three a dimension, in one context): when it is proven, every
    one is, and no dimension is guarded; otherwise they are asked one by
    one, which decides the guards and names the fact that fails."""
    ctx = context(proc.ir(), path)
    facts = []
    for d, hi in zip(w.dims, T.shape(w.type)):
        if isinstance(d, Slice):
            facts += [B.cmp("<=", d.lo, d.hi), B.cmp("<=", B.const(0), d.lo),
                      B.cmp("<=", d.hi, hi)]
        else:
            facts += [B.cmp("<=", B.const(0), d.pt), B.cmp("<", d.pt, hi)]
    if prove(B.conj(facts), ctx):
        return {}
    guards = {}
    for k, (d, hi) in enumerate(zip(w.dims, T.shape(w.type))):
        if isinstance(d, Slice):
            pred = B.cmp("<=", d.lo, d.hi)
            if not prove(pred, ctx):
                raise fail(s0, f"the window {window!r} has a slice that may "
                           f"be empty backwards (cannot prove "
                           f"{expr_to_str(pred)})")
            sides = set()
            if not prove(B.cmp("<=", B.const(0), d.lo), ctx):
                sides.add("lo")
            if not prove(B.cmp("<=", d.hi, hi), ctx):
                sides.add("hi")
            if sides:
                guards[k] = sides
        else:
            pred = B.conj([B.cmp("<=", B.const(0), d.pt),
                           B.cmp("<", d.pt, hi)])
            if not prove(pred, ctx):
                raise fail(s0, f"the window {window!r} may be out of bounds "
                           f"of '{w.buf}' (cannot prove {expr_to_str(pred)})")
    return guards


def _check_strides(proc, blk, w: Window, env0, fail):
    """No stride of the buffer that the block reads changes: the block's
    ``stride(buf, d)``, ``stride(v, k)`` of a window name ``v`` of it, and
    a callee that reads strides (``reads_strides``) passed a window of it
    see the staged buffer's strides after the rewrite. The staged buffer
    is dense over the window's slices, so a stride is kept exactly when it
    provably equals the product of the extents of the later slices (a
    dimension the window fixes to a point has no stride there)."""
    ir = proc.ir()
    shape = T.shape(w.type)
    ivl = w.slices()
    first = blk.paths()[0]
    known = {}

    def prod(es):
        out = B.const(1)
        for e in es:
            out = B.mul(out, e)
        return out

    def changed(d):
        if d not in known:
            if d not in ivl:
                known[d] = True
            else:
                later = [B.sub(w.dims[k].hi, w.dims[k].lo)
                         for k in ivl[ivl.index(d) + 1:]]
                if isinstance(w.type, IR.Tensor) and not w.type.is_window:
                    old = prod(shape[d + 1:])   # dense: row-major
                else:
                    old = IR.StrideExpr(w.buf, d, type=IR.Stride)
                known[d] = not prove_at(proc, first, B.cmp(
                    "==", simplify_expr(old, env0),
                    simplify_expr(prod(later), env0)))
        return known[d]

    refuse_changed_stride_reads(
        ir, w.buf, len(shape), (blk.stmts, blk.parent, blk.field, blk.lo),
        changed, lambda plural: f"differ{'' if plural else 's'} in the "
        f"staged buffer; cannot stage it", fail)


def _check_windows_not_used_after(ir, blk, derived, fail):
    """A window statement at the top level of the block binds its name for
    the rest of the enclosing block; one viewing the buffer is re-pointed
    at the staged copy, so it may not be used after the block (the copy is
    stored back and dead there). The check of ``replace``: names the block
    binds, used by the statements after it."""
    bound = {s.name: s for s in blk.stmts
             if isinstance(s, IR.WindowStmt) and s.name in derived}
    if not bound:
        return
    later = used_syms(tuple(C.get_list(ir, blk.parent, blk.field)[blk.hi:]))
    for n in sorted(set(bound) & later, key=lambda x: x.id):
        raise fail(bound[n], f"the window '{n.name}' is bound in the block "
                   f"and used after it; staging would leave it viewing the "
                   f"staged copy (include its uses in the block)")


# ----------------------------------------------------------------------
# 3. build
def _restage_body(blk, w: Window, new, new_type, derived, env0,
                  outside=frozenset()):
    """The block with every access to the buffer moved to the new buffer
    (indices shifted by the window's lower bounds), except the accesses
    ``outside`` (keys of ``survey_block``) that lie apart from the window."""
    buf, dims, ivl = w.buf, w.dims, w.slices()

    def shift(k, e):
        # typed as the frontend types ``e - lo`` (a literal minus an index
        # is an index), so that the result reads back the same
        lo = dims[k].lo
        return simplify_expr(B.binop("-", e, lo, control_arith_type(e, lo),
                                     e.srcinfo), env0)

    def re_idx(idx):
        return tuple(shift(k, idx[k]) for k in ivl)

    def write(n):
        if ("p", n.idx) in outside:
            return None
        return n.update(name=new, idx=re_idx(n.idx))

    def read(n):
        if n.idx:
            if ("p", n.idx) in outside:
                return None
            return n.update(name=new, idx=re_idx(n.idx))
        return n.update(name=new, type=new_type)  # whole buffer

    def window(n):
        if ("w", n.idx) in outside:
            return None
        acc = []
        for k in ivl:
            a = n.idx[k]
            if isinstance(a, IR.Interval):
                acc.append(a.update(lo=shift(k, a.lo), hi=shift(k, a.hi)))
            else:
                acc.append(a.update(pt=shift(k, a.pt)))
        return make_window(new, new_type, acc, n.srcinfo)

    def stride(n):
        return n.update(name=new, dim=ivl.index(n.dim))
    body = tuple(map_accesses(s, buf, write=write, read=read, window=window,
                              stride=stride) for s in blk.stmts)
    # window names made inside the block now view the new buffer: their
    # whole-window uses (call arguments) take the new window type
    wtypes = {s.name: s.rhs.type for s in walk_stmts(body)
              if isinstance(s, IR.WindowStmt) and s.name in derived}
    return retype_window_reads(body, wtypes)


def _copy_nest(w: Window, extents, names, env0, si, stmt_of):
    """A loop nest over the window; ``stmt_of(new_idx, buf_idx)`` is its
    body. Each nest binds its own iterator symbols."""
    iters = [Sym(nm) for nm in names]
    new_idx = tuple(B.index_read(it, si) for it in iters)
    buf_idx, j = [], 0
    for d in w.dims:
        if isinstance(d, Slice):
            buf_idx.append(simplify_expr(B.add(d.lo, new_idx[j], si), env0))
            j += 1
        else:
            buf_idx.append(d.pt)
    s = stmt_of(new_idx, tuple(buf_idx))
    for it, ext in reversed(list(zip(iters, extents))):
        s = B.for_loop(it, B.const(0, si), ext, (s, ), IR.Seq, si)
    return s


# ----------------------------------------------------------------------
def stage_mem(proc, block, window, new_name, accum=False):
    blk = C.resolve_block(proc, block, OP)
    C.check_identifier(proc, new_name, OP, "buffer name")
    ir = proc.ir()
    s0 = blk.stmts[0]

    def fail(stmt, msg):
        return C.reject(proc, stmt, f"{OP}: {msg}")

    w = _parse_window(proc, blk, window)
    if not T.is_tensor_or_window(w.type):
        raise fail(s0, f"'{w.buf}' is not a tensor or window")
    buf, elem = w.buf, T.basetype(w.type)
    first_path = blk.paths()[0]
    env0 = env_at(ir, first_path)
    _check_new_name(proc, blk, new_name, fail)
    # the window's offsets and extents are evaluated before the block (the
    # allocation, the load), at every access in it (the shifted indices)
    # and after it (the store)
    C.check_moved(proc, OP, [C.Moved(
        "window offsets", s0, tuple(e for d in w.dims for e in (
            (d.lo, d.hi) if isinstance(d, Slice) else (d.pt, ))),
        blk.stmts, f"the window {window!r}", "the block")])
    guards = _check_in_bounds(proc, first_path, w, window, fail, s0)
    survey = survey_block(proc, blk, w, window, fail, guards)
    _check_strides(proc, blk, w, env0, fail)
    _check_windows_not_used_after(ir, blk, survey.derived, fail)
    kinds = survey.kinds
    if not kinds:
        raise fail(s0, f"no access of the block to '{buf}' is covered by "
                   f"the window {window!r} (accesses apart from it keep "
                   f"using '{buf}'): nothing to stage")
    trunc = accum and truncating_reduce(blk.stmts, {buf} | survey.derived)
    if trunc:
        raise fail(trunc, f"accum=True: '{expr_to_str(trunc.rhs)}' is a "
                   f"floating-point value reduced into '{buf}' "
                   f"({T.type_name(elem)}), which truncates and saturates at "
                   f"each step; accumulating it in a zero-initialised copy "
                   f"and adding that back would change the result")
    if accum and kinds - {"reduce"}:
        bad = " and ".join(sorted(kinds - {"reduce"}))
        raise fail(s0, f"accum=True requires the block to only reduce (+=) "
                   f"into '{buf}', but it also does: {bad}")

    si = s0.srcinfo
    ivl = w.slices()
    extents = tuple(simplify_expr(B.sub(w.dims[k].hi, w.dims[k].lo), env0)
                    for k in ivl)
    new = Sym(new_name)
    new_type = IR.Tensor(extents, False, elem) if ivl else elem
    alloc = IR.Alloc(new, new_type, DRAM, srcinfo=si)
    body = _restage_body(blk, w, new, new_type, survey.derived, env0,
                         survey.outside)

    used = {x.name for x in _all_syms(ir)} | {new_name}
    names = [_fresh("i", used).name for _ in ivl]

    def nest(stmt_of):
        return _copy_nest(w, extents, names, env0, si, stmt_of)

    def guarded(stmt_of, zero=False):
        """``stmt_of`` run only for the elements inside the buffer (a
        guarded window); ``zero``: the others of the new buffer get 0."""
        if not guards:
            return stmt_of

        def body(ni, bi):
            cond = _inside(w, guards, ni, env0, si)
            orelse = ((IR.Assign(new, elem, ni, IR.Const(
                0.0, type=IR.Num, srcinfo=si), srcinfo=si), ) if zero
                else ())
            return IR.If(cond, (stmt_of(ni, bi), ), orelse, srcinfo=si)
        return body

    def rd(name, idx):
        return IR.Read(name, idx, type=elem, srcinfo=si)

    before, after = [alloc], []
    reads = bool(kinds & {"read", "reduce"})
    writes = bool(kinds & {"write", "reduce"})
    if accum:
        before.append(nest(lambda ni, bi: IR.Assign(
            new, elem, ni, IR.Const(0.0, type=IR.Num, srcinfo=si),
            srcinfo=si)))
        after.append(nest(guarded(lambda ni, bi: IR.Reduce(
            buf, elem, bi, rd(new, ni), srcinfo=si))))
    else:
        # load unless the block overwrites the whole window before it
        # reads any of it (then neither it nor the store sees old values)
        if (reads and not writes) or (writes and not overwritten_first(
                proc, blk, w, survey.top_kinds, survey.outside, env0,
                survey.derived)):
            bad = elem is IR.BF16 and bf16_refusal(proc, blk, w, survey,
                                                   writes)
            if bad:
                raise fail(bad[0], f"'{buf}' is bf16: {bad[1]}")
            before.append(nest(guarded(lambda ni, bi: IR.Assign(
                new, elem, ni, rd(buf, bi), srcinfo=si), zero=True)))
        if writes:
            after.append(nest(guarded(lambda ni, bi: IR.Assign(
                buf, elem, bi, rd(new, ni), srcinfo=si))))

    # 4. record
    new_stmts = tuple(before) + body + tuple(after)
    new_ir = C.replace_block_at(ir, blk.parent, blk.field, blk.lo, blk.hi,
                                new_stmts)
    fwd = C.forward_compose(
        C.forward_insert(blk.parent, blk.field, blk.lo, len(before)),
        C.forward_insert(blk.parent, blk.field, blk.hi + len(before),
                         len(after)))
    return derive(proc, new_ir, OP, forward=fwd)


def _inside(w: Window, guards, new_idx, env0, si):
    """The condition that the staged element ``new_idx`` lies inside the
    buffer, on the guarded sides only: ``i < size - lo`` for the upper
    side, ``-lo <= i`` for the lower (the shape masked instructions'
    specifications test, ``i < m``)."""
    conds = []
    shape = T.shape(w.type)
    for j, k in enumerate(w.slices()):
        sides = guards.get(k, ())
        lo = w.dims[k].lo
        if "lo" in sides:
            conds.append(B.cmp("<=", simplify_expr(
                B.sub(B.const(0, si), lo, si), env0), new_idx[j], si))
        if "hi" in sides:
            conds.append(B.cmp("<", new_idx[j], simplify_expr(
                B.sub(shape[k], lo, si), env0), si))
    return B.conj(conds, si)


def _all_syms(ir):
    out = {a.name for a in ir.args}
    for s in walk_stmts(ir.body):
        for f in ("name", "iter"):
            v = getattr(s, f, None) if f in s._fields else None
            if isinstance(v, Sym):
                out.add(v)
    return out
