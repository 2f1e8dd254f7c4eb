"""Is a location a faithful stand-in for an expression of literals only?

A literal takes the type of its context (docs/semantics.md): the operation
it is an operand of, else the location it is stored into. So an
expression of literals only has no value of its own: ``2.5 + 2.5`` stored
into an ``i32`` is 4, into an ``f32`` 5; ``16777217.0 - 1.0`` is 16777215
in ``f32``, 16777216 in ``f64``; ``-0.0`` stored into an integer reads
back as ``+0.0``. Rewrites that move such an expression ``e`` between a
location of type ``T`` and the places that read it (``bind_expr``,
``bind_config``, ``inline_assign``, ``inline_loop``, ``merge_writes``,
through ``rewrites/_precision.holder_problem``) ask whether a statement
computes the same with ``e`` and with a read of the location in its place.

``literal_holder_problem`` answers exactly, as ``interpret()`` computes
(``datasem``): it computes the evaluation type and context of every node
of the statement's expression both ways, requires every operation around
``e`` to keep its evaluation type (a typed read in place of literals can
change it), and compares each occurrence's value, bit for bit: ``e``
computed in its context there, against ``e`` computed in ``T``, stored and
read back, converted.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import datasem as D
from . import types as T
from .nodes import IR
from .syms import Sym

__all__ = ["literal_holder_problem"]


def _name(t) -> str:
    return T.TYPE_NAMES.get(t, type(t).__name__)


def _location_type(t):
    """The data type a location of type ``t`` holds (``R`` is f32)."""
    return IR.F32 if t is IR.Num else t


def _evaluated(s):
    """(the expression the data statement ``s`` evaluates, the type it
    stores to, the path of ``s.rhs`` in it): ``x += e`` evaluates ``x +
    e``, as the interpreter does."""
    if isinstance(s, IR.WriteConfig):
        return s.rhs, _location_type(s.config.lookup_type(s.field)), ()
    w = _location_type(T.basetype(s.type))
    if isinstance(s, IR.Reduce):
        cur = IR.Read(s.name, s.idx, type=s.type, srcinfo=s.srcinfo)
        return IR.BinOp("+", cur, s.rhs, type=s.type), w, (1, )
    return s.rhs, w, ()


def _children(e):
    if isinstance(e, IR.USub):
        return (e.arg, )
    if isinstance(e, IR.BinOp):
        return (e.lhs, e.rhs)
    if isinstance(e, IR.Extern):
        return tuple(e.args)
    return ()


def _contexts(e, ctx, path=(), out=None):
    """``{path: (context, evaluation type, node)}`` of every data node of
    ``e`` evaluated in context ``ctx``, as ``interpret()`` gives them
    (``core_ir.datasem``): the context of an operand is the evaluation
    type of its operation, of an argument of an extern with its own type
    rule its own (``ext_arg_context``)."""
    out = {} if out is None else out
    t = D.eval_type(e, ctx)
    out[path] = (ctx, t, e)
    own_args = isinstance(e, IR.Extern) and e.f.own_arg_types
    for i, c in enumerate(_children(e)):
        _contexts(c, D.ext_arg_context(c) if own_args else t, path + (i, ),
                  out)
    return out


def _paths_of(e, target, path=()):
    """Paths (as in ``_contexts``) of the occurrences of ``target``."""
    if e == target:
        return [path]
    out = []
    for i, c in enumerate(_children(e)):
        out += _paths_of(c, target, path + (i, ))
    return out


def _replace_at(e, paths, new, path=()):
    if path in paths:
        return new
    cs = _children(e)
    if not cs or not any(p[:len(path)] == path for p in paths):
        return e
    new_cs = [_replace_at(c, paths, new, path + (i, ))
              for i, c in enumerate(cs)]
    if isinstance(e, IR.USub):
        return e.update(arg=new_cs[0])
    if isinstance(e, IR.BinOp):
        return e.update(lhs=new_cs[0], rhs=new_cs[1])
    return e.update(args=tuple(new_cs))


def _a(t) -> str:
    """``t``'s name with its indefinite article ("an i32", "a f32")."""
    n = _name(t)
    return ("an " if n[0] in "aeiou" else "a ") + n


def _show(v, t) -> str:
    if D.is_int(t):
        return str(int(v))
    return f"{float(v)!r}"


def literal_holder_problem(e, t, s) -> Optional[str]:
    """Why a location of type ``t`` holding the literal-only ``e`` cannot
    replace ``e`` in the data statement ``s`` (None: it can; see the
    module's docstring)."""
    with np.errstate(all="ignore"):    # out of range: inf, as stored
        return _problem(e, t, s)


def _problem(e, t, s) -> Optional[str]:
    """Why a location of type ``t`` holding the literal-only ``e`` cannot
    replace ``e`` in the data statement ``s`` (None: it can).

    A literal takes the type of its context (docs/semantics.md): ``e``
    stored into the location is computed in ``t``, where it stood in the
    context ``s`` gives it. So compare, exactly (bits), what ``s`` computes
    with ``e`` and with the location: every operation around ``e`` keeps
    its evaluation type, and each occurrence contributes the same value."""
    root, w, _ = _evaluated(s)
    paths = _paths_of(root, e)
    if not paths:
        return None
    ht = _location_type(t)
    if not D.is_int(ht) and not D.is_float(ht):
        return f"a {_name(t)} location does not hold data"
    hd = D.domain(ht)
    try:
        raw = D.const_eval(e, hd)
    except Exception as x:   # an extern refusing its arguments
        return f"'{_expr_text(e)}' cannot be evaluated ({x})"
    if raw is None:
        return None  # not literal-only
    held = D.convert(raw, hd, ht)
    holder = IR.Read(Sym("holder"), (), type=ht, srcinfo=e.srcinfo)
    ctx0 = D.domain(w)
    old = _contexts(root, ctx0)
    new = _contexts(_replace_at(root, set(paths), holder), ctx0)
    txt = _expr_text(e)
    for p, (c, te, node) in old.items():
        if any(p[:len(q)] == q and p != q for q in paths):
            continue    # inside an occurrence
        c2, te2, _ = new[p]
        if p in paths:
            if c != c2:
                return (f"'{txt}' is an argument computed in {_name(c)} "
                        f"there, {_a(t)} location is passed as "
                        f"{_name(c2)}")
            continue
        if (c, te) != (c2, te2):
            return (f"'{_expr_text(node)}' is computed in {_name(te)} with "
                    f"'{txt}' in it, in {_name(te2)} with {_a(t)} location "
                    f"in its place (a literal takes the type of its "
                    f"context)")
    for p in paths:
        c = old[p][0]
        final = w if p == () else c
        try:
            want = D.convert(D.const_eval(e, c), c, final)
        except Exception as x:   # an extern refusing its arguments
            return f"'{txt}' cannot be evaluated ({x})"
        got = D.convert(held, hd, final)
        if not D.same_value(want, got):
            there = _show(got, final)
            return (f"'{txt}' is {_show(want, final)} where it is used "
                    f"(computed in {_name(c)}), but {_a(t)} location "
                    f"holds {_show(held, ht)}"
                    + (f", which is {there} there"
                       if there != _show(held, ht) else ""))
    return None


def _expr_text(e) -> str:
    try:
        from .printer import expr_to_str
        return expr_to_str(e)
    except Exception:  # never let the printer hide the real reason
        return repr(e)
