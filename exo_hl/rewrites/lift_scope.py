"""``lift_scope(stmt)``: swap a loop or if with the loop or if that directly
encloses it (``stmt`` must be the only statement of that body).

* loop in loop: ``for i: for j: s`` -> ``for j: for i: s``; this is
  ``reorder`` and has its checks (the inner bounds do not mention ``i``;
  the iterations that cross commute);
* if in loop: ``for i: if c: A else: B`` -> ``if c: for i: A else: for i:
  B``; this is ``lift_if`` (``c`` does not mention ``i`` and reads no config
  field the loop body writes: it must be loop-invariant);
* if in if: ``if d: (if c: A else: B) else: E`` -> ``if c: (if d: A else:
  E) else: (if d: B else: E)``, also ``lift_if`` (always equivalent);
* loop in if: ``if c: for i: A`` -> ``for i: if c: A``, and ``if c: for
  i: A else: for j: B`` -> ``for i: if c: A else: B[j -> i]`` when the two
  loops' bounds are provably equal. The condition is now evaluated in
  every iteration instead of once before the loop, so it may not read
  configuration state the loop bodies write; with ``c`` false (and no
  else), the loop runs only false guards: no effect; evaluating bounds
  has no side effects. Any other else branch is refused.
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
        if isinstance(parent, IR.If) and field == "orelse":
            raise err("lifting out of an else branch is not supported",
                      parent)
        from .lift_if import lift_if
        return _as(proc, lift_if(proc, _cur(proc, path), 1))
    # a loop directly inside an if
    if field != "body":
        raise err("lifting a loop out of an else branch is not supported",
                  parent)
    other = None
    if parent.orelse:
        other = parent.orelse[0]
        if len(parent.orelse) != 1 or not isinstance(other, IR.For) \
                or other.mode is not s.mode:
            raise err("the enclosing if has an else branch that is not one "
                      "loop of the same kind: lifting the loop would run "
                      "that branch in every iteration", parent)
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
    new = s.update(body=(parent.update(body=s.body, orelse=orelse), ))
    new_ir = C.replace_stmts_at(proc.ir(), parent_path, (new, ))
    table = {parent_path: path, path: parent_path}
    table.update({path + (("body", k), ): path + (("body", k), )
                  for k in range(len(s.body))})
    if other is not None:
        # the else loop merged into the lifted one: it has no image of its
        # own, its body is now the else branch
        other_path = parent_path + (("orelse", 0), )
        table[other_path] = None
        table.update({other_path + (("body", k), ): path + (("orelse", k), )
                      for k in range(len(other.body))})
    return proc._derive(new_ir, "lift_scope", forward=C.forward_table(table))


def _cur(proc, path):
    from ..cursors import StmtCursor
    return StmtCursor(proc, tuple(path))


def _as(proc, q):
    """``q`` (one step from ``proc``) recorded as a ``lift_scope`` step."""
    return proc._derive(q.ir(), "lift_scope", forward=q._forward)
