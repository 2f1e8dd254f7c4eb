"""``set_precision(buffer, typ)``: ``a : T0`` becomes ``a : T``.

Changing an element type is a change of meaning the user asks for (like a
cast at every access: i8 wraps where f32 did not, f64 rounds differently),
so there is no equivalence to prove, and the result is recorded as derived
from the procedure but NOT equivalent to it (``is_eq`` is False and
``call_eqv`` refuses to swap one for the other); what must hold is that
the program stays well-typed. Every access, window and
window statement of the buffer is re-typed, data arithmetic types are
recomputed with the frontend's rule, and every call that receives the buffer
is re-checked against its callee (element types must match unless the
parameter is ``R``).
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.traversal import walk_stmts
from ..core_ir.visitors import map_accesses
from ..core_ir.typerules import (arg_memory, buffer_memories,
                                  call_arg_problem)
from ..provenance import derive
from . import _common as C
from ._precision import rejoin_type


def _parse_type(proc, typ, op):
    t = typ
    if isinstance(typ, str):
        t = T.TYPE_BY_NAME.get(typ)
    elif hasattr(typ, "ir_type"):  # the f64, f32, ... markers
        t = typ.ir_type
    if t not in T.DATA_TYPES:
        raise C.scheduling_error(
            proc, None, f"{op}: expected a data type ('f32', f64, ...), got "
            f"{typ!r}")
    return t


def _retype(t, new):
    """``t`` (scalar, tensor, window type) with element type ``new``."""
    if isinstance(t, IR.Tensor):
        return t.update(type=new)
    if isinstance(t, IR.WindowType):
        return t.update(src_type=_retype(t.src_type, new),
                        as_tensor=_retype(t.as_tensor, new))
    if t in T.DATA_TYPES:
        return new
    return t


def retype_accesses(stmts, names, new):
    """Statements with every access to ``names`` re-typed to element ``new``
    and the types of data arithmetic recomputed."""
    def retype(n):
        return n.update(type=_retype(n.type, new))
    names = set(names)
    return tuple(map_accesses(s, names, write=lambda n: n.update(type=new),
                              read=retype, window=retype,
                              stride=rejoin_type, other=rejoin_type)
                 for s in stmts)


def set_precision(proc, buffer, typ):
    op = "set_precision"
    buf = C.resolve_buffer(proc, buffer, op)
    new = _parse_type(proc, typ, op)
    node = buf.node if buf.kind != "arg" else None
    if buf.kind == "window":
        raise C.scheduling_error(
            proc, node, f"{op}: '{buf.sym}' is a window; set the precision of "
            f"the buffer it views")
    if not T.is_data(buf.node.type):
        raise C.scheduling_error(
            proc, node, f"{op}: '{buf.sym}' is a control value, not data")
    ir = proc.ir()
    if buf.kind == "arg":
        args = list(ir.args)
        args[buf.loc] = buf.node.update(type=_retype(buf.node.type, new))
        scope = ir.body
        names = {buf.sym}
    else:
        *parent, (field, i) = buf.loc
        scope = C.get_list(ir, tuple(parent), field)[i + 1:]
        names = {buf.sym}
    for s in walk_stmts(scope):
        if isinstance(s, IR.WindowStmt) and s.rhs.name in names:
            names.add(s.name)
    try:
        if buf.kind == "arg":
            new_ir = ir.update(args=tuple(args),
                               body=retype_accesses(ir.body, names, new))
        else:
            alloc = buf.node.update(type=_retype(buf.node.type, new))
            new_ir = C.replace_block_at(
                ir, tuple(parent), field, i, i + 1 + len(scope),
                (alloc, ) + retype_accesses(scope, names, new))
    except TypeError as e:  # an extern refusing the new type
        raise C.scheduling_error(proc, node, f"{op}: {e}") from None
    # re-check the calls that receive the buffer
    mems = buffer_memories(new_ir)
    for s in walk_stmts(new_ir.body):
        if not isinstance(s, IR.Call):
            continue
        for param, a in zip(s.f.args, s.args):
            if isinstance(a, (IR.Read, IR.WindowExpr)) and a.name in names:
                why = call_arg_problem(param, a, arg_memory(a, mems))
                if why:
                    raise C.scheduling_error(
                        proc, s, f"{op}: after changing '{buf.sym}' to "
                        f"{T.TYPE_NAMES[new]}, the call to '{s.f.name}' is "
                        f"ill-typed: {why}")
    same = new == _element_type(buf.node.type)
    return derive(proc, new_ir, op, equiv_mod=frozenset() if same else None)


def _element_type(t):
    if isinstance(t, IR.Tensor):
        return t.type
    if isinstance(t, IR.WindowType):
        return _element_type(t.as_tensor)
    return t
