"""``reorder(outer_loop, inner_loop=None)``: interchange two nested loops.

``for x: for y: s`` becomes ``for y: for x: s``. The inner loop must be the
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
from . import _common as C


def reorder(proc, outer_loop, inner_loop=None):
    path, outer = C.resolve_loop(proc, outer_loop, "reorder")
    err = lambda st, msg: C.scheduling_error(proc, st, "reorder: " + msg)
    if len(outer.body) != 1 or not isinstance(outer.body[0], IR.For):
        raise err(outer, "the outer loop's body must be exactly one loop "
                  "(the loops are not perfectly nested)")
    inner = outer.body[0]
    if inner_loop is not None:
        ipath, istmt = C.resolve_loop(proc, inner_loop, "reorder")
        if tuple(ipath) != tuple(path) + (("body", 0), ):
            raise err(istmt, "the inner loop must be directly nested in the "
                      "outer loop")
    if outer.iter in free_vars((inner.lo, inner.hi)):
        raise err(inner, f"the inner loop's bounds depend on the outer "
                  f"iterator '{outer.iter.name}'")
    r = E.can_reorder_loops(proc.ir(), path)
    if not r:
        raise err(outer, "the loop iterations do not commute, so the loops "
                  f"cannot be interchanged ({r.reason})")
    new_outer = inner.update(body=(outer.update(body=inner.body), ))
    new_ir = C.replace_stmts_at(proc.ir(), path, (new_outer, ))
    # each loop's cursor follows that loop; the body stays where it was
    path = tuple(path)
    ipath = path + (("body", 0), )
    table = {path: ipath, ipath: path}
    table.update({ipath + (("body", k), ): ipath + (("body", k), )
                  for k in range(len(inner.body))})
    return proc._derive(new_ir, "reorder", forward=C.forward_table(table))
