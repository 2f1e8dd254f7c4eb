"""``mult_loops(outer, inner, new_name)``: collapse a perfect nest.

``for i in seq(a, b): for j in seq(c, c + w): s`` with ``w`` a positive
constant becomes ``for k in seq(0, (b - a) * w): s[i -> a + k / w,
j -> c + k % w]``. The iterations are the same ones in the same order
(``k = w*(i - a) + (j - c)`` enumerates the pairs lexicographically), so
the conditions are only about the shape and evaluation points:

* the inner loop is the only statement of the outer loop's body;
* its extent is a constant ``w > 0`` (its bounds evaluated once per outer
  iteration must give the same ``w`` every time) and its bounds do not
  mention ``i``;
* the bounds ``a`` and ``c``, now substituted into the body, do not read
  configuration state the body writes.

A negative outer trip count gives ``(b - a) * w <= 0``: no iterations,
as before.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.printer import expr_to_str
from ..core_ir.syms import Sym
from ..core_ir.traversal import free_vars, subst
from ..core_ir import simplify as S
from . import _common as C


def mult_loops(proc, outer, inner, new_name):
    path, lo, _, li, ok = C.resolve_pair(proc, outer, inner, "loop",
                                         C.directly_inside, "mult_loops")
    err = lambda st, msg: C.scheduling_error(proc, st, "mult_loops: " + msg)
    if not ok:
        raise err(li, "the inner loop must be directly nested in the outer "
                  "loop")
    if len(lo.body) != 1:
        raise err(lo, "the outer loop's body must be exactly the inner loop "
                  "(the loops are not perfectly nested)")
    if lo.mode is not IR.Seq or li.mode is not IR.Seq:
        raise err(lo, "only seq loops can be collapsed")
    if lo.iter in free_vars((li.lo, li.hi)):
        raise err(li, f"the inner loop's bounds depend on "
                  f"'{lo.iter.name}'")
    env = S.env_at(proc.ir(), path)
    si = lo.srcinfo

    def bop(op, a, b):
        return IR.BinOp(op, a, b, type=IR.Index, srcinfo=si)

    w = S.const_value(S.simplify_expr(bop("-", li.hi, li.lo), env), env)
    if not isinstance(w, int) or isinstance(w, bool) or w <= 0:
        raise err(li, f"the inner loop's extent {expr_to_str(li.hi)} - "
                  f"{expr_to_str(li.lo)} is not a positive constant")
    _check_name(proc, path, lo, li, new_name, lambda m: err(lo, m))
    C.check_moved(proc, "mult_loops", [C.Moved(
        "loop bounds", lo, (lo.lo, li.lo), li.body,
        "the loop lower bounds (substituted into the body)",
        "the loop body")])
    k = Sym(new_name)
    kr = IR.Read(k, (), type=IR.Index, srcinfo=si)
    wc = IR.Const(w, type=IR.Int, srcinfo=si)
    sub = {lo.iter: bop("+", lo.lo, bop("/", kr, wc)),
           li.iter: bop("+", li.lo, bop("%", kr, wc))}
    hi = S.simplify_expr(bop("*", bop("-", lo.hi, lo.lo), wc), env)
    zero = IR.Const(0, type=IR.Int, srcinfo=si)
    body = tuple(subst(s, sub) for s in li.body)
    body = S.simplify_stmts(body, S.with_loop(env, k, zero, hi))
    new = IR.For(k, zero, hi, body, IR.Seq, srcinfo=si)
    new_ir = C.replace_stmts_at(proc.ir(), path, (new, ))
    path = tuple(path)
    ipath = path + (("body", 0), )
    table = {path: path, ipath: None}
    table.update({ipath + (("body", j), ): path + (("body", j), )
                  for j in range(len(li.body))})
    return proc._derive(new_ir, "mult_loops", forward=C.forward_table(table))


def _check_name(proc, path, lo, li, name, err):
    """``name`` is an identifier no other visible or used name spells (the
    two collapsed iterators' own names are free again)."""
    C.check_identifier(proc, name, "mult_loops", "loop name")
    taken = C.names_in_use(proc, path, lo, li.body)
    if name in taken:
        raise err(f"new loop name {name!r} is already used in scope; choose "
                  f"a fresh name")
