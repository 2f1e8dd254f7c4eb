"""``split(loop, factor, outer, inner, tail)``: strip-mine a loop.

``for i in seq(lo, hi): s`` becomes ``for outer: for inner: s[i -> c*outer +
inner + lo]`` (``c`` = factor). The trip count ``n = hi - lo`` need not be a
multiple of ``c``; ``tail`` says how the remainder is handled:

* ``'guard'``: the outer loop runs ``(n + c - 1) / c`` times and the body is
  guarded by ``if c*outer + inner < n``;
* ``'cut'``: the main nest runs ``n / c`` times, then a remainder loop
  ``for inner in seq(0, n % c)`` (a fresh copy of the body) finishes;

  for both, when ``n`` is provably a multiple of ``c`` (a literal, or from
  the preconditions and context, e.g. ``assert n % 16 == 0``) the split is
  the perfect one: no guard, no remainder loop;
* ``'perfect'``: ``n % c == 0`` must be provable from the preconditions and
  the enclosing context (SMT, via ``effects.prove``), else SchedulingError.

Splitting only re-indexes the same iterations in the same order, so no
dependence check is needed. The one subtlety is evaluation time: the original
evaluates ``lo``/``hi`` once before the loop, while the guard and the
remainder loop evaluate them later. That is only different when the bounds
read configuration state the body writes, which is checked (and rejected).
"""
from __future__ import annotations

import keyword

from ..core_ir.nodes import IR
from ..core_ir.syms import Sym
from ..core_ir.traversal import fresh_copy, subst
from ..core_ir import build as B
from ..core_ir import simplify as S
from ..core_ir.printer import expr_to_str
from ..effects import api as E
from ..provenance import derive
from . import _common as C

_TAILS = ("guard", "cut", "perfect")


def split(proc, loop, factor, outer, inner, tail="guard"):
    path, s = C.resolve_loop(proc, loop, "split")
    err = lambda msg: C.scheduling_error(proc, s, "split: " + msg)
    if isinstance(factor, bool) or not isinstance(factor, int) or factor <= 0:
        raise err(f"factor must be a positive int, got {factor!r}")
    if tail not in _TAILS:
        raise err(f"tail must be one of {', '.join(map(repr, _TAILS))}, "
                  f"got {tail!r}")
    _check_names(proc, path, s, outer, inner, err)
    # the guard / remainder loop re-evaluate the bounds inside / after it
    C.check_moved(proc, "split", [C.Moved(
        "loop bounds", s, (s.lo, s.hi), s.body,
        "the loop bounds",
        "the loop body")])

    pir = proc.ir()
    env = S.env_at(pir, path)
    si = s.srcinfo
    n = S.simplify_expr(B.sub(s.hi, s.lo, si), env)
    n_const = S.const_value(n, env)
    o_sym, i_sym = Sym(outer), Sym(inner)

    divisible = B.cmp("==", B.binop("%", n, B.const(factor, si),
                                    srcinfo=si), B.const(0, si), si)
    if tail == "perfect":
        if not E.prove_at(pir, path, divisible):
            raise err(f"perfect split requires the trip count "
                      f"{expr_to_str(n)} to be divisible by {factor}, which "
                      f"cannot be proven from the preconditions")
    if n_const is not None:
        exact = tail == "perfect" or n_const % factor == 0
    else:
        # a trip count the preconditions make a multiple of the factor
        # (``assert N % 16 == 0``) needs no guard and no remainder loop
        exact = tail == "perfect" or factor == 1 or \
            E.prove_at(pir, path, divisible)
    if tail == "cut" and not exact and not E.prove_at(
            pir, path, B.cmp("<=", s.lo, s.hi, si)):
        # with floor semantics a negative trip count n has n % c > 0: the
        # remainder loop would run iterations the original never ran
        raise err(f"cannot prove {expr_to_str(s.lo)} <= {expr_to_str(s.hi)}, "
                  f"so the remainder loop of a 'cut' split may run iterations "
                  f"the original loop does not (use tail='guard')")

    if tail == "guard" and not exact:
        n_outer = B.binop("/", B.add(n, B.const(factor - 1, si), si),
                          B.const(factor, si), srcinfo=si)
    else:
        n_outer = B.binop("/", n, B.const(factor, si), srcinfo=si)
    n_outer = S.simplify_expr(n_outer, env)

    idx = B.add(B.add(B.mul(B.const(factor, si), B.index_read(o_sym, si),
                            si),
                      B.index_read(i_sym, si), si), s.lo, si)
    body = tuple(subst(x, {s.iter: idx}) for x in s.body)
    if tail == "guard" and not exact:
        cond = B.cmp("<", B.add(B.mul(B.const(factor, si),
                                      B.index_read(o_sym, si), si),
                                B.index_read(i_sym, si), si), n, si)
        body = (IR.If(cond, body, (), srcinfo=si), )
    env_o = S.with_loop(env, o_sym, B.const(0, si), n_outer)
    env_i = S.with_loop(env_o, i_sym, B.const(0, si), B.const(factor, si))
    body = S.simplify_stmts(body, env_i)
    inner_loop = B.for_loop(i_sym, B.const(0, si), B.const(factor, si), body,
                            s.mode, si)
    outer_loop = B.for_loop(o_sym, B.const(0, si), n_outer, (inner_loop, ),
                            s.mode, si)
    new = [outer_loop]

    if tail == "cut" and not exact:
        t_sym = Sym(inner)
        n_tail = S.simplify_expr(
            B.binop("%", n, B.const(factor, si), srcinfo=si), env)
        t_idx = B.add(B.add(B.mul(B.const(factor, si), n_outer, si),
                            B.index_read(t_sym, si), si), s.lo, si)
        t_body = fresh_copy(tuple(subst(x, {s.iter: t_idx}) for x in s.body))
        t_body = S.simplify_stmts(
            t_body, S.with_loop(env, t_sym, B.const(0, si), n_tail))
        new.append(B.for_loop(t_sym, B.const(0, si), n_tail, t_body, s.mode,
                              si))

    new_ir = C.replace_stmts_at(pir, path, tuple(new))
    # the loop's cursor follows to the outer loop, its body's cursors to the
    # main (non-remainder) copy of the body
    path = tuple(path)
    into = path + (("body", 0), )  # the statement holding the body
    if tail == "guard" and not exact:
        into += (("body", 0), )
    table = {path: path}
    table.update({path + (("body", k), ): into + (("body", k), )
                  for k in range(len(s.body))})
    # the body runs once per (io, ii) as it ran once per i: a gap at an end
    # of i's body is at that end of ii's (or its guard's) body
    fwd = C.forward_lists(C.forward_table(
        table, C.forward_replace(path, len(new))),
        {(path, "body"): (into, "body")})
    return derive(proc, new_ir, "split", forward=fwd)


# ---------------------------------------------------------------------------
# checks

def _check_names(proc, path, loop, outer, inner, err):
    """New iterator names must be identifiers that no visible or used name
    already spells (so the printed program reads back unambiguously)."""
    for nm in (outer, inner):
        if not isinstance(nm, str) or not nm.isidentifier() \
                or keyword.iskeyword(nm):
            raise err(f"new loop names must be identifiers, got {nm!r}")
    if outer == inner:
        raise err(f"outer and inner names are both {outer!r}")
    taken = C.names_in_use(proc, path, loop, loop.body)
    taken.discard(loop.iter.name)
    for nm in (outer, inner):
        if nm in taken:
            raise err(f"new loop name {nm!r} is already used in scope; "
                      f"choose a fresh name")
