"""``unroll_buffer(buffer, dim)``: one buffer per index of a dimension.

    t : T[a, 4, b]             t_0 : T[a, b]  ...  t_3 : T[a, b]
    t[x, 2, y]          ~>     t_2[x, y]

Every use of ``t`` must name the dimension ``dim`` with an index that is a
constant (after simplification with the ranges known at the use, e.g. after
``unroll``); then each use denotes exactly one of the new buffers and reads
or writes the same element there. Anything else is rejected: a non-constant
index, a slice of that dimension in a window, the whole buffer passed to a
call, or a read of the stride of a dimension at or before ``dim`` (its
value changes: the new buffers lack dimension ``dim``): by
``stride(t, d)``, by ``stride(w, k)`` of a window name ``w`` of ``t``, or
by a callee that reads strides (``stride`` in its body or preconditions,
or in its own callees) and receives a window of ``t`` (``t[0:4, 1]`` has
the stride of dimension 0, which becomes 1 in ``t_1[0:4]``). A window
whose slices all lie after ``dim`` keeps its strides.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.simplify import const_value, env_at, simplify_expr, with_loop
from ..core_ir.syms import Sym
from ..core_ir.traversal import walk_stmts
from ..core_ir.visitors import map_accesses
from ..provenance import derive
from . import _common as C
from ._buffer_uses import refuse_changed_stride_reads

OP = "unroll_buffer"


class _Bad(Exception):
    def __init__(self, why):
        self.why = why


def unroll_buffer(proc, buffer, dim):
    buf, n = C.resolve_alloc_dim(proc, buffer, dim, OP, "unrolled")
    a = buf.node
    ir = proc.ir()
    shape = T.shape(a.type)

    def fail(s, msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    *parent, (field, index) = buf.loc
    parent = tuple(parent)
    scope = C.get_list(ir, parent, field)[index + 1:]
    _check_strides(ir, a, dim, parent, field, index, scope, fail)
    rest = shape[:dim] + shape[dim + 1:]
    elem = T.basetype(a.type)
    new_t = IR.Tensor(rest, False, elem) if rest else elem
    used = {s.name.name for s in walk_stmts(ir.body)
            if isinstance(s, (IR.Alloc, IR.WindowStmt))} | \
        {x.name.name for x in ir.args} | \
        {s.iter.name for s in walk_stmts(ir.body) if isinstance(s, IR.For)}
    names = []
    for k in range(n):
        nm = f"{a.name.name}_{k}"
        while nm in used:
            nm += "_"
        used.add(nm)
        names.append(Sym(nm))

    def pick(e, env):
        v = const_value(e, env)
        if not isinstance(v, int):
            raise _Bad(f"the index {_txt(simplify_expr(e, env))} of dimension"
                       f" {dim} of '{a.name}' is not a constant")
        if not 0 <= v < n:  # the frontend proved bounds; be defensive
            raise _Bad(f"the index {v} is out of bounds of dimension {dim}")
        return names[v]

    def fix_expr(e, env):
        def read(x):
            if not x.idx:
                raise _Bad(f"'{a.name}' is used as a whole buffer")
            i = x.idx
            return x.update(name=pick(i[dim], env),
                            idx=i[:dim] + i[dim + 1:])

        def window(x):
            w = x.idx[dim]
            if not isinstance(w, IR.Point):
                raise _Bad(f"a window takes a slice of dimension {dim} of"
                           f" '{a.name}'")
            nm = pick(w.pt, env)
            acc = x.idx[:dim] + x.idx[dim + 1:]
            return x.update(name=nm, idx=acc, type=x.type.update(
                src_type=new_t, src_buf=nm, idx=acc))

        def stride(x):
            if x.dim <= dim:
                raise _Bad(f"stride({a.name}, {x.dim}) changes when "
                           f"dimension {dim} is unrolled")
            return x.update(name=names[0], dim=x.dim - 1)
        return map_accesses(e, a.name, read=read, window=window,
                            stride=stride)

    def go(stmts, env):
        out = []
        for s in stmts:
            try:
                if isinstance(s, IR.For):   # (bounds may read a stride)
                    s = s.update(lo=fix_expr(s.lo, env),
                                 hi=fix_expr(s.hi, env),
                                 body=go(s.body, with_loop(env, s.iter, s.lo,
                                                           s.hi)))
                elif isinstance(s, IR.If):  # (so may the condition)
                    s = s.update(cond=fix_expr(s.cond, env),
                                 body=go(s.body, env),
                                 orelse=go(s.orelse, env))
                else:
                    if isinstance(s, (IR.Assign, IR.Reduce)) and \
                            s.name == a.name:
                        s = s.update(name=pick(s.idx[dim], env),
                                     idx=s.idx[:dim] + s.idx[dim + 1:])
                    s = fix_expr(s, env)
            except _Bad as b:
                if not hasattr(b, "stmt"):  # the innermost statement
                    b.stmt = s
                raise
            out.append(s)
        return tuple(out)

    try:
        new_scope = go(scope, env_at(ir, buf.loc))
    except _Bad as b:
        raise fail(getattr(b, "stmt", a), f"{b.why}; cannot unroll it")
    allocs = tuple(IR.Alloc(nm, new_t, a.mem, srcinfo=a.srcinfo)
                   for nm in names)
    new_ir = C.replace_block_at(ir, parent, field, index,
                                index + 1 + len(scope), allocs + new_scope)
    return derive(proc, new_ir, OP,
                  forward=C.forward_replace(buf.loc, len(allocs)))


def _check_strides(ir, a, dim, parent, field, index, scope, fail):
    """No read of the stride of a dimension at or before ``dim`` (module
    docstring)."""
    refuse_changed_stride_reads(
        ir, a.name, len(T.shape(a.type)), (scope, parent, field, index + 1),
        lambda d: d <= dim,
        lambda plural: f"change{'' if plural else 's'} when dimension {dim} "
        f"is unrolled; cannot unroll it", fail)


def _txt(e):
    try:
        from ..core_ir.printer import expr_to_str
        return expr_to_str(e)
    except Exception:  # never let the printer hide the real error
        return repr(e)

