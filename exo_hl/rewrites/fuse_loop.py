"""``fuse_loop(loop1, loop2=None)``: fuse two consecutive loops.

``for x in seq(lo, hi): s1`` followed directly by ``for y in seq(lo', hi'):
s2`` becomes ``for x in seq(lo, hi): s1; s2[y -> x]``. ``loop2`` defaults to
the statement right after ``loop1``; given by names or patterns, the loops
are the first pair in which the second directly follows the first.

This is loop fission read backwards (paper §3.5.8), so it is safe when:
* both bounds are provably equal (``lo == lo'`` and ``hi == hi'`` under the
  preconditions and context), and the second loop's bounds do not read
  configuration state the first loop writes (they were evaluated after it);
* the fission condition holds for the fused loop: the iterations of ``s2``
  that fusion moves before later iterations of ``s1`` commute with them
  (``Commutes(Eff[s1(x)], Eff[s2(x')])`` for ``x' < x``). A reversed
  dependence such as ``y[i] = x[i+1]`` after ``x[i] = ...`` fails it,
  unless the later ``s1`` only stores values already there (a producer
  recomputed in overlapping blocks: ``effects.equal_writes``).
Fusing two ``par`` loops also re-proves the fused loop race-free.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import subst
from ..effects import api as E
from ..provenance import derive
from . import _common as C


def fuse_loop(proc, loop1, loop2=None):
    err = lambda st, msg: C.scheduling_error(proc, st, "fuse_loop: " + msg)
    if loop2 is None:
        path1, l1 = C.resolve_loop(proc, loop1, "fuse_loop")
        path1 = tuple(path1)
        field, i = path1[-1]
        block = C.get_list(proc.ir(), path1[:-1], field)
        if i + 1 >= len(block) or not isinstance(block[i + 1], IR.For):
            raise err(l1, "the statement after this loop is not a loop")
        l2 = block[i + 1]
    else:
        # the first pair in which the second loop directly follows the first
        path1, l1, _, l2, ok = C.resolve_pair(proc, loop1, loop2, "loop",
                                              C.directly_after, "fuse_loop")
        if not ok:
            raise err(l2, "the second loop must directly follow the first "
                      "one in the same block")
        field, i = path1[-1]
    if l1.mode is not l2.mode:
        raise err(l2, "cannot fuse a seq loop with a par loop")

    # the fused loop evaluates the second loop's bounds before the first
    C.check_moved(proc, "fuse_loop", [C.Moved(
        "loop bounds", l2, (l2.lo, l2.hi), l1.body,
        "the second loop's bounds",
        "the first loop")])
    si = l1.srcinfo
    for a, b, what in ((l1.lo, l2.lo, "lower"), (l1.hi, l2.hi, "upper")):
        if a == b:
            continue
        eq = B.cmp("==", a, b, si)
        if not E.prove_at(proc.ir(), path1, eq):
            raise err(l2, f"the {what} bounds {expr_to_str(a)} and "
                      f"{expr_to_str(b)} cannot be proven equal")

    it = B.index_read(l1.iter, si)
    body2 = tuple(subst(s, {l2.iter: it}) for s in l2.body)
    fused = l1.update(body=l1.body + body2)
    # replace the pair by the fused loop, then check it in place
    new_ir = C.replace_block_at(proc.ir(), path1[:-1], field, i, i + 2,
                                (fused, ))
    r = E.can_fission(new_ir, path1, len(l1.body))
    if not r:
        raise err(l2, "the loops cannot be fused: an iteration of the second "
                  "loop would move before a later iteration of the first "
                  f"loop that it does not commute with ({r.reason})")
    if is_parallel(fused.mode):
        r = E.loop_is_parallel(new_ir, path1)
        if not r:
            raise err(l2, "the fused parallel loop would not be race-free "
                      f"({r.reason})")
    return derive(proc, new_ir, "fuse_loop",
                  forward=_forward_fuse(path1, len(l1.body)))


def _forward_fuse(path1, n1):
    """Loop 2's body now follows loop 1's body; later siblings shift up."""
    *parent, (field, i) = path1
    parent = tuple(parent)
    n = len(parent)

    def fwd(p):
        if len(p) <= n or p[:n] != parent or p[n][0] != field \
                or p[n][1] <= i:
            return p
        j, rest = p[n][1], p[n + 1:]
        if j > i + 1:
            return parent + ((field, j - 1), ) + rest
        if rest and rest[0][0] == "body":
            return tuple(path1) + (("body", n1 + rest[0][1]), ) + rest[1:]
        raise C.InvalidCursorError("the second loop was fused into the first")
    return fwd
