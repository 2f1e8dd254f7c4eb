"""``shift_loop(loop, new_lo)``: re-base a loop's iteration range.

``for i in seq(lo, hi): s`` becomes ``for i in seq(new_lo, new_lo + hi - lo):
s[i -> i + lo - new_lo]``. Same iterations, same order, same trip count
(zero stays zero). The one condition: the body now evaluates ``lo`` in
every iteration, where the loop evaluated it once on entry, so ``lo`` may
not read a config field the body may write. ``new_lo`` is a non-negative
int (iterators index buffers, so a negative base is refused as a mistake).
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir.traversal import subst
from ..core_ir import simplify as S
from ..provenance import derive
from . import _common as C


def shift_loop(proc, loop, new_lo):
    path, s = C.resolve_loop(proc, loop, "shift_loop")
    if isinstance(new_lo, bool) or not isinstance(new_lo, int) or new_lo < 0:
        raise C.scheduling_error(
            proc, s, f"shift_loop: new_lo must be a non-negative int, got "
            f"{new_lo!r}")
    # the body reads ``lo`` where it used to read ``i``: at every iteration
    C.check_unchanged_by(proc, s, (s.lo, ), s.body, "shift_loop",
                         "the lower bound (substituted into the body)",
                         "the loop body")
    si = s.srcinfo
    env = S.env_at(proc.ir(), path)
    k = B.const(new_lo, si)

    def bop(op, a, b):
        return B.binop(op, a, b, srcinfo=si)

    new_hi = S.simplify_expr(bop("+", k, bop("-", s.hi, s.lo)), env)
    it = B.index_read(s.iter, si)
    old_i = bop("-", bop("+", it, s.lo), k)
    body = tuple(subst(x, {s.iter: old_i}) for x in s.body)
    body = S.simplify_stmts(body, S.with_loop(env, s.iter, k, new_hi))
    new = s.update(lo=k, hi=new_hi, body=body)
    new_ir = C.replace_stmts_at(proc.ir(), path, (new, ))
    return derive(proc, new_ir, "shift_loop",
                  forward=C.forward_replace(path, 1, keep_inside=True))
