"""``partial_eval(*args, **sizes)``: specialize control arguments to constants.

Positional values bind the leading parameters in order, keywords bind by
name. Bound parameters leave the signature and every use (body, types of
arguments/allocations/windows, preconditions) reads the constant. Accepted:
``size`` parameters with positive ints, ``int``/``index`` with ints,
``bool`` with bools (``None`` positionally leaves a parameter unbound).
Numpy integer scalars (``np.int64(4)``) count as ints and ``np.bool_`` as
a bool, as a call of the compiled procedure takes them
(``core_ir.call_args``); a float, numpy's included, is refused for an
integer parameter even when integral (``4.0``): a call refuses it too.
The ints must be 32-bit values, as every call's control arguments are
(``core_ir.call_args``): the original has no meaning for a wider one, so a
procedure specialized to it would compute what no call of the original
can (``seq(0, 2**40)`` runs, ``k > 0`` folds to true for ``k = 2**32``).

Preconditions are evaluated after substitution: one that becomes false is an
error; one that becomes true is dropped; the rest stay, and if together they
are unsatisfiable for every value of the remaining arguments (SMT) the values
are rejected too. Every call in the body satisfied its callee's
preconditions for all admissible values, hence also for these. The result is
simplified.

The specialized procedure is a *different* procedure (fewer arguments), so it
is recorded as derived but not as equivalent to its parent.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..core_ir import simplify as S
from ..core_ir.control_ranges import I32, SIZE
from ..core_ir.nodes import IR
from ..core_ir.traversal import subst
from ..provenance import derive
from . import _common as C


def partial_eval(proc, *args, **sizes):
    ir = proc.ir()

    def err(msg):
        return C.reject(proc, ir, "partial_eval: " + msg)

    if len(args) > len(ir.args):
        raise err(f"{len(args)} positional values for {len(ir.args)} "
                  f"parameters")
    values = {}
    for fa, v in zip(ir.args, args):
        if v is not None:
            values[fa.name.name] = v
    by_name = {fa.name.name: fa for fa in ir.args}
    for k, v in sizes.items():
        if k not in by_name:
            raise err(f"'{ir.name}' has no parameter named '{k}'")
        if k in values:
            raise err(f"parameter '{k}' given twice")
        values[k] = v
    if not values:
        raise err("no values given")

    env = {}
    for name, v in values.items():
        fa = by_name[name]
        env[fa.name] = _const(fa, v, err)

    new_args = tuple(fa for fa in ir.args if fa.name not in env)
    new_args = tuple(subst(fa, env) for fa in new_args)
    preds = []
    for p in ir.preds:
        q = S.simplify_expr(subst(p, env), S.proc_env(ir.update(args=new_args,
                                                                 preds=())))
        if isinstance(q, IR.Const):
            if q.val is False:
                raise err(f"the values violate the precondition "
                          f"'{_expr_str(p)}'")
            continue
        preds.append(q)
    body = tuple(subst(s, env) for s in ir.body)
    new_ir = ir.update(args=new_args, preds=tuple(preds), body=body)
    if preds:
        _check_satisfiable(new_ir, err)
    # (simplify_proc would use the preconditions to simplify themselves away)
    new_ir = S.simplify_proc(new_ir).update(preds=tuple(preds))
    return derive(proc, new_ir, "partial_eval")


def _check_satisfiable(ir, err):
    """Reject when no values of the remaining arguments satisfy the
    preconditions: prove ``not (p1 and p2 ...)`` under size positivity."""
    from ..effects import api as EA
    conj = ir.preds[0]
    for p in ir.preds[1:]:
        conj = IR.BinOp("and", conj, p, type=IR.Bool, srcinfo=p.srcinfo)
    neg = IR.Not(conj, type=IR.Bool, srcinfo=conj.srcinfo)
    ctx = EA.context(ir.update(preds=()), (("body", 0), ))
    if EA.prove(neg, ctx):
        raise err("the values make the preconditions unsatisfiable: "
                  + "; ".join(_expr_str(p) for p in ir.preds))


def _const(fa, v, err):
    t = fa.type
    v_in = v
    pname = fa.name.name
    if t is IR.Size:
        v = _int_value(v)
        if v is None or v <= 0:
            raise err(f"size parameter '{pname}' needs a positive int, got "
                      f"{_shown(v_in)}")
        _fits(pname, v, SIZE, err)
        return IR.Const(v, type=IR.Int, srcinfo=fa.srcinfo)
    if t in (IR.Int, IR.Index):
        v = _int_value(v)
        if v is None:
            raise err(f"parameter '{pname}' needs an int, got "
                      f"{_shown(v_in)}")
        _fits(pname, v, I32, err)
        return IR.Const(v, type=IR.Int, srcinfo=fa.srcinfo)
    if t is IR.Bool:
        if not isinstance(v, (bool, np.bool_)):
            raise err(f"parameter '{pname}' needs a bool, got "
                      f"{_shown(v_in)}")
        return IR.Const(bool(v), type=IR.Bool, srcinfo=fa.srcinfo)
    raise err(f"parameter '{pname}' is not a size/int/index/bool argument "
              f"and cannot be specialized")


def _int_value(v):
    """``v`` as a Python int when it is an integer (a Python or numpy one,
    not a bool), else None."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        return None
    return int(v)


def _shown(v):
    """A refused value with its type (``4.0 (float)``, ``np.float64(4.0)
    (float64)``): a float, even an integral one, is no int."""
    return f"{v!r} ({type(v).__name__})"


def _fits(pname, v, rng, err):
    """``v`` is a value a call of the original can pass (32-bit)."""
    lo, hi = rng
    if not lo <= v <= hi:
        raise err(f"parameter '{pname}' = {v} is not a 32-bit control value "
                  f"({lo} .. {hi}): no call of the original passes it")


def _expr_str(e):
    try:
        from ..core_ir.printer import expr_to_str
        return expr_to_str(e)
    except Exception:  # the message must not fail because of the printer
        return repr(e)
