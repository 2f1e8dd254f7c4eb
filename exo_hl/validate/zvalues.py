"""Data values and control trees as Z3 terms.

Values live in one uninterpreted sort: an input element is ``in_<storage>``
applied to its indices, every operation an uninterpreted function named by
the operation and its evaluation type, a literal a constant named by its
bits. Z3 then decides equality by congruence, and by one law: ``+`` and
``*`` commute (``commutative``). No other algebra on floats (the
semantics forbid reassociation), which is sound because every data
operation is a deterministic function of its operands. The one
simplification is the terms module's: a conversion to a type that holds
the value exactly is dropped.
"""
from __future__ import annotations

import numpy as np
import z3

from ..core_ir import datasem as D
from .symexec import Unsupported

__all__ = ["ZV", "ctrl_z3"]

V = z3.DeclareSort("Val")


def _tn(t):
    return type(t).__name__.replace("_cls", "")


class ZV:
    """A cache of the uninterpreted functions and constants."""

    def __init__(self):
        self.fns = {}

    def fn(self, name, arity_ints=0, arity_vals=0):
        key = (name, arity_ints, arity_vals)
        f = self.fns.get(key)
        if f is None:
            sig = [z3.IntSort()] * arity_ints + [V] * arity_vals + [V]
            f = self.fns[key] = (z3.Function(name, *sig) if len(sig) > 1
                                 else z3.Const(name, V))
        return f

    def const(self, v, t):
        if D.is_int(t):
            key = str(int(v))
        else:
            key = np.asarray(v).tobytes().hex()
        return self.fn(f"k_{_tn(t)}_{key}")

    def input(self, storage, idx):
        f = self.fn(f"in_{storage}", len(idx))
        return f(*idx) if idx else f

    def undef(self, storage, idx):
        f = self.fn(f"undef_{storage}", len(idx))
        return f(*idx) if idx else f

    def op(self, op, t, a, b):
        return self.fn(f"op{op}_{_tn(t)}", 0, 2)(a, b)

    def commutative(self):
        """``f(a, b) = f(b, a)`` for the ``+`` and ``*`` made so far (the
        semantics: the same value either way, but for a NaN's sign and
        payload, which they leave unspecified), instantiated by Z3 on
        each ``f(a, b)`` it meets."""
        out = []
        for (name, ni, nv), f in self.fns.items():
            if nv == 2 and ni == 0 and name[2:3] in "+*" and \
                    name.startswith("op"):
                a, b = z3.Consts("ca cb", V)
                out.append(z3.ForAll([a, b], f(a, b) == f(b, a),
                                     patterns=[f(a, b)]))
        return out

    def neg(self, t, a):
        return self.fn(f"neg_{_tn(t)}", 0, 1)(a)

    def ext(self, name, t, args):
        return self.fn(f"ext_{name}_{_tn(t)}", 0, len(args))(*args)

    def conv(self, src, dst, a, vt):
        """(term, value type) of ``a`` (values of type ``vt``) converted
        from evaluation type ``src`` to ``dst``."""
        if src is dst:
            return a, vt
        if D.holds_exactly(vt, dst):
            return a, vt
        return self.fn(f"conv_{_tn(src)}_{_tn(dst)}", 0, 1)(a), dst

    def proph(self, sid, args):
        f = self.fn(f"V{sid}", len(args))
        return f(*args) if args else f


def ctrl_z3(t, env):
    """A control tree as a Z3 term; ``env`` maps names to Z3 terms."""
    k = t[0]
    if k == "v":
        return env[t[1]]
    if k == "c":
        return z3.IntVal(t[1])
    if k == "not":
        return z3.Not(_truth(ctrl_z3(t[1], env)))
    a = ctrl_z3(t[1], env)
    if k in ("/", "%"):
        return a / t[2] if k == "/" else a % t[2]
    b = ctrl_z3(t[2], env)
    if k == "and":
        return z3.And(_truth(a), _truth(b))
    if k == "or":
        return z3.Or(_truth(a), _truth(b))
    ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
           "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b,
           ">=": lambda: a >= b, "==": lambda: a == b,
           "!=": lambda: a != b}
    if k not in ops:
        raise Unsupported(f"control '{k}'")
    return ops[k]()


def _truth(x):
    """A boolean control value: booleans are trees ``('c', 0|1)`` (a
    ``bool`` argument or config field), conditions are Z3 booleans."""
    return x if z3.is_bool(x) else x != 0
