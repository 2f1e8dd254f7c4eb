"""``remove_loop(loop)``: ``for i in seq(lo, hi): s`` becomes ``s``.

Safe exactly when (paper §3.5.8, loop removal): ``i`` is not free in ``s``;
the loop definitely runs at least once (``lo < hi`` provable from the
preconditions and the context); and ``s`` is idempotent, i.e.
``Shadows(Eff[s], Eff[s])``: everything ``s`` may modify it definitely
overwrites, without reading it. A body that reduces (``x += ...``) or reads
what it writes (``x = x + 1``) is therefore rejected.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import free_vars
from ..effects import api as E
from ..provenance import derive
from . import _common as C


def remove_loop(proc, loop):
    path, s = C.resolve_loop(proc, loop, "remove_loop")
    err = lambda msg: C.scheduling_error(proc, s, "remove_loop: " + msg)
    if s.iter in free_vars(s.body):
        raise err(f"the loop iterator '{s.iter.name}' is used in the body")
    si = s.srcinfo
    nonempty = B.cmp("<", s.lo, s.hi, si)
    if not E.prove_at(proc.ir(), path, nonempty):
        raise err(f"the loop may run zero times (cannot prove "
                  f"{expr_to_str(s.lo)} < {expr_to_str(s.hi)})")
    r = E.can_remove_loop(proc.ir(), path)
    if not r:
        raise err("the loop body is not idempotent (it reduces into, or "
                  "reads, a location it modifies), so running it once is "
                  f"not the same as running it repeatedly ({r.reason})")
    new_ir = C.replace_stmts_at(proc.ir(), path, s.body)
    return derive(proc, new_ir, "remove_loop",
                  forward=C.forward_unwrap(path, len(s.body)))
