"""``specialize(block, conds)``: one copy of a block per condition.

``s`` becomes ``if c1: s elif c2: s ... else: s`` (each copy with fresh
binders), so later rewrites can schedule each case differently. Every
branch runs the same code, so the result is equivalent whatever the
conditions are; what must hold is that it is well formed:

* each condition is a bool *control* expression over names in scope at the
  block (control arguments, enclosing iterators, config fields); they are
  evaluated where the block starts, before it runs, with no side effects;
* no allocation or window bound at the top level of the block is used after
  it (inside an ``if`` it would go out of scope).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import free_vars, fresh_copy
from . import _common as C
from ..frontend import fragment as F
from .add_guard import _parse_cond


def specialize(proc, block, conds):
    b = C.resolve_block(proc, block, "specialize")
    first = b.stmts[0]

    def err(msg):
        return C.scheduling_error(proc, first, "specialize: " + msg)

    if isinstance(conds, str):
        conds = [conds]
    if not isinstance(conds, (list, tuple)) or not conds:
        raise err(f"conds must be a condition string or a non-empty list of "
                  f"them, got {conds!r}")
    bound = {s.name for s in b.stmts
             if isinstance(s, (IR.Alloc, IR.WindowStmt))}
    rest = C.get_list(proc.ir(), b.parent, b.field)[b.hi:]
    used = bound & free_vars(tuple(rest))
    if used:
        raise err("the block binds " + ", ".join(sorted(v.name for v in used))
                  + ", used after it; inside an if it would go out of scope")
    scope = F.names_at(proc.ir(), b.parent, b.field, b.lo)
    parsed = []
    for c in conds:
        if not isinstance(c, str):
            raise err(f"each condition must be a string, got {c!r}")
        parsed.append(_parse_cond(proc, c, scope, first, err))
    # build from the innermost else outward; the first branch keeps the
    # original statements (cursors follow them there)
    tail = fresh_copy(b.stmts)
    for c in reversed(parsed[1:]):
        tail = (IR.If(c, fresh_copy(b.stmts), tail, srcinfo=first.srcinfo), )
    new = IR.If(parsed[0], b.stmts, tail, srcinfo=first.srcinfo)
    new_ir = C.replace_block_at(proc.ir(), b.parent, b.field, b.lo, b.hi,
                                (new, ))
    return proc._derive(new_ir, "specialize", forward=C.forward_wrap(
        b.parent, b.field, b.lo, b.hi))
