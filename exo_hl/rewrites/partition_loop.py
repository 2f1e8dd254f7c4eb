"""``partition_loop(loop, cut)``: split a loop's range in two.

``for i in seq(lo, hi): s`` becomes ``for i in seq(lo, cut): s`` then
``for i in seq(cut, hi): s`` (a fresh copy), as docs/api.md §3 specifies: ``cut``
is the absolute index where the second loop starts, an int or a control
expression (a string such as ``'n - 4'``, read at the loop).

The same iterations run in the same order exactly when ``lo <= cut <= hi``,
which must be provable from the preconditions and the context (SMT);
otherwise one of the loops would run iterations the original did not. The
second loop's ``hi`` is now evaluated after the first loop ran, so bounds
reading configuration state the body writes are rejected too.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import fresh_copy
from ..core_ir import simplify as S
from ..effects import api as E
from ..provenance import derive
from . import _common as C
from ._expr_at import config_scope


def partition_loop(proc, loop, cut):
    path, s = C.resolve_loop(proc, loop, "partition_loop")
    err = lambda msg: C.scheduling_error(proc, s, "partition_loop: " + msg)
    if isinstance(cut, bool) or not isinstance(cut, (int, str)):
        raise err(f"cut must be an int or a control expression string, "
                  f"got {cut!r}")
    *parent, (field, index) = path
    mid = C.parse_expr_at(proc, cut, tuple(parent), field, index,
                          "partition_loop", scope=config_scope(proc.ir()))
    if not T.is_int_control(mid.type):
        raise err(f"cut must be an integer control expression, got "
                  f"{expr_to_str(mid)}")
    mid = S.simplify_expr(mid.update(srcinfo=s.srcinfo),
                          S.env_at(proc.ir(), path))
    # the second loop evaluates the cut and the upper bound after the first
    C.check_moved(proc, "partition_loop", [C.Moved(
        "loop bounds", s, (s.lo, s.hi, mid), s.body,
        "the loop bounds and the cut",
        "the loop body")])
    for a, b in ((s.lo, mid), (mid, s.hi)):
        pred = B.cmp("<=", a, b, s.srcinfo)
        if not E.prove_at(proc.ir(), path, pred):
            raise err(f"the cut {expr_to_str(mid)} may lie outside the loop "
                      f"range seq({expr_to_str(s.lo)}, {expr_to_str(s.hi)}) "
                      f"(cannot prove {expr_to_str(pred)})")
    first = s.update(hi=mid)
    second = fresh_copy((s.update(lo=mid), ))[0]
    new = (first, second)
    new_ir = C.replace_stmts_at(proc.ir(), path, new)
    return derive(proc, new_ir, "partition_loop",
                  forward=C.forward_table(
                      {tuple(path): tuple(path)},
                      C.forward_replace(path, 2)))
