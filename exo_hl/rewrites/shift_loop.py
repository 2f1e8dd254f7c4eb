"""``shift_loop(loop, new_lo)``: re-base a loop's iteration range.

``for i in seq(lo, hi): s`` becomes ``for i in seq(new_lo, new_lo + hi - lo):
s[i -> i + lo - new_lo]``. Same iterations, same order, same trip count
(zero stays zero). The one condition: the body now evaluates ``lo`` in
every iteration, where the loop evaluated it once on entry, so ``lo`` may
not read a config field the body may write. ``new_lo`` is an int or, as in
Exo, a control expression string (e.g. ``'n - 4'``, read at the loop); it
must be provably non-negative (iterators index buffers, so a negative base
is refused as a mistake), and, since the new body evaluates it in every
iteration too, it may not read a config field the body may write. Its
constants are 32-bit values, as control arguments are, so the shifted
bounds cannot overflow in C.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir.nodes import IR
from ..core_ir.traversal import subst, walk
from ..core_ir import types as T
from ..core_ir.printer import expr_to_str
from ..core_ir import simplify as S
from ..effects import api as E
from ..provenance import derive
from . import _common as C
from ._expr_at import config_scope


#: new_lo is at most a 32-bit value: with 32-bit loop bounds the new upper
#: bound new_lo + hi - lo stays far inside the 64-bit range (int_fast32_t
#: on x86-64), where a larger one could overflow in C
_CONTROL_MAX = 2**31 - 1


def shift_loop(proc, loop, new_lo):
    path, s = C.resolve_loop(proc, loop, "shift_loop")
    err = lambda msg: C.scheduling_error(proc, s, "shift_loop: " + msg)
    if isinstance(new_lo, bool) or not isinstance(new_lo, (int, str)):
        raise err(f"new_lo must be a non-negative int or a control "
                  f"expression string, got {new_lo!r}")
    if isinstance(new_lo, int) and new_lo < 0:
        raise err(f"new_lo must be non-negative, got {new_lo!r}")
    if isinstance(new_lo, int) and new_lo > _CONTROL_MAX:
        raise err(f"new_lo must be a 32-bit value (at most {_CONTROL_MAX}, "
                  f"as control arguments are), got {new_lo!r}")
    *parent, (field, index) = path
    k = C.parse_expr_at(proc, new_lo, tuple(parent), field, index,
                        "shift_loop", scope=config_scope(proc.ir()))
    if not T.is_int_control(k.type):
        raise err(f"new_lo must be an integer control expression, got "
                  f"{expr_to_str(k)}")
    big = [c.val for c in walk(k) if isinstance(c, IR.Const)
           and type(c.val) is int and abs(c.val) > _CONTROL_MAX]
    if big:
        raise err(f"new_lo has the constant {big[0]}, beyond the 32-bit "
                  f"range of control values: the shifted bounds could "
                  f"overflow in C")
    k = k.update(srcinfo=s.srcinfo)
    # the body reads ``lo`` and ``new_lo`` where it used to read ``i``: at
    # every iteration
    C.check_moved(proc, "shift_loop", [C.Moved(
        "loop bounds", s, (s.lo, k), s.body,
        "the lower bound and new_lo (substituted into the body)",
        "the loop body")])
    nonneg = B.cmp("<=", B.const(0, s.srcinfo), k, s.srcinfo)
    if not isinstance(new_lo, int) and not E.prove_at(proc.ir(), path,
                                                      nonneg):
        raise err(f"new_lo {expr_to_str(k)} may be negative (cannot prove "
                  f"{expr_to_str(nonneg)})")
    si = s.srcinfo
    env = S.env_at(proc.ir(), path)
    k = S.simplify_expr(k, env)

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
