"""``reorder_stmts(s1, s2=None)``: swap two adjacent statements.

``s1; s2`` becomes ``s2; s1``; ``s2`` must directly follow ``s1`` (by
default it is the next statement; given by patterns, the two are the first
pair of matches in which the second directly follows the first). Safety is the paper's condition (§3.5.7):
``Commutes(Eff s1, Eff s2)``, checked in context by the effect analysis
(reads/writes/reductions of buffers and configuration state, through calls
and windows). ``s2`` may not use a buffer or window that ``s1`` binds (it
would be used before its allocation).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import free_vars
from ..effects import api as EA
from ..provenance import derive
from . import _common as C
from ._buffer_uses import truncating_note


def reorder_stmts(proc, s1, s2=None):
    if s2 is None:
        path1, st1 = C.resolve_stmt(proc, s1, "reorder_stmts")
    else:
        # the first pair in which the second statement directly follows
        # the first one
        path1, st1, path2, st2, ok = C.resolve_pair(
            proc, s1, s2, "stmt", C.directly_after, "reorder_stmts")

    def err(msg, st=st1):
        return C.scheduling_error(
            proc, st, "reorder_stmts: " + msg)

    field, k = path1[-1]
    parent_path = tuple(path1[:-1])
    block = C.get_list(proc.ir(), parent_path, field)
    if s2 is None:
        if k + 1 >= len(block):
            raise err("there is no statement after it to swap with")
        path2, st2 = parent_path + ((field, k + 1), ), block[k + 1]
    elif not ok:
        raise err("the second statement must directly follow the first",
                  st2)
    if isinstance(st1, (IR.Alloc, IR.WindowStmt)) and \
            st1.name in free_vars(st2):
        raise err(f"the second statement uses '{st1.name.name}', which the "
                  f"first one binds", st2)
    r = EA.commutes(st1, st2, EA.context(proc.ir(), tuple(path1)))
    if not r:
        raise err("the statements do not commute: one may write a location "
                  f"the other reads, writes or reduces ({r.reason})"
                  f"{truncating_note((st1, st2))}")
    new_ir = C.replace_block_at(proc.ir(), parent_path, field, k, k + 2,
                                (st2, st1))
    swap = {tuple(path1): parent_path + ((field, k + 1), ),
            tuple(path2): tuple(path1)}
    return derive(proc, new_ir, "reorder_stmts",
                  forward=C.forward_table(swap))
