"""``parallelize(loop, dynamic=False)``: turn ``for i in seq(lo, hi)`` into
``par(lo, hi)`` (``par_dynamic(lo, hi)`` with ``dynamic``).

Safe when the iterations are race-free (docs/api.md §6): no iteration writes or
reduces a location that another iteration reads, writes or reduces; reads in
guards and loop bounds count. (A reduction ``s += x[i]`` across iterations is
a race, as is ``x[i+1] = x[i]``.) Discharged by ``effects.loop_is_parallel``
in the loop's context. The two parallel kinds differ only in how C shares
the iterations between threads, so a loop already of one is turned into
the other without a new proof.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..effects import api as E
from ..provenance import derive
from . import _common as C


def parallelize(proc, loop, dynamic=False):
    # locate
    path, s = C.resolve_loop(proc, loop, "parallelize")
    if not isinstance(dynamic, bool):
        raise C.scheduling_error(
            proc, s, f"parallelize: dynamic={dynamic!r}: True or False")
    mode = IR.ParDynamic if dynamic else IR.Par
    fwd = C.forward_replace(path, 1, keep_inside=True)
    if s.mode is mode:
        return derive(proc, proc.ir(), "parallelize", forward=fwd)
    # check (a parallel loop's iterations are proven race-free already:
    # at parsing, or by the step that made it parallel)
    if not is_parallel(s.mode):
        r = E.loop_is_parallel(proc.ir(), path)
        if not r:
            raise C.scheduling_error(
                proc, s, "parallelize: the iterations are not race-free (one "
                "iteration may write a location another iteration reads, "
                f"writes or reduces): {r.reason}")
    # build, record
    new_ir = C.replace_stmts_at(proc.ir(), path, (s.update(mode=mode), ))
    return derive(proc, new_ir, "parallelize", forward=fwd)
