"""Symbolic data values: hash-consed terms over uninterpreted inputs.

A term is an ``int`` naming one node of a ``Terms`` table; two terms are
the same int exactly when they are the same tree. Every data operation of
docs/semantics.md is a deterministic function of its operands' values and
their evaluation types, so equal trees (with the types in the node) are
equal values, bit for bit: this is the validator's value equality. Float
operations stay uninterpreted (no reassociation, no algebra), which is
what the semantics promise, except that the operands of ``+`` and ``*``
are put in one order (they commute: a NaN's sign and payload aside, which
the semantics leave unspecified); only conversions that provably keep the
value are dropped (a value converted to a type that holds it exactly,
``datasem.holds_exactly``: a term stands for a value, whatever the type it
is next computed in, so ``y = t`` after ``t: f64; t = x`` is ``x``).
"""
from __future__ import annotations

import numpy as np

from ..core_ir import datasem as D
from ..core_ir.nodes import IR

__all__ = ["Terms"]


def _const_key(v, t):
    """A literal value's identity: integers by value, floats by bits."""
    if D.is_int(t):
        return int(v)
    return np.asarray(v).tobytes()


class Terms:
    """An append-only table of term nodes ``(kind, *fields)``.

    ``vtype[id]`` is the data type of the term's values (an integer term
    may be known to fit a narrower type than I32).
    """

    def __init__(self):
        self.nodes = []
        self.index = {}
        self.vtype = []

    def _mk(self, node, vt):
        k = self.index.get(node)
        if k is None:
            k = self.index[node] = len(self.nodes)
            self.nodes.append(node)
            self.vtype.append(vt)
        return k

    # -- leaves
    def input(self, name, idx, t):
        """The initial value of argument ``name`` at element ``idx``."""
        return self._mk(("in", name, tuple(idx)), t)

    def config(self, cfg, field, t):
        return self._mk(("cfg", cfg.name(), field), t)

    def undef(self, tag, idx, t):
        """A value read before any write (a fresh unknown: equal to no
        other term)."""
        return self._mk(("undef", tag, tuple(idx)), t)

    def const(self, v, t):
        return self._mk(("k", t, _const_key(v, t)), t)

    # -- operations (evaluation type ``t``)
    def binop(self, op, t, a, b):
        if op in ("+", "*") and b < a:
            # + and * commute: exactly on wrapping integers, and on floats
            # but for a NaN's sign and payload (unspecified: semantics.md)
            a, b = b, a
        return self._mk(("op", op, t, a, b), t)

    def neg(self, t, a):
        return self._mk(("neg", t, a), t)

    def extern(self, name, t, args):
        return self._mk(("ext", name, t, tuple(args)), t)

    def convert(self, a, src, dst):
        """``a`` (of evaluation type ``src``) converted to ``dst``."""
        if src is dst:
            return a
        if D.holds_exactly(self.vtype[a], dst):
            return a              # the value fits: the conversion keeps it
        return self._mk(("conv", a, src, dst), dst)

    # -- display
    def show(self, k, depth=6):
        n = self.nodes[k]
        if depth <= 0:
            return "..."
        kind = n[0]
        if kind == "in":
            return f"{n[1]}[{', '.join(map(str, n[2]))}]" if n[2] else n[1]
        if kind == "cfg":
            return f"{n[1]}.{n[2]}"
        if kind == "undef":
            return f"<unwritten {n[1]}{list(n[2])}>"
        if kind == "k":
            t = n[1]
            if D.is_int(t):
                return str(n[2])
            return repr(float(np.frombuffer(n[2], dtype=_NP_DT[t])[0]))
        if kind == "op":
            return (f"({self.show(n[3], depth - 1)} {n[1]} "
                    f"{self.show(n[4], depth - 1)})")
        if kind == "neg":
            return f"-{self.show(n[2], depth - 1)}"
        if kind == "ext":
            return (f"{n[1]}(" + ", ".join(self.show(a, depth - 1)
                                          for a in n[3]) + ")")
        if kind == "conv":
            return f"{_tname(n[3])}({self.show(n[1], depth - 1)})"
        return str(n)


_NP_DT = {IR.F16: np.float16, IR.F32: np.float32, IR.F64: np.float64}


def _tname(t):
    return type(t).__name__.replace("_cls", "").lower()
