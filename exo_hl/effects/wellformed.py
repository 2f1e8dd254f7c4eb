"""Static checks run on every freshly parsed procedure (after typing), and
again on every rewrite's result (``provenance.derive``).

First, control arithmetic cannot overflow the C's 64 bits
(``exo_hl.core_ir.control_ranges``, interval arithmetic, ``BoundsError``). Then
two checks, both discharged by the effect analysis:
- bounds and call preconditions (``exo_hl.effects.bounds.check_proc``),
  raising ``BoundsError``; the same pass proves that views of one buffer
  passed to a call (one of them written) are disjoint, else ``ExoTypeError``;
- ``par`` loops are race-free (docs/api.md §6): no iteration modifies a
  location another iteration reads, writes or reduces; raising
  ``ExoTypeError`` naming the loop.
"""
from __future__ import annotations

import importlib

from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.paths import walk_with_paths
from ..core_ir.printer import stmt_to_str
from ..errors import ExoTypeError, located
from .api import loop_is_parallel
from ..core_ir.control_ranges import check_control_ranges


def run_static_checks(proc_ir) -> None:
    """Bounds, call preconditions and race-freedom of ``par`` loops.

    The bounds checker is looked up when called (``sys.modules``), so that
    it can be replaced, e.g. by a test hook."""
    check_control_ranges(proc_ir)   # before any proof relies on them
    try:
        bounds = importlib.import_module("exo_hl.effects.bounds")
    except ModuleNotFoundError as e:
        if e.name not in ("exo_hl.effects.bounds", "exo_hl.effects"):
            raise
    else:
        bounds.check_proc(proc_ir)
    check_parallel_loops(proc_ir)


def par_loops(stmts, prefix=(), field="body", start=0):
    """(path, loop) of every ``par`` loop of a block (``walk_with_paths``
    says which), paths as effects/ reads them."""
    for path, s in walk_with_paths(stmts, prefix, field, start):
        if isinstance(s, IR.For) and is_parallel(s.mode):
            yield path, s


def check_parallel_loops(proc_ir) -> None:
    """Raise ``ExoTypeError`` naming the first ``par`` loop that may race."""
    loops = list(par_loops(proc_ir.body))
    if not loops:
        return
    for path, loop in loops:
        r = loop_is_parallel(proc_ir, path)
        if not r:
            head = stmt_to_str(loop).splitlines()[0]
            raise ExoTypeError(located(
                f"the iterations of parallel loop '{head.strip()}' may race: "
                f"{r.reason}; use seq(...) or make iterations independent",
                loop.srcinfo, proc_ir.name))
