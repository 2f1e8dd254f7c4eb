"""``simplify()``: normalize index arithmetic and drop trivially dead code.

Every expression goes through ``core_ir.simplify`` with the ranges known from
sizes, preconditions and enclosing loop bounds (so ``16 * io + ii`` reads as
written and ``(16 * io + ii) / 16`` becomes ``io`` when ``0 <= ii < 16``).
Then, where a condition or a loop range became a constant:

* ``if True: A else: B`` becomes ``A``, ``if False: A else: B`` becomes ``B``;
* a loop with no iterations (constant ``hi <= lo``) is removed.

Both are pure equivalences, so there is nothing to check. Cursors follow
their statements (a forward table); cursors into removed code become invalid.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.simplify import simplify_proc
from ..provenance import derive
from . import _common as C


def _const(e):
    return e.val if isinstance(e, IR.Const) else None


def _clean(stmts, old_parent, field, new_parent, new_field, table):
    """Cleaned statements of one list, recording old path -> new path."""
    out = []

    def emit(s, old_path):
        new_path = new_parent + ((new_field, len(out)), )
        table[old_path] = new_path
        if isinstance(s, IR.For):
            s = s.update(body=_clean_list(s.body, old_path, "body", new_path,
                                          "body", table))
        elif isinstance(s, IR.If):
            s = s.update(
                body=_clean_list(s.body, old_path, "body", new_path, "body",
                                 table),
                orelse=_clean_list(s.orelse, old_path, "orelse", new_path,
                              "orelse", table, allow_empty=True))
        out.append(s)

    def visit(ss, parent, fld):
        for i, s in enumerate(ss):
            old_path = parent + ((fld, i), )
            if isinstance(s, IR.If) and isinstance(_const(s.cond), bool):
                table[old_path] = None
                taken, tf = (s.body, "body") if s.cond.val else \
                    (s.orelse, "orelse")
                visit(taken, old_path, tf)  # splice the taken branch
                continue
            if isinstance(s, IR.For):
                lo, hi = _const(s.lo), _const(s.hi)
                if isinstance(lo, int) and isinstance(hi, int) and hi <= lo:
                    table[old_path] = None
                    continue
            emit(s, old_path)

    visit(stmts, old_parent, field)
    return tuple(out)


def _clean_list(stmts, old_parent, field, new_parent, new_field, table,
                allow_empty=False):
    out = _clean(stmts, old_parent, field, new_parent, new_field, table)
    if not out and not allow_empty:
        out = (IR.Pass(srcinfo=stmts[0].srcinfo if stmts else None), )
    return out


def simplify(proc):
    ir = simplify_proc(proc.ir())
    table = {}
    body = _clean_list(ir.body, (), "body", (), "body", table)
    ir = ir.update(body=body)
    return derive(proc, ir, "simplify", forward=C.forward_table(table))
