"""``delete_pass()``: remove ``pass`` statements and code that does nothing.

Removed: every ``pass``; loops whose body (after removal) is only ``pass``;
``if`` statements both of whose branches are only ``pass``. A block that
would become empty becomes a single ``pass`` (the IR never has empty bodies).

Why this is equivalent: loop bounds and ``if`` conditions are control
expressions, which have no side effects and cannot fail (division only by
positive constants), so a loop or ``if`` that executes nothing can go.
Always safe; no analysis needed.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..provenance import derive
from . import _common as C


def delete_pass(proc):
    ir = proc.ir()
    table = {}
    body = _clean_block(ir.body, ir.srcinfo, (), "body", (), table)
    # every statement has an entry: its new path, or None when removed
    return derive(proc, ir.update(body=body), "delete_pass",
                  forward=C.forward_table(table))


def _is_empty(block) -> bool:
    return all(isinstance(s, IR.Pass) for s in block)


def _clean_block(block, srcinfo, old_parent, field, new_parent, table):
    """``block`` (the list ``field`` of the statement at ``old_parent``,
    which will be at ``new_parent``) cleaned; ``table`` gets the new path
    of each of its statements (None: removed) and of what they contain."""
    out = []
    for k, s in enumerate(block):
        old_path = old_parent + ((field, k), )
        new_path = new_parent + ((field, len(out)), )
        inner = {}
        s = _clean_stmt(s, old_path, new_path, inner)
        if s is None:
            table[old_path] = None
        else:
            table[old_path] = new_path
            table.update(inner)
            out.append(s)
    if not out:
        return (IR.Pass(srcinfo=block[0].srcinfo if block else srcinfo), )
    return tuple(out)


def _clean_stmt(s, old_path, new_path, table):
    """The statement with its blocks cleaned, or None if it does nothing."""
    if isinstance(s, IR.Pass):
        return None
    if isinstance(s, IR.For):
        if _is_empty(s.body):
            return None
        body = _clean_block(s.body, s.srcinfo, old_path, "body", new_path,
                            table)
        if _is_empty(body):
            return None
        return s if body == s.body else s.update(body=body)
    if isinstance(s, IR.If):
        body = _clean_block(s.body, s.srcinfo, old_path, "body", new_path,
                            table)
        orelse = (_clean_block(s.orelse, s.srcinfo, old_path, "orelse",
                               new_path, table) if s.orelse else ())
        if _is_empty(body) and _is_empty(orelse):
            return None
        if orelse and _is_empty(orelse):
            orelse = ()
        if body == s.body and orelse == s.orelse:
            return s
        return s.update(body=body, orelse=orelse)
    return s
