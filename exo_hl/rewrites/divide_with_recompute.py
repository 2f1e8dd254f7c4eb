"""``divide_with_recompute(loop, outer_hi, outer_stride, [outer, inner])``.

``for i in seq(lo, hi): s`` becomes overlapping blocks::

    for outer in seq(0, outer_hi):
        for inner in seq(0, w):        # w = hi - lo - (outer_hi - 1) * stride
            s[i -> lo + stride * outer + inner]

so block ``o`` runs iterations ``lo + stride*o .. lo + stride*o + w - 1``;
consecutive blocks overlap by ``w - stride`` iterations, which run again
(Halide's "compute at" with recompute; Exo's primitive of the same name).

The blocks cover exactly ``[lo, hi)`` when ``outer_hi >= 1`` and
``outer_hi * stride <= hi - lo`` (then ``w >= stride``: no gap, and the
last block ends at ``hi``); both are proven. The new program runs every
original iteration at least once, some more than once and out of order; it
equals the original when (checked with the effect analysis, in context)

* two different iterations always commute (``Commutes(Eff s(i), Eff
  s(j))`` for ``i < j``): then every copy can be moved next to the others of
  its iteration, in the original order, and
* one iteration is idempotent (``Shadows(Eff s(i), Eff s(i))``: all it
  modifies it overwrites without reading), so the adjacent copies are one.

``w`` is evaluated in every block, and ``lo`` inside the body, so the
bounds and ``outer_hi`` may not read configuration state the body writes.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.printer import expr_to_str
from ..core_ir.syms import Sym
from ..core_ir.traversal import subst
from ..core_ir import simplify as S
from ..effects import api as E
from . import _common as C
from ._expr_at import config_scope
from .split import _check_names


def divide_with_recompute(proc, loop, outer_hi, outer_stride, new_iters):
    path, s = C.resolve_loop(proc, loop, "divide_with_recompute")
    path = tuple(path)
    err = lambda msg: C.scheduling_error(
        proc, s, "divide_with_recompute: " + msg)
    if not C.is_count(outer_stride):
        raise err(f"outer_stride must be a positive int, got "
                  f"{outer_stride!r}")
    if not isinstance(new_iters, (list, tuple)) or len(new_iters) != 2:
        raise err(f"new_iters must be a pair of names [outer, inner], got "
                  f"{new_iters!r}")
    if s.mode is not IR.Seq:
        raise err("only a seq loop can be divided with recompute")
    outer, inner = new_iters
    _check_names(proc, path, s, outer, inner, err)
    if isinstance(outer_hi, bool) or not isinstance(outer_hi, (int, str)):
        raise err(f"outer_hi must be an int or a control expression string, "
                  f"got {outer_hi!r}")
    *parent, (field, index) = path
    oh = C.parse_expr_at(proc, outer_hi, tuple(parent), field, index,
                         "divide_with_recompute",
                         scope=config_scope(proc.ir()))
    if not T.is_int_control(oh.type):
        raise err(f"outer_hi must be an integer control expression, got "
                  f"{expr_to_str(oh)}")
    env = S.env_at(proc.ir(), path)
    si = s.srcinfo
    oh = S.simplify_expr(oh.update(srcinfo=si), env)
    C.check_moved(proc, "divide_with_recompute", [C.Moved(
        "loop bounds", s, (s.lo, s.hi, oh), s.body,
        "the loop bounds and outer_hi",
        "the loop body")])

    def bop(op, a, b, typ=IR.Index):
        return IR.BinOp(op, a, b, type=typ, srcinfo=si)

    def cst(v):
        return IR.Const(v, type=IR.Int, srcinfo=si)

    st = cst(outer_stride)
    n = bop("-", s.hi, s.lo)
    for pred in (bop(">=", oh, cst(1), IR.Bool),
                 bop("<=", bop("*", oh, st), n, IR.Bool)):
        if not E.prove_at(proc.ir(), path, pred):
            raise err(f"cannot prove {expr_to_str(S.simplify_expr(pred, env))}"
                      f", so the blocks would not cover the loop's iterations "
                      f"exactly")
    r = _iterations_recomputable(proc.ir(), path)
    if not r:
        raise err("running an iteration again, after later ones, could "
                  f"change the result: {r.reason}")
    w = S.simplify_expr(bop("-", n, bop("*", bop("-", oh, cst(1)), st)), env)
    o_sym, i_sym = Sym(outer), Sym(inner)
    ro = IR.Read(o_sym, (), type=IR.Index, srcinfo=si)
    ri = IR.Read(i_sym, (), type=IR.Index, srcinfo=si)
    idx = bop("+", bop("+", bop("*", st, ro), ri), s.lo)
    body = tuple(subst(x, {s.iter: idx}) for x in s.body)
    env_o = S.with_loop(env, o_sym, cst(0), oh)
    body = S.simplify_stmts(body, S.with_loop(env_o, i_sym, cst(0), w))
    inner_loop = IR.For(i_sym, cst(0), w, body, IR.Seq, srcinfo=si)
    outer_loop = IR.For(o_sym, cst(0), oh, (inner_loop, ), IR.Seq,
                        srcinfo=si)
    new_ir = C.replace_stmts_at(proc.ir(), path, (outer_loop, ))
    into = path + (("body", 0), )
    table = {path: path}
    table.update({path + (("body", k), ): into + (("body", k), )
                  for k in range(len(s.body))})
    return proc._derive(new_ir, "divide_with_recompute",
                        forward=C.forward_table(table))


def _iterations_recomputable(proc_ir, path):
    """Any two iterations commute, and one iteration is idempotent."""
    from ..effects import checks as CK
    from ..effects import eexpr as EE
    from ..effects.context import context
    from ..effects.effects import bounds, eff_subst
    lp = C.get_stmt(proc_ir, path)
    ctx = context(proc_ir, path)
    x = lp.iter
    bx = bounds(x, ctx.lift(lp.lo), ctx.lift(lp.hi))
    a = context(proc_ir, path + (("body", 0), )).eff(lp.body)
    x2 = x.copy()
    ren = {x: EE.var(x2)}
    hyps = tuple(ctx.hyps) + (bx, EE.subst(bx, ren),
                              EE.op("<", EE.var(x), EE.var(x2)))
    r = CK.commutes(a, eff_subst(a, ren), hyps)
    if not r:
        return CK.Result(False, "two iterations do not commute: " + r.reason,
                         r.model)
    r = CK.shadows(a, a, tuple(ctx.hyps) + (bx, ))
    if not r:
        return CK.Result(False, "an iteration is not idempotent: " + r.reason,
                         r.model)
    return r
