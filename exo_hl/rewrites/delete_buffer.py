"""``delete_buffer(alloc)``: remove an allocation nothing uses.

    t: T
    s          ~>    s        (t not mentioned in s)

The only check: the rest of the allocation's block (its scope) mentions the
buffer nowhere, neither read, written, windowed nor passed to a call. A
buffer that is still written but never read is not deleted: remove the
writes first (``inline_assign``, ``eliminate_dead_code``), so that each
removal is checked on its own.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import used_syms
from . import _common as C

OP = "delete_buffer"


def delete_buffer(proc, alloc):
    buf = C.resolve_alloc(proc, alloc, OP, "only an allocation can be "
                          "deleted")
    ir = proc.ir()
    *parent, (field, k) = buf.loc
    parent = tuple(parent)
    block = C.get_list(ir, parent, field)
    for s in block[k + 1:]:
        if buf.sym in used_syms(s):
            raise C.scheduling_error(
                proc, s, f"{OP}: '{buf.sym.name}' is still used here")
    new_ir = C.replace_stmts_at(ir, buf.loc, ())
    if not C.get_list(new_ir, parent, field):
        new_ir = C.replace_block_at(new_ir, parent, field, 0, 0,
                                    (IR.Pass(srcinfo=buf.node.srcinfo), ))
        fwd = C.forward_replace(buf.loc, 1)
    else:
        fwd = C.forward_delete(parent, field, k, k + 1)
    return proc._derive(new_ir, OP, forward=fwd)
