"""``join_loops(loop1, loop2)``: the inverse of ``cut_loop``.

``for i in seq(a, b): s`` directly followed by ``for j in seq(b', c): s'``
becomes ``for i in seq(a, c): s``, when:

* the bodies are the same program (``s'`` equals ``s`` with ``j`` renamed
  to ``i`` and its own binders renamed apart);
* ``b == b'`` is provable, and ``a <= b <= c`` too: if the first range
  were empty (``a > b``) or the second one (``b > c``), the joined loop
  would skip or add iterations;
* the second loop's bounds do not read configuration state the first
  loop's body writes (the joined loop evaluates ``c`` before it runs);
* joining two ``par`` loops re-proves the joined loop race-free (their
  iterations used to be ordered by the loop boundary).

The iterations are then the same ones in the same order.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import subst, walk_stmts
from ..effects import api as E
from . import _common as C


def join_loops(proc, loop1, loop2):
    path1, l1, _, l2, ok = C.resolve_pair(proc, loop1, loop2, "loop",
                                          C.directly_after, "join_loops")
    err = lambda st, msg: C.scheduling_error(proc, st, "join_loops: " + msg)
    if not ok:
        raise err(l2, "the second loop must directly follow the first one "
                  "in the same block")
    if l1.mode is not l2.mode:
        raise err(l2, "cannot join a seq loop with a par loop")
    if not same_body(l1, l2):
        raise err(l2, "the two loop bodies are not the same program")
    C.check_moved(proc, "join_loops", [C.Moved(
        "loop bounds", l2, (l2.lo, l2.hi), l1.body,
        "the second loop's bounds",
        "the first loop")])
    si = l1.srcinfo
    path1 = tuple(path1)
    for a, op, b in ((l1.hi, "==", l2.lo), (l1.lo, "<=", l1.hi),
                     (l2.lo, "<=", l2.hi)):
        pred = IR.BinOp(op, a, b, type=IR.Bool, srcinfo=si)
        if not E.prove_at(proc.ir(), path1, pred):
            raise err(l2, f"cannot prove {expr_to_str(pred)}, so the joined "
                      f"loop would not run the same iterations")
    joined = l1.update(hi=l2.hi)
    *parent, (field, i) = path1
    new_ir = C.replace_block_at(proc.ir(), tuple(parent), field, i, i + 2,
                                (joined, ))
    if is_parallel(joined.mode):
        # iterations of the two loops used to run one loop after the other
        r = E.loop_is_parallel(new_ir, path1)
        if not r:
            raise err(l2, "the joined parallel loop would not be race-free "
                      f"({r.reason})")
    return proc._derive(new_ir, "join_loops", forward=C.forward_compose(
        C.forward_replace_block(tuple(parent), field, i + 1, i + 2, 0)))


def same_body(l1, l2) -> bool:
    """``l2``'s body is ``l1``'s up to renaming the iterator and the symbols
    each body binds (bound in the same order in both)."""
    b1, b2 = list(walk_stmts(l1.body)), list(walk_stmts(l2.body))
    if len(b1) != len(b2):
        return False
    ren = {l2.iter: l1.iter}
    for x, y in zip(b1, b2):
        if type(x) is not type(y):
            return False
        if isinstance(x, IR.For):
            ren[y.iter] = x.iter
        elif isinstance(x, (IR.Alloc, IR.WindowStmt)):
            ren[y.name] = x.name
    return tuple(subst(s, ren) for s in l2.body) == tuple(l1.body)
