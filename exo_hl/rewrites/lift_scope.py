"""``lift_scope(stmt)``: swap a loop or if with the loop or if that directly
encloses it (``stmt`` must be the only statement of that body).

* loop in loop: ``for i: for j: s`` -> ``for j: for i: s``; this is
  ``reorder`` and has its checks (the inner bounds do not mention ``i``;
  the iterations that cross commute);
* if in loop: ``for i: if c: A else: B`` -> ``if c: for i: A else: for i:
  B``; this is ``lift_if`` (``c`` does not mention ``i`` and reads no config
  field the loop body writes: it must be loop-invariant);
* if in if: ``if d: (if c: A else: B) else: E`` -> ``if c: (if d: A else:
  E) else: (if d: B else: E)``, and out of the else branch (as Exo's
  ``lift_scope``) ``if d: A else: (if c: B else: E)`` -> ``if c: (if d: A
  else: B) else: (if d: A else: E)``; also ``lift_if`` (always
  equivalent);
* loop in if: ``if c: for i: A`` -> ``for i: if c: A``, and ``if c: for
  i: A else: for j: B`` -> ``for i: if c: A else: B[j -> i]`` when the two
  loops' bounds are provably equal (lifting either loop, the one of the
  else branch too: ``for j: if c: A[i -> j] else: B``). The condition is
  now evaluated in every iteration instead of once before the loop, so it
  may not read configuration state the loop bodies write; with ``c`` false
  (and no else), the loop runs only false guards: no effect; evaluating
  bounds has no side effects. Any other else branch is refused: ``if c:
  A else: for i: B`` has no loop equivalent (``A`` would run once per
  iteration, or not at all when the loop is empty), nor has ``if c: for
  i: A else: B``.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import subst
from ..effects import api as E
from . import _common as C


def lift_scope(proc, stmt):
    path, s = C.resolve_stmt(proc, stmt, "lift_scope")
    path = tuple(path)

    def err(msg, st=s):
        return C.scheduling_error(proc, st, "lift_scope: " + msg)

    if not isinstance(s, (IR.For, IR.If)):
        raise err("expected a loop or an if")
    if len(path) < 2:
        raise err("the statement is not inside a loop or if")
    parent_path = path[:-1]
    parent = C.get_stmt(proc.ir(), parent_path)
    field = path[-1][0]
    if len(getattr(parent, field)) != 1:
        raise err("the statement must be the only one in the enclosing body",
                  parent)
    if isinstance(s, IR.For) and isinstance(parent, IR.For):
        from .reorder import reorder
        return _as(proc, reorder(proc, _cur(proc, parent_path)))
    if isinstance(s, IR.If):
        from .lift_if import lift_if
        return _as(proc, lift_if(proc, _cur(proc, path), 1))
    # a loop directly inside an if
    other = None
    if field == "orelse":
        other = parent.body[0]
        if len(parent.body) != 1 or not isinstance(other, IR.For) \
                or other.mode is not s.mode:
            raise err("the enclosing if's then branch is not one loop of "
                      "the same kind: lifting the loop out of the else "
                      "branch would run that branch in every iteration",
                      parent)
    elif parent.orelse:
        other = parent.orelse[0]
        if len(parent.orelse) != 1 or not isinstance(other, IR.For) \
                or other.mode is not s.mode:
            raise err("the enclosing if has an else branch that is not one "
                      "loop of the same kind: lifting the loop would run "
                      "that branch in every iteration", parent)
    if other is not None:
        for a, b in ((s.lo, other.lo), (s.hi, other.hi)):
            eq = IR.BinOp("==", a, b, type=IR.Bool, srcinfo=s.srcinfo)
            if a != b and not E.prove_at(proc.ir(), parent_path, eq):
                raise err("the loops of the two branches cannot be proven "
                          "to have equal bounds", parent)
    C.check_moved(proc, "lift_scope", [C.Moved(
        "if conditions", parent, (parent.cond, ),
        s.body + (other.body if other else ()),
        "the condition (evaluated in every iteration once lifted)",
        "the loop body")])
    orelse = ()
    if other is not None:
        it = IR.Read(s.iter, (), type=IR.Index, srcinfo=s.srcinfo)
        orelse = tuple(subst(x, {other.iter: it}) for x in other.body)
    then = s.body
    if field == "orelse":
        then, orelse = orelse, s.body
    new = s.update(body=(parent.update(body=then, orelse=orelse), ))
    new_ir = C.replace_stmts_at(proc.ir(), parent_path, (new, ))
    new_if = parent_path + (("body", 0), )
    table = {parent_path: new_if, path: parent_path}
    table.update({path + (("body", k), ): new_if + ((field, k), )
                  for k in range(len(s.body))})
    if other is not None:
        # the other loop merged into the lifted one: it has no image of
        # its own, its body is now the other branch
        ofield = "body" if field == "orelse" else "orelse"
        other_path = parent_path + ((ofield, 0), )
        table[other_path] = None
        table.update({other_path + (("body", k), ): new_if + ((ofield, k), )
                      for k in range(len(other.body))})
    return proc._derive(new_ir, "lift_scope", forward=C.forward_table(table))


def _cur(proc, path):
    from ..cursors import StmtCursor
    return StmtCursor(proc, tuple(path))


def _as(proc, q):
    """``q`` (one step from ``proc``) recorded as a ``lift_scope`` step."""
    return proc._derive(q.ir(), "lift_scope", forward=q._forward)
