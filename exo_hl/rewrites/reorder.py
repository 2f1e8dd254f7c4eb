"""``reorder(outer_loop, inner_loop=None)``: interchange two nested loops.

``for x: for y: s`` becomes ``for y: for x: s``. Given by name or pattern,
the two loops are the first pair in which the second sits directly in the
first (after a cut split or a fission, ``reorder('io', 'ii')`` finds the
``io`` loop holding an ``ii`` loop, not merely the first ``io``). The inner
loop must be the
only statement of the outer loop's body (otherwise the interchange would also
reorder sibling statements) and its bounds must not mention ``x``.

Safety is the paper's loop-reordering condition (§3.5.8): the bounds commute
with the body, and every pair of iterations that the interchange moves past
each other (``x < x'`` and ``y' < y``) commutes. It is discharged by
``effects.can_reorder_loops`` in the context of the loop nest; the classic
wavefront ``A[i, j] = A[i-1, j+1]`` fails it.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import free_vars
from ..effects import api as E
from ..provenance import derive
from . import _common as C
from ._buffer_uses import truncating_note


def _perfect(p1, s1, p2, s2) -> bool:
    return C.directly_inside(p1, s1, p2, s2) and len(s1.body) == 1


def reorder(proc, outer_loop, inner_loop=None):
    err = lambda st, msg: C.scheduling_error(proc, st, "reorder: " + msg)
    if inner_loop is None:
        path, outer = C.resolve_loop(proc, outer_loop, "reorder")
    else:
        # the outer loop that directly holds the inner one, wherever the
        # first loops of those names are
        path, outer, ipath, istmt, ok = C.resolve_pair(
            proc, outer_loop, inner_loop, "loop", _perfect, "reorder")
        if not ok:
            path, outer, ipath, istmt, ok = C.resolve_pair(
                proc, outer_loop, inner_loop, "loop", C.directly_inside,
                "reorder")
        if not ok:
            raise err(istmt, "the inner loop must be directly nested in the "
                      "outer loop")
    if len(outer.body) != 1 or not isinstance(outer.body[0], IR.For):
        raise err(outer, "the outer loop's body must be exactly one loop "
                  "(the loops are not perfectly nested)")
    inner = outer.body[0]
    if outer.iter in free_vars((inner.lo, inner.hi)):
        raise err(inner, f"the inner loop's bounds depend on the outer "
                  f"iterator '{outer.iter.name}'")
    r = E.can_reorder_loops(proc.ir(), path)
    if not r:
        raise err(outer, "the loop iterations do not commute, so the loops "
                  f"cannot be interchanged ({r.reason})"
                  f"{truncating_note((outer, ))}")
    new_outer = inner.update(body=(outer.update(body=inner.body), ))
    new_ir = C.replace_stmts_at(proc.ir(), path, (new_outer, ))
    # each loop's cursor follows that loop; the body stays where it was
    path = tuple(path)
    ipath = path + (("body", 0), )
    table = {path: ipath, ipath: path}
    table.update({ipath + (("body", k), ): ipath + (("body", k), )
                  for k in range(len(inner.body))})
    return derive(proc, new_ir, "reorder", forward=C.forward_table(table))
