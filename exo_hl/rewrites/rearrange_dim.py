"""``rearrange_dim(buffer, permute_vector)``: permute the dimensions of an
allocated buffer (Exo's name and signature).

    t : T[n0, n1, n2]              t : T[n2, n0, n1]
    t[a, b, c]           ~>        t[c, a, b]          (permute_vector [2, 0, 1])

New dimension ``k`` is old dimension ``permute_vector[k]``. Every access is
re-indexed the same way, so each reads and writes the element it did
before, only stored elsewhere: the program's meaning cannot change, as long
as every use of the buffer can be re-indexed. That is the whole check:
* ``permute_vector`` is a permutation of ``0 .. rank - 1``;
* the buffer is an allocation (an argument's layout is the caller's);
* no call receives the whole buffer (its shape would change under the
  callee) and no window of it takes two or more slices whose order the
  permutation changes (the window's own shape would be transposed);
  a window whose slices keep their order views the same elements, and
  each callee's stride preconditions are re-proven on the result;
* no stride that the permutation changes is read: by ``stride(t, d)``,
  by ``stride(w, k)`` of a window name ``w`` of ``t``, or by a callee that
  reads strides (``stride`` in its body or preconditions, or in its own
  callees) and receives a window of ``t``. Old dimension ``d`` keeps its
  row-major stride (the product of the extents after it) when the new
  dimensions after its new place have the same product: always when
  they are the old dimensions after ``d``, else if proven; a window sees
  the strides of the dimensions it slices;
* the buffer's memory can hold the new shape (e.g. a vector register's
  last dimension must stay one register).
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.windows import make_window
from ..core_ir.traversal import walk_stmts
from ..core_ir.visitors import map_accesses
from ..effects import api as EA
from ..provenance import derive
from . import _common as C
from ._buffer_uses import refuse_changed_stride_reads
from ._check import check_allocatable

OP = "rearrange_dim"


def _locate(proc, buffer):
    return C.resolve_alloc(proc, buffer, OP, "only an allocation's "
                           "dimensions can be rearranged: an argument's "
                           "layout is the caller's")


def _check_permutation(proc, a, perm):
    rank = len(T.shape(a.type))
    if rank == 0:
        # the empty permutation would pass the check below; a scalar has
        # no dimensions to rearrange
        raise C.scheduling_error(
            proc, a, f"{OP}: '{a.name}' is a scalar; it has no dimensions "
            f"to rearrange")
    ok = (isinstance(perm, (list, tuple))
          and all(isinstance(k, int) and not isinstance(k, bool)
                  for k in perm)
          and sorted(perm) == list(range(rank)))
    if not ok:
        raise C.scheduling_error(
            proc, a, f"{OP}: {perm!r} is not a permutation of the "
            f"{rank} dimensions of '{a.name}' (expected each of "
            f"0..{rank - 1} once)")
    return tuple(perm)


def rearrange_dim(proc, buffer, permute_vector):
    # 1. locate
    buf = _locate(proc, buffer)
    a = buf.node
    ir = proc.ir()
    perm = _check_permutation(proc, a, permute_vector)
    *parent, (field, index) = buf.loc
    parent = tuple(parent)
    scope = C.get_list(ir, parent, field)[index + 1:]

    def fail(s, msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    # 2. check
    shape = T.shape(a.type)
    new_t = a.type.update(hi=tuple(shape[k] for k in perm))
    new_a = a.update(type=new_t)
    check_allocatable(proc, new_a, a.mem, OP)
    for s in walk_stmts(scope):
        if isinstance(s, IR.Call) and perm != tuple(range(len(perm))):
            for arg in s.args:
                if isinstance(arg, IR.Read) and arg.name == a.name \
                        and not arg.idx:
                    raise fail(s, f"'{a.name}' is passed whole to "
                               f"'{s.f.name}'; permuting its dimensions "
                               f"would change the callee's view of it")
    _check_strides(ir, buf, perm, scope, fail)

    def permute(idx):
        return tuple(idx[k] for k in perm)

    def window(n):
        kept = [k for k in perm if isinstance(n.idx[k], IR.Interval)]
        if kept != sorted(kept):
            raise _Transposed(n)
        return make_window(a.name, new_t, permute(n.idx), n.srcinfo)

    # 3. build
    out = []
    for s in scope:
        try:
            out.append(map_accesses(
                s, a.name,
                write=lambda n: n.update(idx=permute(n.idx)),
                read=lambda n: n.update(idx=permute(n.idx)) if n.idx
                else None,
                window=window,
                stride=lambda n: n.update(dim=perm.index(n.dim))))
        except _Transposed as e:
            bad = next((x for x in walk_stmts((s, )) if e.args[0] in
                        _windows_of(x)), s)
            raise fail(bad, f"a window of '{a.name}' takes slices whose "
                       f"order the permutation {list(perm)} changes (the "
                       f"window itself would be transposed)") from None
    new_ir = C.replace_block_at(ir, parent, field, index,
                                index + 1 + len(scope), (new_a, ) + tuple(out))
    # 4. record
    return derive(proc, new_ir, OP)


def _check_strides(ir, buf, perm, scope, fail):
    """No read of a stride the permutation changes (module docstring)."""
    a = buf.node
    shape = T.shape(a.type)
    rank = len(shape)
    *parent, (field, index) = buf.loc
    known = {}

    def prod(ks):
        e = B.const(1)
        for k in ks:
            e = B.mul(e, shape[k])
        return e

    def kept(d):
        if d not in known:
            after = perm[perm.index(d) + 1:]
            known[d] = sorted(after) == list(range(d + 1, rank)) or \
                bool(EA.prove_at(ir, buf.loc, B.cmp(
                    "==", prod(after), prod(range(d + 1, rank)))))
        return known[d]

    refuse_changed_stride_reads(
        ir, a.name, rank, (scope, tuple(parent), field, index + 1),
        lambda d: not kept(d),
        lambda plural: f"the permutation {list(perm)} changes", fail)


class _Transposed(Exception):
    pass


def _windows_of(s):
    """The window expressions a statement holds itself (not its body)."""
    from ..core_ir.traversal import walk
    from ._buffer_uses import stmt_exprs
    exprs = list(stmt_exprs(s))
    if isinstance(s, IR.WindowStmt):
        exprs.append(s.rhs)
    if isinstance(s, IR.Call):
        exprs += list(s.args)
    return [n for e in exprs for n in walk(e) if isinstance(n, IR.WindowExpr)]
