"""``unroll(loop)``: replace a loop with constant bounds by its iterations.

``for i in seq(lo, hi): s`` with ``lo``, ``hi`` integer constants (after
simplification under the known ranges) becomes ``s[i -> lo]; ...;
s[i -> hi-1]``. Each copy gets fresh symbols for everything it binds
(symbols are unique per procedure). Running the same iterations in the same
order is always equivalent, so there is no safety condition beyond the bounds
being constants; a zero-trip loop unrolls to ``pass``.
"""
from __future__ import annotations

from ..core_ir import build as B
from ..core_ir.nodes import IR
from ..core_ir.printer import expr_to_str
from ..core_ir.traversal import bound_syms, subst
from ..core_ir import simplify as S
from ..provenance import derive
from . import _common as C

#: refuse to blow a program up beyond this many copies (a likely mistake)
MAX_COPIES = 4096


def unroll(proc, loop):
    path, s = C.resolve_loop(proc, loop, "unroll")
    env = S.env_at(proc.ir(), path)
    lo, hi = S.const_value(s.lo, env), S.const_value(s.hi, env)
    if not isinstance(lo, int) or not isinstance(hi, int) \
            or isinstance(lo, bool) or isinstance(hi, bool):
        raise C.scheduling_error(
            proc, s, "unroll: the loop bounds are not constant "
            f"(cannot unroll a loop over seq({expr_to_str(s.lo)}, "
            f"{expr_to_str(s.hi)}))")
    if hi - lo > MAX_COPIES:
        raise C.scheduling_error(
            proc, s, f"unroll: {hi - lo} iterations is more than the "
            f"{MAX_COPIES} copies unroll will make")
    out = []
    binders = bound_syms(s.body)
    for k in range(lo, hi):
        # one substitution: the iterator's value, fresh names for binders
        # (what fresh_copy would give, in the same pass)
        sub = {s.iter: B.const(k, s.srcinfo)}
        sub.update((b, b.copy()) for b in binders)
        copy = tuple(subst(x, sub) for x in s.body)
        out.extend(S.simplify_stmts(copy, env))
    if not out:
        out = [IR.Pass(srcinfo=s.srcinfo)]
    new_ir = C.replace_stmts_at(proc.ir(), path, tuple(out))
    return derive(proc, new_ir, "unroll",
                  forward=C.forward_replace_by_new(path, len(out)))


