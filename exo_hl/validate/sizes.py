"""Choosing the sizes to run at: models of the original's preconditions.

The control arguments (sizes, indices, integers, booleans) are solved for
with Z3 under the original procedure's ``assert``s, cheapest first (the
smallest sum of sizes). When the preconditions admit finitely many
assignments and all are enumerated, the check at those sizes covers every
size the preconditions allow.
"""
from __future__ import annotations

import z3

from ..core_ir.nodes import IR
from ..core_ir.types import is_control
from .limits import SIZES_RLIMIT, bound
from .symexec import Unsupported

__all__ = ["control_args", "size_models"]


def control_args(proc):
    return [a for a in proc.args if is_control(a.type)]


def _z3(e, vs):
    if isinstance(e, IR.ReadConfig):
        key = (e.config, e.field)
        if key in vs:
            v = vs[key]
            return z3.BoolVal(v) if isinstance(v, bool) else z3.IntVal(v)
    if isinstance(e, IR.Const):
        if isinstance(e.val, bool):
            return z3.BoolVal(e.val)
        return z3.IntVal(int(e.val))
    if isinstance(e, IR.Read) and not e.idx and e.name in vs:
        return vs[e.name]
    if isinstance(e, IR.USub):
        return -_z3(e.arg, vs)
    if isinstance(e, IR.Not):
        return z3.Not(_z3(e.arg, vs))
    if isinstance(e, IR.BinOp):
        a, b = _z3(e.lhs, vs), _z3(e.rhs, vs)
        op = e.op
        if op == "and":
            return z3.And(a, b)
        if op == "or":
            return z3.Or(a, b)
        if op in ("/", "%"):
            if not (isinstance(e.rhs, IR.Const) and int(e.rhs.val) > 0):
                raise Unsupported("division by a non-constant in a "
                                  "precondition")
            # z3's div/mod on a positive divisor floor, as the IR's do
            return a / b if op == "/" else a % b
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "<": lambda: a < b, "<=": lambda: a <= b,
                ">": lambda: a > b, ">=": lambda: a >= b,
                "==": lambda: a == b, "!=": lambda: a != b}[op]()
    raise Unsupported(f"precondition uses {type(e).__name__}")


def size_models(proc, limit=3, budget=4096, enumerate_upto=64, config=None):
    """(models, complete): up to ``limit`` assignments name -> value of the
    control arguments satisfying ``proc``'s preconditions, cheapest first,
    each with at most about ``budget`` as the product of its sizes;
    ``complete`` is True when these are all the assignments there are."""
    args = control_args(proc)
    vs, size_vars = {}, []
    for a in args:
        if a.type is IR.Bool:
            vs[a.name] = z3.Bool(a.name.name)
        else:
            vs[a.name] = v = z3.Int(a.name.name)
    opt_base = []
    for a in args:
        v = vs[a.name]
        if a.type is IR.Size:
            opt_base.append(v >= 1)
            size_vars.append(v)
        elif a.type is not IR.Bool:   # int and index: either sign
            opt_base.append(v >= -8)
            opt_base.append(v <= 8)      # sample small integers only
    cvs = dict(vs)
    cvs.update(config or {})   # control config fields: their fixed values
    facts = [_z3(p, cvs) for p in proc.preds]
    # is the set finite (and small)? enumerate without the budget
    complete = False
    if args:
        s = bound(z3.Solver(), SIZES_RLIMIT)
        s.add(*facts)
        for a in args:
            if a.type is IR.Size:
                s.add(vs[a.name] >= 1)
        n = 0
        allm = []
        while n <= enumerate_upto and s.check() == z3.sat:
            m = s.model()
            allm.append(_read(m, args, vs))
            s.add(z3.Or([vs[a.name] != m.eval(vs[a.name], True)
                         for a in args]))
            n += 1
        if s.check() == z3.unsat and n <= enumerate_upto:
            allm.sort(key=_cost)
            return allm, True
    else:
        return [{}], True
    out = []
    o = bound(z3.Optimize(), SIZES_RLIMIT)
    o.add(*facts, *opt_base)
    if size_vars:
        o.minimize(z3.Sum(size_vars))
    while len(out) < limit and o.check() == z3.sat:
        m = o.model()
        got = _read(m, args, vs)
        if out and _cost(got) > budget:
            break
        out.append(got)
        o.add(z3.Or([vs[a.name] != m.eval(vs[a.name], True)
                     for a in args]))
    return out, complete


def _read(m, args, vs):
    got = {}
    for a in args:
        v = m.eval(vs[a.name], model_completion=True)
        got[a.name.name] = (z3.is_true(v) if a.type is IR.Bool
                            else v.as_long())
    return got


def _cost(m):
    c = 1
    for v in m.values():
        if isinstance(v, int) and not isinstance(v, bool):
            c *= max(1, abs(v))
    return c
