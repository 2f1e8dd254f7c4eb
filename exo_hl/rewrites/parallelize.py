"""``parallelize(loop)``: turn ``for i in seq(lo, hi)`` into ``par(lo, hi)``.

Safe when the iterations are race-free (docs/api.md §6): no iteration writes or
reduces a location that another iteration reads, writes or reduces; reads in
guards and loop bounds count. (A reduction ``s += x[i]`` across iterations is
a race, as is ``x[i+1] = x[i]``.) Discharged by ``effects.loop_is_parallel``
in the loop's context.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..effects import api as E
from ..provenance import derive
from . import _common as C


def parallelize(proc, loop):
    path, s = C.resolve_loop(proc, loop, "parallelize")
    if s.mode is IR.Par:
        return derive(proc, proc.ir(), "parallelize",
                      forward=C.forward_replace(path, 1,
                                                keep_inside=True))
    r = E.loop_is_parallel(proc.ir(), path)
    if not r:
        raise C.scheduling_error(
            proc, s, "parallelize: the iterations are not race-free (one "
            "iteration may write a location another iteration reads, "
            f"writes or reduces): {r.reason}")
    new_ir = C.replace_stmts_at(proc.ir(), path, (s.update(mode=IR.Par), ))
    return derive(proc, new_ir, "parallelize",
                  forward=C.forward_replace(path, 1, keep_inside=True))
