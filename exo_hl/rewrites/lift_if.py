"""``lift_if(if_stmt, n_lifts=1)``: move an invariant ``if`` outward.

Out of a loop: ``for i: (if c: A else: B)`` becomes
``if c: (for i: A) else: (for i: B)`` (no else branch without ``B``).
Out of an if: ``if d: (if c: A else: B) else: E`` becomes
``if c: (if d: A else: E) else: (if d: B else: E)``, and out of its else
branch ``if d: A else: (if c: B else: E)`` becomes ``if c: (if d: A else:
B) else: (if d: A else: E)`` (Exo's ``lift_scope``; no inner else: ``E``
is nothing). Each statement runs exactly when it ran before.
The lifted ``if`` must be the only statement of the enclosing body.

Safety: ``c`` is a control expression, so it has no side effects and can be
evaluated earlier. It must have the same value everywhere it was evaluated:
it may not mention the loop's iterator, and it may not read a configuration
field that the loop body may write (``_common.check_unchanged_by``, calls
included). Out of an ``if`` nothing runs between the
two tests, so any ``c`` is fine (it is now evaluated also where the
other branch runs: a control expression, reading no data, has nothing to
go wrong). Duplicated code gets fresh symbols.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import free_vars, fresh_copy, subst
from ..provenance import derive
from . import _common as C


def lift_if(proc, if_stmt, n_lifts=1):
    path, s = C.resolve_stmt(proc, if_stmt, "lift_if")

    def err(msg, st=s):
        return C.scheduling_error(proc, st, "lift_if: " + msg)

    if not isinstance(s, IR.If):
        raise err("expected an if statement")
    if not C.is_count(n_lifts):
        raise err(f"n_lifts must be a positive int, got {n_lifts!r}")

    ir = proc.ir()
    cur = tuple(path)
    fwds = []
    for level in range(n_lifts):
        if len(cur) < 2:
            raise err(f"cannot lift {level + 1} level(s): no enclosing loop "
                      f"or if")
        parent_path = cur[:-1]
        parent = C.get_stmt(ir, parent_path)
        inner = C.get_stmt(ir, cur)
        field = cur[-1][0]
        if len(getattr(parent, field)) != 1:
            raise err("the if must be the only statement of the enclosing "
                      "body", parent)
        if isinstance(parent, IR.For):
            if parent.iter in free_vars(inner.cond):
                raise err(f"the condition depends on the loop iterator "
                          f"'{parent.iter.name}'", inner)
            # lifted, the condition is evaluated once, before the loop
            C.check_moved(proc, "lift_if", [C.Moved(
                "if conditions", inner, (inner.cond, ), parent.body,
                "the condition",
                "the loop body")])
            new = _out_of_loop(parent, inner)
        elif isinstance(parent, IR.If) and field == "orelse":
            new = _out_of_else(parent, inner)
        elif isinstance(parent, IR.If):
            new = _out_of_if(parent, inner)
        else:
            raise err("the if is not inside a loop or if")
        ir = C.replace_stmts_at(ir, parent_path, (new, ))
        fwds.append(_forward_swap_else(parent_path) if field == "orelse"
                    else _forward_swap(parent_path))
        cur = parent_path
    return derive(proc, ir, "lift_if", forward=C.forward_compose(*fwds))


def _forward_swap(outer):
    """Cursors after ``outer: if c: A else: B`` became ``if c: outer': A
    else: outer'': B``: the outer statement follows its first copy, the if
    moves up, A and the outer's own else branch stay under the first copy,
    B moves under the second."""
    outer = tuple(outer)
    inner = outer + (("body", 0), )
    n = len(inner)

    def fwd(p):
        if p == outer:
            return inner
        if p == inner:
            return outer
        if p[:n] == inner and p[n][0] == "orelse":
            return outer + (("orelse", 0), ("body", p[n][1])) + p[n + 1:]
        if p[:len(outer)] == outer and len(p) > len(outer) and \
                p[len(outer)][0] == "orelse":
            return inner + p[len(outer):]
        return p
    return fwd


def _forward_swap_else(outer):
    """Cursors after ``outer: if d: A else: (if c: B else: E)`` became ``if
    c: outer': (if d: A else: B) else: (if d: A' else: E)``: the outer if
    follows its first copy (with A), the inner if moves up, B moves to the
    first copy's else branch, E stays where it was."""
    outer = tuple(outer)
    inner = outer + (("orelse", 0), )
    n, m = len(inner), len(outer)

    def fwd(p):
        if p == outer:
            return outer + (("body", 0), )
        if p == inner:
            return outer
        if p[:n] == inner and p[n][0] == "body":
            return outer + (("body", 0), ("orelse", p[n][1])) + p[n + 1:]
        if p[:n] == inner:
            return p                    # E: the same path
        if p[:m] == outer and len(p) > m:
            return outer + (("body", 0), ) + p[m:]     # A
        return p
    return fwd


def _fresh_loop(loop, body):
    it = loop.iter.copy()
    return loop.update(iter=it, body=tuple(
        subst(s, {loop.iter: it}) for s in fresh_copy(body)))


def _out_of_loop(loop, inner):
    then = loop.update(body=inner.body)
    if not inner.orelse:
        return inner.update(body=(then, ))
    return inner.update(body=(then, ), orelse=(_fresh_loop(loop, inner.orelse), ))


def _out_of_if(outer, inner):
    then = outer.update(body=inner.body)
    if not inner.orelse:
        if outer.orelse:
            # `if d: (if c: A) else: E` -> `if c: (if d: A else: E) else:
            # (if d: pass else: E)`
            other = outer.update(body=(IR.Pass(srcinfo=inner.srcinfo), ),
                                 orelse=fresh_copy(outer.orelse))
            return inner.update(body=(then, ), orelse=(other, ))
        return inner.update(body=(then, ))
    other = outer.update(body=inner.orelse, orelse=fresh_copy(outer.orelse))
    return inner.update(body=(then, ), orelse=(other, ))


def _out_of_else(outer, inner):
    then = outer.update(orelse=inner.body)
    other = outer.update(body=fresh_copy(outer.body), orelse=inner.orelse)
    return inner.update(body=(then, ), orelse=(other, ))
