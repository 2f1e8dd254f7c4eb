"""``partition_loop(loop, cut)``: split a loop's range in two.

``for i in seq(lo, hi): s`` becomes ``for i in seq(lo, lo + cut): s`` then
``for i in seq(lo + cut, hi): s`` (a fresh copy). ``cut`` is an *offset*
(as in Exo): the first loop runs exactly ``cut`` iterations. It is a
non-negative int.

The same iterations run in the same order, so this is safe exactly when the
first loop does not run iterations the original did not: ``lo + cut <= hi``
must be provable from the preconditions and the context (SMT). The second
loop's ``hi`` is now evaluated after the first loop ran, so bounds reading
configuration state the body writes are rejected too.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import fresh_copy
from ..core_ir import simplify as S
from ..effects import api as E
from . import _common as C


def partition_loop(proc, loop, cut):
    path, s = C.resolve_loop(proc, loop, "partition_loop")
    err = lambda msg: C.scheduling_error(proc, s, "partition_loop: " + msg)
    if isinstance(cut, bool) or not isinstance(cut, int) or cut < 0:
        raise err(f"cut must be a non-negative int (the number of "
                  f"iterations of the first loop), got {cut!r}")
    if C.bounds_depend_on((s.lo, s.hi), s.body):
        raise err("the loop bounds read configuration state that the loop "
                  "body writes")
    si = s.srcinfo
    env = S.env_at(proc.ir(), path)
    mid = S.simplify_expr(IR.BinOp("+", s.lo, IR.Const(cut, type=IR.Int,
                                                         srcinfo=si),
                                   type=IR.Index, srcinfo=si), env)
    in_bounds = IR.BinOp("<=", mid, s.hi, type=IR.Bool, srcinfo=si)
    if not _prove(proc.ir(), path, in_bounds):
        raise err(f"the cut {expr_to_str(mid)} may exceed the loop bound "
                  f"{expr_to_str(s.hi)} (cannot prove "
                  f"{expr_to_str(in_bounds)})")
    first = s.update(hi=mid)
    second = fresh_copy((s.update(lo=mid), ))[0]
    new = (first, second)
    new_ir = C.replace_stmts_at(proc.ir(), path, new)
    return proc._derive(new_ir, "partition_loop",
                        forward=C.forward_table(
                            {tuple(path): tuple(path)},
                            C.forward_replace(path, 2)))



def _prove(proc_ir, path, pred) -> bool:
    """``pred`` holds whenever the statement at ``path`` runs (SMT)."""
    return bool(E.prove_at(proc_ir, path, pred))
