"""``expand_dim(buffer, alloc_dim, indexing_expr)``: add a leading dimension.

    t : T[n...]          t : T[alloc_dim, n...]
    ... t[a...] ...  ~>  ... t[indexing_expr, a...] ...

Typically ``indexing_expr`` is an enclosing loop's variable, so that after
``lift_alloc`` every iteration keeps its own copy. Both expressions are
parsed at the allocation (so they can only name variables bound there;
``indexing_expr`` may read config fields too), and
each use of the buffer simply gains the coordinate ``indexing_expr``: the
program reads and writes the same values in one slice of the bigger buffer.

Checks: ``alloc_dim`` is a positive integer at the allocation,
``0 <= indexing_expr < alloc_dim`` holds at every access (proven in each
access's context), and ``indexing_expr`` has one value throughout the
buffer's scope (it reads no config field the scope may write). Whole-buffer uses (call arguments) become a window
``t[indexing_expr, :, ...]``, which only window parameters accept; a data
scalar passed to a call cannot gain a dimension, so that is rejected.
A local scalar starts at zero, a fresh array does not (docs/semantics.md):
a scalar that may be read before it is written (``zero_start_read``) is
rejected, as its expansion would read an uninitialised element.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.paths import walk_with_paths
from ..core_ir.windows import make_window
from ..core_ir.printer import expr_to_str
from ..core_ir.simplify import env_at, simplify_expr
from ..core_ir.traversal import walk, walk_stmts
from ..core_ir.visitors import map_accesses
from ..core_ir.buffers import zero_start_read, zero_start_refusal
from ..effects.api import prove_at
from ..provenance import derive
from . import _common as C
from ._expr_at import config_scope
from ._check import check_allocatable

OP = "expand_dim"


def _accesses(stmts, prefix, fld, start, name):
    """(path, stmt) of statements in a block that mention ``name``."""
    for p, s in walk_with_paths(stmts, prefix, fld, start):
        own = s.update(body=(), orelse=()) if isinstance(s, IR.If) else \
            s.update(body=()) if isinstance(s, IR.For) else s
        if any(getattr(n, "name", None) == name for n in walk(own)
               if isinstance(n, (IR.Read, IR.WindowExpr, IR.StrideExpr))) or \
                (isinstance(s, (IR.Assign, IR.Reduce)) and s.name == name):
            yield p, s


def expand_dim(proc, buffer, alloc_dim, indexing_expr):
    buf = C.resolve_alloc(proc, buffer, OP)
    ir = proc.ir()
    a = buf.node
    *parent, (field, index) = buf.loc
    parent = tuple(parent)

    def fail(s, msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    env = env_at(ir, buf.loc)
    dim = C.parse_expr_at(proc, alloc_dim, parent, field, index, OP)
    # the index may read config fields the scope does not write
    # (``check_moved`` below)
    idx = C.parse_expr_at(proc, indexing_expr, parent, field, index, OP,
                          scope=config_scope(ir))
    for what, e in (("alloc_dim", dim), ("indexing_expr", idx)):
        if not T.is_int_control(e.type):
            raise fail(a, f"{what} must be an integer control expression, "
                       f"got {expr_to_str(e)}")
    dim = simplify_expr(dim, env)
    idx = simplify_expr(idx, env)
    pos = B.cmp("<", B.const(0), dim)
    if not prove_at(proc, buf.loc, pos):
        raise fail(a, f"the new dimension {expr_to_str(dim)} may not be "
                   f"positive")
    in_range = B.conj([B.cmp("<=", B.const(0), idx), B.cmp("<", idx, dim)])
    scope = C.get_list(ir, parent, field)[index + 1:]
    # every access evaluates the new index: it must be the same everywhere
    C.check_moved(proc, OP, [C.Moved(
        "indices", a, (idx, ), scope,
        "indexing_expr",
        f"the statements in the scope of '{a.name}'")])
    if T.is_real_scalar(a.type):
        first = zero_start_read(scope, a.name)
        if first is not None:
            raise fail(first, zero_start_refusal(
                a.name, "as an array it would start uninitialised (set it "
                "to zero first to keep that)"))
    for p, s in _accesses(scope, parent, field, index + 1, a.name):
        if isinstance(s, IR.Call) and any(
                isinstance(x, IR.Read) and x.name == a.name and not x.idx
                and T.is_real_scalar(x.type) for x in s.args):
            raise fail(s, f"'{a.name}' is passed to '{s.f.name}' as a data "
                       f"scalar; it cannot gain a dimension")
        if not prove_at(proc, p, in_range):
            raise fail(s, f"cannot prove 0 <= {expr_to_str(idx)} < "
                       f"{expr_to_str(dim)} at this access to '{a.name}'")

    old_t = a.type
    new_t = IR.Tensor((dim, ) + T.shape(old_t), False, T.basetype(old_t))
    # a memory may take only some sizes (DRAM_STATIC: constants)
    check_allocatable(proc, a.update(type=new_t), a.mem, OP)
    si = a.srcinfo

    def full_window(n):
        acc = (IR.Point(idx, srcinfo=si), ) + tuple(
            IR.Interval(B.const(0), h, srcinfo=si)
            for h in T.shape(old_t))
        return make_window(a.name, new_t, acc, n.srcinfo)

    def add_index(n):
        return n.update(idx=(idx, ) + n.idx)

    def read(n):
        if n.idx or T.is_real_scalar(n.type):
            return add_index(n)
        return full_window(n)

    def window(n):
        acc = (IR.Point(idx, srcinfo=n.srcinfo), ) + n.idx
        return make_window(a.name, new_t, acc, n.srcinfo)

    new_scope = tuple(map_accesses(
        s, a.name, write=add_index, read=read, window=window,
        stride=lambda n: n.update(dim=n.dim + 1)) for s in scope)
    # whole-buffer arguments became windows: only window params take them
    for s in new_scope:
        for c in _walk_calls(s):
            for prm, arg in zip(c.f.args, c.args):
                if isinstance(arg, IR.WindowExpr) and arg.name == a.name \
                        and isinstance(prm.type, IR.Tensor) \
                        and not prm.type.is_window:
                    raise fail(c, f"'{a.name}' is passed whole to the dense "
                               f"tensor parameter '{prm.name}' of "
                               f"'{c.f.name}'; after expansion it would be a "
                               f"window")
    new_ir = C.replace_block_at(ir, parent, field, index, index + 1 +
                                len(scope),
                                (a.update(type=new_t), ) + new_scope)
    return derive(proc, new_ir, OP)


def _walk_calls(s):
    return [x for x in walk_stmts((s, )) if isinstance(x, IR.Call)]
