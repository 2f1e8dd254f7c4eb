"""``unroll_loop(loop, factor)``: partial unrolling.

``for i in seq(lo, hi): s`` becomes ``for i in seq(0, n / f): s[i -> lo +
f*i]; ...; s[i -> lo + f*i + f-1]`` (``n = hi - lo``, ``f`` = factor) and,
unless ``f`` divides ``n`` (a constant multiple, or provable from the
preconditions), a remainder loop runs the last ``n % f`` iterations.

It is a composition of two checked rewrites, ``split(loop, f, i, r,
tail='perfect' | 'cut')`` and ``unroll`` of the inner loop, so it inherits
their conditions: the remainder needs ``lo <= hi`` provable (with a negative
trip count it would run iterations the loop does not), and the bounds may
not read configuration state the body writes. Same iterations, same order.
"""
from __future__ import annotations

from ..errors import SchedulingError
from . import _common as C
from .split import split
from .unroll import MAX_COPIES, unroll


def unroll_loop(proc, loop, factor):
    path, s = C.resolve_loop(proc, loop, "unroll_loop")
    if not C.is_count(factor):
        raise C.scheduling_error(proc, s, f"unroll_loop: factor must be a "
                                 f"positive int, got {factor!r}")
    if factor > MAX_COPIES:
        raise C.scheduling_error(proc, s, f"unroll_loop: factor {factor} is "
                                 f"more than the {MAX_COPIES} copies unroll "
                                 f"will make")
    cur = C.to_cursor(proc, _cursor(proc, path))
    name = s.iter.name
    inner = _fresh_name(proc, name + "_u")
    try:
        q = split(proc, cur, factor, name, inner, tail="perfect")
    except SchedulingError:
        try:
            q = split(proc, cur, factor, name, inner, tail="cut")
        except SchedulingError as e:
            first = str(e).splitlines()[0] if str(e) else ""
            why = first.split("split: ", 1)[-1]
            raise C.scheduling_error(proc, s, "unroll_loop: " + why) \
                from None
    q2 = unroll(q, q.forward(cur).body()[0])
    fwd = C.forward_compose(q._forward, q2._forward)
    return proc._derive(q2.ir(), "unroll_loop", forward=fwd)


def _cursor(proc, path):
    from ..cursors import StmtCursor
    return StmtCursor(proc, tuple(path))


def _fresh_name(proc, base):
    from ..core_ir.nodes import IR
    from ..core_ir.traversal import walk
    used = {a.name.name for a in proc.ir().args}
    for st in walk(proc.ir()):
        for f in ("iter", "name"):
            v = getattr(st, f, None) if f in getattr(st, "_fields", ()) \
                else None
            if v is not None and hasattr(v, "name") and not isinstance(
                    v, str):
                used.add(v.name)
    del IR
    name, k = base, 0
    while name in used:
        k += 1
        name = f"{base}{k}"
    return name
