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
from ..cursors import InvalidCursorError
from ..provenance import derive


def delete_pass(proc):
    ir = proc.ir()
    body = _clean_block(ir.body, ir.srcinfo)
    return derive(proc, ir.update(body=body), "delete_pass",
                  forward=_no_forward)


def _no_forward(path):
    """Statements are removed all over: old cursors are not carried over."""
    raise InvalidCursorError(f"delete_pass rebuilt the procedure; the "
                             f"statement at {path!r} is not tracked")


def _is_empty(block) -> bool:
    return all(isinstance(s, IR.Pass) for s in block)


def _clean_block(block, srcinfo):
    out = []
    for s in block:
        s = _clean_stmt(s)
        if s is not None:
            out.append(s)
    if not out:
        return (IR.Pass(srcinfo=block[0].srcinfo if block else srcinfo), )
    return tuple(out)


def _clean_stmt(s):
    """The statement with its blocks cleaned, or None if it does nothing."""
    if isinstance(s, IR.Pass):
        return None
    if isinstance(s, IR.For):
        if _is_empty(s.body):
            return None
        body = _clean_block(s.body, s.srcinfo)
        if _is_empty(body):
            return None
        return s if body == s.body else s.update(body=body)
    if isinstance(s, IR.If):
        body = _clean_block(s.body, s.srcinfo)
        orelse = _clean_block(s.orelse, s.srcinfo) if s.orelse else ()
        if _is_empty(body) and _is_empty(orelse):
            return None
        if orelse and _is_empty(orelse):
            orelse = ()
        if body == s.body and orelse == s.orelse:
            return s
        return s.update(body=body, orelse=orelse)
    return s
