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
``if`` level: the condition is evaluated again by the second ``if``, so
what runs before it may not change what the condition reads (configuration
fields, through callees too), each proven in its branch's context: ``s1``
for a cut in the then-branch; for a cut in the else branch both ``s1`` and
the whole then-body ``T`` (the first ``if`` keeps ``T``). In both cases
``s2`` may not use an allocation or window made in ``s1`` (it would go out
of scope).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import free_vars, subst
from ..effects import api as EA
from ..provenance import derive
from . import _common as C
from ._buffer_uses import truncating_note


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
                    f"loop bounds): {r.reason}{truncating_note((parent, ))}",
                    parent)
            it = parent.iter.copy()
            first = parent.update(body=pre)
            second = parent.update(iter=it, body=tuple(
                subst(st, {parent.iter: it}) for st in post))
        elif isinstance(parent, IR.If):
            def cond_err(m, parent=parent):
                return err(m, parent)
            # the second 'if' evaluates the condition again, after whatever
            # the first one ran: 'pre' (condition true) for a cut in the
            # then-branch; the whole then-body (true) or 'pre' (false) for
            # a cut in the else branch
            if field == "orelse":
                _check_cond_stable(ir, parent_path, "body", parent.body,
                                   cond_err)
            _check_cond_stable(ir, parent_path, field, pre, cond_err)
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


def _check_cond_stable(ir, if_path, field, stmts, err):
    """Commutes(Eff cond, Eff stmts) in the context of the ``field`` branch
    of the ``if`` at ``if_path`` (its guard, the config values and windows
    in scope there): the condition is evaluated again after ``stmts`` ran
    in that branch, so they may not change what it reads (config fields,
    buffers, also through callees and windows)."""
    if not stmts:
        return
    from ..effects.checks import commutes
    from ..effects.effects import eff_expr
    cond = C.get_stmt(ir, if_path).cond
    ctx = EA.context(ir, tuple(if_path) + ((field, 0), ))
    r = commutes(ctx.place(eff_expr(cond)), ctx.eff(stmts), ctx.hyps)
    if not r:
        which = "then-branch" if field == "body" else "else branch"
        raise err(f"the condition would be evaluated again after the cut, "
                  f"but statements of the {which} that run before it may "
                  f"change it ({r.reason})")
