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

Safety (each failure is a ``SchedulingError`` naming the check):
* the window lies in bounds of the buffer at the block;
* the window covers every access of the block to the buffer, proven per
  access under its control context (enclosing loops, guards,
  preconditions);
* nothing in the block reaches the buffer through another name (a window
  statement made before the block, the viewed buffer of a window), which
  would bypass the staged copy;
* ``accum=True``: the block neither reads nor overwrites the buffer.
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
from ..core_ir.traversal import map_node, walk, walk_stmts
from ..core_ir.printer import expr_to_str
from ..effects.api import prove_at
from ..provenance import derive
from . import _common as C

OP = "stage_mem"


# ----------------------------------------------------------------------
# what callees do with a buffer parameter
def param_uses(callee, k, _seen=None) -> frozenset:
    """Kinds of access ('read', 'write', 'reduce') the procedure ``callee``
    makes to its ``k``-th parameter, through windows and nested calls."""
    seen = _seen if _seen is not None else set()
    key = (id(callee), k)
    if key in seen:
        return frozenset()
    seen.add(key)
    names = {callee.args[k].name}
    for s in walk_stmts(callee.body):
        if isinstance(s, IR.WindowStmt) and s.rhs.name in names:
            names.add(s.name)
    kinds = set()
    for s in walk_stmts(callee.body):
        if isinstance(s, IR.Assign) and s.name in names:
            kinds.add("write")
        elif isinstance(s, IR.Reduce) and s.name in names:
            kinds.add("reduce")
        elif isinstance(s, IR.Call):
            for j, a in enumerate(s.args):
                if isinstance(a, (IR.Read, IR.WindowExpr)) and a.name in names:
                    kinds |= param_uses(s.f, j, seen)
        for e in _stmt_exprs(s):
            for n in walk(e):
                if isinstance(n, IR.Read) and n.name in names and n.idx:
                    kinds.add("read")
    return frozenset(kinds)


def _stmt_exprs(s):
    """The expressions of a statement itself (not of nested statements);
    call arguments that pass whole buffers/windows are left out."""
    if isinstance(s, (IR.Assign, IR.Reduce)):
        return tuple(s.idx) + (s.rhs, )
    if isinstance(s, IR.WriteConfig):
        return (s.rhs, )
    if isinstance(s, IR.If):
        return (s.cond, )
    if isinstance(s, IR.For):
        return (s.lo, s.hi)
    if isinstance(s, IR.WindowStmt):
        return tuple(x for w in s.rhs.idx for x in _w_exprs(w))
    if isinstance(s, IR.Call):
        out = []
        for a in s.args:
            if isinstance(a, IR.WindowExpr):
                out.extend(x for w in a.idx for x in _w_exprs(w))
            elif not (isinstance(a, IR.Read) and not a.idx):
                out.append(a)
        return tuple(out)
    return ()


def _w_exprs(w):
    return (w.lo, w.hi) if isinstance(w, IR.Interval) else (w.pt, )


def _stmts_with_paths(stmts, parent, field, lo):
    """(path, stmt) of every statement of a block, nested ones included."""
    def go(ss, prefix, fld, start):
        for i, s in enumerate(ss):
            p = prefix + ((fld, start + i), )
            yield p, s
            if isinstance(s, IR.For):
                yield from go(s.body, p, "body", 0)
            elif isinstance(s, IR.If):
                yield from go(s.body, p, "body", 0)
                yield from go(s.orelse, p, "orelse", 0)
    yield from go(stmts, tuple(parent), field, lo)


# ----------------------------------------------------------------------
def _parse_window(proc, blk, window):
    """``(buf_sym, buf_type, dims)`` with ``dims`` a list of
    ``('I', lo, hi)`` / ``('P', pt)`` per buffer dimension."""
    w = C.parse_expr_at(proc, window, blk.parent, blk.field, blk.lo, OP,
                        allow_window=True)
    if isinstance(w, IR.WindowExpr):
        dims = [("I", a.lo, a.hi) if isinstance(a, IR.Interval)
                else ("P", a.pt) for a in w.idx]
        return w.name, w.type.src_type, dims
    if isinstance(w, IR.Read) and w.idx:
        names = C.names_at(proc.ir(), blk.parent, blk.field, blk.lo)
        typ = names[w.name.name][1]
        return w.name, typ, [("P", i) for i in w.idx]
    raise C.scheduling_error(proc, blk.stmts[0],
                             f"{OP}: the window {window!r} must index a "
                             f"buffer, e.g. 'C[i0:i0+4, j]'")


def _roots(proc_ir):
    """Window-statement name -> the buffer it (transitively) views."""
    root = {}
    for s in walk_stmts(proc_ir.body):
        if isinstance(s, IR.WindowStmt):
            root[s.name] = root.get(s.rhs.name, s.rhs.name)
    return root


def _fresh(base, used):
    k = 0
    while f"{base}{k}" in used:
        k += 1
    used.add(f"{base}{k}")
    return Sym(f"{base}{k}")


def stage_mem(proc, block, window, new_name, accum=False):
    blk = C.resolve_block(proc, block, OP)
    C.check_identifier(proc, new_name, OP, "buffer name")
    ir = proc.ir()
    s0 = blk.stmts[0]

    def fail(stmt, msg):
        return C.scheduling_error(proc, stmt, f"{OP}: {msg}")

    buf, btype, dims = _parse_window(proc, blk, window)
    if not T.is_tensor_or_window(btype):
        raise fail(s0, f"'{buf}' is not a tensor or window")
    shape = T.shape(btype)
    elem = T.basetype(btype)
    first_path = blk.paths()[0]
    env0 = env_at(ir, first_path)

    # names: the new one must not be visible at or bound inside the block
    visible = set(C.names_at(ir, blk.parent, blk.field, blk.lo))
    inner = {getattr(s, "name", None) or getattr(s, "iter", None)
             for s in walk_stmts(blk.stmts)}
    inner = {x.name for x in inner if isinstance(x, Sym)}
    if new_name in visible or new_name in inner:
        raise fail(s0, f"the name '{new_name}' is already used")

    # 1. the window is in bounds of the buffer
    conds = []
    for d, hi in zip(dims, shape):
        if d[0] == "I":
            conds += [B.cmp("<=", B.const(0), d[1]),
                      B.cmp("<=", d[1], d[2]),
                      B.cmp("<=", d[2], hi)]
        else:
            conds += [B.cmp("<=", B.const(0), d[1]),
                      B.cmp("<", d[1], hi)]
    pred = B.conj(conds)
    if not prove_at(proc, first_path, pred):
        raise fail(s0, f"the window {window!r} may be out of bounds of "
                   f"'{buf}' (cannot prove {expr_to_str(pred)})")

    # 2. find every access of the block to the buffer, and aliases
    root = _roots(ir)
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

    def alias_check(path, s, name):
        if name in staged:
            return
        if root.get(name, name) == my_root:
            raise fail(s, f"the block accesses '{buf}' through another name "
                       f"'{name}' (aliasing); staging would bypass it")

    def cover(path, s, idx_pairs):
        """Prove each (kind, expr...) of an access is inside the window."""
        conds = []
        for k, (d, acc) in enumerate(zip(dims, idx_pairs)):
            if d[0] == "I":
                if acc[0] == "I":
                    conds += [B.cmp("<=", d[1], acc[1]),
                              B.cmp("<=", acc[2], d[2])]
                else:
                    conds += [B.cmp("<=", d[1], acc[1]),
                              B.cmp("<", acc[1], d[2])]
            else:
                if acc[0] == "I":
                    raise fail(s, f"the block takes a slice of dimension "
                               f"{k} of '{buf}' which the window "
                               f"fixes to a point")
                conds.append(B.cmp("==", acc[1], d[1]))
        pred = B.conj(conds)
        if not prove_at(proc, path, pred):
            raise fail(s, f"the window {window!r} does not cover this access "
                       f"to '{buf}' (cannot prove {expr_to_str(pred)})")

    for path, s in _stmts_with_paths(blk.stmts, blk.parent, blk.field,
                                     blk.lo):
        top = path[depth][1] - blk.lo
        if isinstance(s, (IR.Assign, IR.Reduce)):
            alias_check(path, s, s.name)
            if s.name in staged:
                note("write" if isinstance(s, IR.Assign) else "reduce")
                if s.name == buf:
                    cover(path, s, [("P", i) for i in s.idx])
        if isinstance(s, IR.Call):
            for k, a in enumerate(s.args):
                if isinstance(a, IR.WindowExpr) or (
                        isinstance(a, IR.Read) and not a.idx
                        and T.is_tensor_or_window(a.type)):
                    alias_check(path, s, a.name)
                    if a.name in staged:
                        note(*param_uses(s.f, k))
                        if a.name == buf and isinstance(a, IR.Read):
                            cover(path, s, [("I", B.const(0), h)
                                            for h in shape])
        if isinstance(s, IR.WindowStmt):
            alias_check(path, s, s.rhs.name)
        for e in _stmt_exprs(s) + ((s.rhs, ) if isinstance(s, IR.WindowStmt)
                                   else ()) + tuple(
                a for a in getattr(s, "args", ()) if isinstance(s, IR.Call)
                and isinstance(a, IR.WindowExpr)):
            for n in walk(e):
                if isinstance(n, IR.Read) and n.idx:
                    alias_check(path, s, n.name)
                    if n.name in staged:
                        note("read")
                        if n.name == buf:
                            cover(path, s, [("P", i) for i in n.idx])
                elif isinstance(n, IR.WindowExpr):
                    alias_check(path, s, n.name)
                    if n.name == buf:
                        cover(path, s, [("I", a.lo, a.hi)
                                        if isinstance(a, IR.Interval)
                                        else ("P", a.pt) for a in n.idx])
                elif isinstance(n, IR.StrideExpr):
                    alias_check(path, s, n.name)
                    if n.name == buf and dims[n.dim][0] == "P":
                        raise fail(s, f"stride({buf}, {n.dim}) names a "
                                   f"dimension the window fixes to a point")
    if not kinds:
        raise fail(s0, f"the block does not access '{buf}'")
    if accum and kinds - {"reduce"}:
        bad = " and ".join(sorted(kinds - {"reduce"}))
        raise fail(s0, f"accum=True requires the block to only reduce (+=) "
                   f"into '{buf}', but it also does: {bad}")

    # 3. build
    si = s0.srcinfo
    ivl = [k for k, d in enumerate(dims) if d[0] == "I"]
    extents = tuple(simplify_expr(B.sub(dims[k][2], dims[k][1]), env0)
                    for k in ivl)
    new = Sym(new_name)
    new_type = IR.Tensor(extents, False, elem) if ivl else elem
    alloc = IR.Alloc(new, new_type, DRAM, srcinfo=si)

    def shift(k, e):
        return simplify_expr(B.binop("-", e, dims[k][1], e.type
                                  if T.is_int_control(e.type) else IR.Index,
                                  e.srcinfo), env0)

    def re_idx(idx):
        return tuple(shift(k, idx[k]) for k in ivl)

    def fn(n):
        if isinstance(n, (IR.Assign, IR.Reduce)) and n.name == buf:
            return n.update(name=new, idx=re_idx(n.idx))
        if isinstance(n, IR.Read) and n.name == buf:
            if n.idx:
                return n.update(name=new, idx=re_idx(n.idx))
            return n.update(name=new, type=new_type)  # whole buffer
        if isinstance(n, IR.WindowExpr) and n.name == buf:
            acc = []
            for k in ivl:
                a = n.idx[k]
                if isinstance(a, IR.Interval):
                    acc.append(a.update(lo=shift(k, a.lo), hi=shift(k, a.hi)))
                else:
                    acc.append(a.update(pt=shift(k, a.pt)))
            return make_window(new, new_type, acc, n.srcinfo)
        if isinstance(n, IR.StrideExpr) and n.name == buf:
            return n.update(name=new, dim=ivl.index(n.dim))
        return None
    body = tuple(map_node(s, fn) for s in blk.stmts)
    # window names made inside the block now view the new buffer: their
    # whole-window uses (call arguments) take the new window type
    wtypes = {s.name: s.rhs.type for s in walk_stmts(body)
              if isinstance(s, IR.WindowStmt) and s.name in derived}
    if wtypes:
        body = tuple(map_node(s, lambda n: n.update(type=wtypes[n.name])
                              if isinstance(n, IR.Read) and not n.idx
                              and n.name in wtypes else None) for s in body)

    used = {x.name for x in _all_syms(ir)} | {new_name}
    names = [_fresh("i", used).name for _ in ivl]

    def nest(stmt_of):
        """A loop nest over the window; stmt_of(new_idx, buf_idx)."""
        iters = [Sym(nm) for nm in names]  # each nest binds its own symbols
        new_idx = tuple(IR.Read(it, (), type=IR.Index, srcinfo=si)
                        for it in iters)
        buf_idx, j = [], 0
        for k, d in enumerate(dims):
            if d[0] == "I":
                buf_idx.append(simplify_expr(
                    B.add(d[1], new_idx[j], si), env0))
                j += 1
            else:
                buf_idx.append(d[1])
        s = stmt_of(new_idx, tuple(buf_idx))
        for it, ext in reversed(list(zip(iters, extents))):
            s = B.for_loop(it, B.const(0, si), ext, (s, ), IR.Seq, si)
        return s

    def rd(name, idx):
        return IR.Read(name, idx, type=elem, srcinfo=si)

    before, after = [alloc], []
    reads = bool(kinds & {"read", "reduce"})
    writes = bool(kinds & {"write", "reduce"})
    if accum:
        before.append(nest(lambda ni, bi: IR.Assign(
            new, elem, ni, IR.Const(0.0, type=IR.Num, srcinfo=si),
            srcinfo=si)))
        after.append(nest(lambda ni, bi: IR.Reduce(
            buf, elem, bi, rd(new, ni), srcinfo=si)))
    else:
        # load unless the block overwrites the whole window before it
        # reads any of it (then neither it nor the store sees old values)
        if (reads and not writes) or (writes and not _overwritten_first(
                proc, blk, buf, dims, ivl, top_kinds)):
            before.append(nest(lambda ni, bi: IR.Assign(
                new, elem, ni, rd(buf, bi), srcinfo=si)))
        if writes:
            after.append(nest(lambda ni, bi: IR.Assign(
                buf, elem, bi, rd(new, ni), srcinfo=si)))
    new_stmts = tuple(before) + body + tuple(after)
    new_ir = C.replace_block_at(ir, blk.parent, blk.field, blk.lo, blk.hi,
                                new_stmts)
    fwd = C.forward_compose(
        C.forward_insert(blk.parent, blk.field, blk.lo, len(before)),
        C.forward_insert(blk.parent, blk.field, blk.hi + len(before),
                         len(after)))
    return derive(proc, new_ir, OP, forward=fwd)


def _all_syms(ir):
    out = {a.name for a in ir.args}
    for s in walk_stmts(ir.body):
        for f in ("name", "iter"):
            v = getattr(s, f, None) if f in s._fields else None
            if isinstance(v, Sym):
                out.add(v)
    return out


def _overwritten_first(proc, blk, buf, dims, ivl, top_kinds) -> bool:
    """True when the block provably assigns every location of the window
    before it reads any of them (so the old values need not be loaded):
    some top-level statement of the block overwrites the whole window
    (``_overwrites_window``) and neither it nor any statement before it
    reads, reduces into or passes the buffer for reading."""
    for k, s in enumerate(blk.stmts):
        if top_kinds[k] - {"write"}:
            return False  # reads old values (or we cannot tell)
        if top_kinds[k] and _overwrites_window(
                proc, blk.parent + ((blk.field, blk.lo + k), ), s, blk.stmts,
                buf, dims, ivl):
            return True
    return False


def _overwrites_window(proc, path, stmt, block, buf, dims, ivl) -> bool:
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
        if isinstance(s, IR.Assign) and s.name == buf:
            return _assign_covers(proc, s, block, dims, ivl, loops,
                                  affine_form)
        return False
    return visit(stmt, tuple(path), [])


def _assign_covers(proc, s, block, dims, ivl, loops, affine_form):
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
    for k in ivl:
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
        pred = B.conj([B.cmp("==", B.add(l.lo, rest), dims[k][1]),
                       B.cmp("==", B.add(l.hi, rest), dims[k][2])])
        if not prove_at(proc, p, pred):
            return False
        mapped[k] = x
    for x, (p, l) in loop_vars.items():
        if x in mapped.values():
            continue
        if not prove_at(proc, p, B.cmp("<", l.lo, l.hi)):
            return False
    return True
