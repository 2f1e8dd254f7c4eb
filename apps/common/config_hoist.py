"""Hoisting a configuration instruction out of loops, as the Exo paper
does for Gemmini: shared by the Gemmini matmul and the AMX GEMMs, whose
tile configuration (``ldtilecfg``) is hoisted the same way."""
from __future__ import annotations

from exo_hl import SchedulingError


def hoist_config(p, call, n_loops):
    """Hoist the statement ``call`` (a pattern) out of its ``n_loops``
    innermost enclosing loops: move it to the top of the loop body
    (``reorder_stmts`` proves it commutes with each statement it passes),
    cut the loop after it (``fission_after``: no later iteration's write
    may be observed by an earlier iteration's reads) and drop the
    config-only loop (``remove_loop``: it is idempotent and provably runs
    at least once)."""
    for _ in range(n_loops):
        while True:
            c = p.find(call)
            try:
                prev = c.prev()
            except SchedulingError:  # already first in its block
                break
            p = p.reorder_stmts(prev, c)
        p = p.fission_after(call)
        p = p.remove_loop(p.find(call).parent())
    return p
