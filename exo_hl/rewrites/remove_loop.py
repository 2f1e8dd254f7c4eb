"""``remove_loop(loop)``: ``for i in seq(lo, hi): s`` becomes ``s``.

Safe exactly when (paper §3.5.8, loop removal): ``i`` is not free in ``s``;
the loop definitely runs at least once (``lo < hi`` provable from the
preconditions and the context); and ``s`` is idempotent, i.e.
``Shadows(Eff[s], Eff[s])``: everything ``s`` may modify it definitely
overwrites, without reading it. A body that reduces (``x += ...``) or reads
what it writes (``x = x + 1``) is therefore rejected.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import free_vars
from ..effects import api as E
from . import _common as C


def remove_loop(proc, loop):
    path, s = C.resolve_loop(proc, loop, "remove_loop")
    err = lambda msg: C.scheduling_error(proc, s, "remove_loop: " + msg)
    if s.iter in free_vars(s.body):
        raise err(f"the loop iterator '{s.iter.name}' is used in the body")
    si = s.srcinfo
    nonempty = IR.BinOp("<", s.lo, s.hi, type=IR.Bool, srcinfo=si)
    if not _prove(proc.ir(), path, nonempty):
        raise err(f"the loop may run zero times (cannot prove "
                  f"{expr_to_str(s.lo)} < {expr_to_str(s.hi)})")
    r = E.can_remove_loop(proc.ir(), path)
    if not r:
        raise err("the loop body is not idempotent (it reduces into, or "
                  "reads, a location it modifies), so running it once is "
                  f"not the same as running it repeatedly ({r.reason})")
    new_ir = C.replace_stmts_at(proc.ir(), path, s.body)
    return proc._derive(new_ir, "remove_loop",
                        forward=C.forward_unwrap(path, len(s.body)))


def _prove(proc_ir, path, pred) -> bool:
    """``pred`` holds whenever the statement at ``path`` runs (SMT)."""
    return bool(E.prove_at(proc_ir, path, pred))
