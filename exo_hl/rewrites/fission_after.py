"""``fission_after(stmt, n_lifts=1)``: split enclosing loops after ``stmt``.

``for x: (s1; s2)`` becomes ``(for x: s1); (for x: s2)`` where ``s1`` ends
with ``stmt``; repeated ``n_lifts`` levels outward (at the next level ``s1``
is everything up to and including the first new loop). An enclosing ``if``
counts as a level too: ``if c: (s1; s2) else: E`` becomes
``(if c: s1); (if c: s2 else: E)`` (and symmetrically for a statement in the
else branch, using ``not c``). At a level where nothing follows, there is
nothing to split and the level is just crossed; when nothing follows at
any level there is nothing to split off at all, and that is an error.

Safety, per loop level, is the paper's fission condition (§3.5.8), checked
in context by ``effects.can_fission``: the loop bounds commute with ``s1``,
and ``s1`` of a later iteration commutes with ``s2`` of an earlier one, or
only overwrites what ``s2`` read with the value already there (a
loop-invariant first part, ``effects.equal_writes``). Per
``if`` level: ``s1`` may not write a configuration field the condition reads
(the condition is evaluated again after ``s1``). In both cases ``s2`` may not
use an allocation or window made in ``s1`` (it would go out of scope).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import free_vars, subst
from ..effects import api as EA
from ..provenance import derive
from . import _common as C


def fission_after(proc, stmt, n_lifts=1):
    # a gap cursor names the cut itself: the statement before it ends s1
    anchor, before = C.resolve_position(proc, stmt, "fission_after")
    if before:
        raise C.scheduling_error(
            proc, C.resolve_stmt(proc, anchor)[1], "fission_after: nothing "
            "precedes the gap, so there is no first part to split off")
    path, s = C.resolve_stmt(proc, anchor, "fission_after")

    def err(msg, st=s):
        return C.scheduling_error(
            proc, st, "fission_after: " + msg)

    if not C.is_count(n_lifts):
        raise err(f"n_lifts must be a positive int, got {n_lifts!r}")

    ir = proc.ir()
    cur = tuple(path)
    fwds = []
    for level in range(n_lifts):
        if len(cur) < 2:
            raise err(f"cannot fission {level + 1} level(s): the statement is "
                      f"only inside {level} loop(s)/if(s)")
        parent_path = cur[:-1]
        parent = C.get_stmt(ir, parent_path)
        field, k = cur[-1]
        block = getattr(parent, field)
        pre, post = block[:k + 1], block[k + 1:]
        if not post:
            cur = parent_path
            continue
        _check_scope(pre, post, lambda m: err(m, parent))
        if isinstance(parent, IR.For):
            r = EA.can_fission(ir, parent_path, k + 1)
            if not r:
                raise err(
                    f"the loop '{parent.iter.name}' cannot be split here: "
                    f"the statements before the cut do not commute with the "
                    f"statements after it across iterations (or with the "
                    f"loop bounds): {r.reason}", parent)
            it = parent.iter.copy()
            first = parent.update(body=pre)
            second = parent.update(iter=it, body=tuple(
                subst(st, {parent.iter: it}) for st in post))
        elif isinstance(parent, IR.If):
            _check_cond_stable(parent.cond, pre, lambda m: err(m, parent))
            if field == "body":
                first = parent.update(body=pre, orelse=())
                second = parent.update(body=post)
            else:
                first = parent.update(orelse=pre)
                neg = IR.Not(parent.cond, type=IR.Bool,
                             srcinfo=parent.cond.srcinfo)
                second = parent.update(cond=neg, body=post, orelse=())
        else:
            raise err("the statement is not inside a loop or if")
        ir = C.replace_stmts_at(ir, parent_path, (first, second))
        if isinstance(parent, IR.If) and field == "orelse":
            fwds.append(C.forward_fission(parent_path, field, k + 1, "body",
                                          other_field_to_second=False))
        else:
            fwds.append(C.forward_fission(parent_path, field, k + 1))
        cur = parent_path
    if not fwds:
        raise err("nothing after this statement to split off: it is the "
                  f"last statement of the {n_lifts} enclosing loop(s)/if(s)")
    return derive(proc, ir, "fission_after", forward=C.forward_compose(*fwds))


def _check_scope(pre, post, err):
    """``post`` may not use a buffer/window bound at the top level of ``pre``."""
    bound = {st.name for st in pre if isinstance(st, (IR.Alloc, IR.WindowStmt))}
    used = bound & free_vars(post)
    if used:
        names = ", ".join(sorted(v.name for v in used))
        raise err(f"the statements after the cut use {names}, allocated before "
                  f"it; lift the allocation first")


def _check_cond_stable(cond, pre, err):
    """Commutes(Eff cond, Eff pre): the condition is re-evaluated after
    ``pre``, so ``pre`` may not write state it reads (config fields)."""
    from ..effects.checks import commutes
    from ..effects.effects import eff_block, eff_expr
    r = commutes(eff_expr(cond), eff_block(pre))
    if not r:
        raise err(f"the condition would be re-evaluated after the cut, but "
                  f"the statements before it may change it ({r.reason})")
