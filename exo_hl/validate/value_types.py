"""Value types of reads in the size-parametric proof.

A term stands for a value, whatever type it is next computed in, so a
conversion into a type that holds every value of its operand is dropped
(``zvalues.ZV.conv``, as ``terms`` does at fixed sizes). That needs the
operand's *value* type, which for a read of a temporary is not its
element type: ``t: f64; t = x`` holds f32 values when ``x`` is f32, and
``y = t`` then converts nothing. The value type of a read is the one value
type of every write it may see (its last-writer pieces), or its element
type (a value no write gave, or writes of different value types).
"""
from __future__ import annotations

import z3

from ..core_ir import datasem as D

__all__ = ["read_type", "tree_type"]


def read_type(side, st, rd, memo):
    """The value type of read ``rd`` in statement ``st`` of ``side`` (a
    ``parametric._Side``: its ``sources``); ``memo`` caches per side."""
    key = (st.sid, rd[1], rd[2])
    got = memo.get(key)
    if got is None:
        memo[key] = rd[3]          # a cycle (x += ...): the element type
        pieces, none = side.sources(st, rd)
        types = {tree_type(side, w, w.rhs, memo) for _, w, _ in pieces}
        if not z3.is_false(z3.simplify(none)):
            types.add(rd[3])
        got = types.pop() if len(types) == 1 else rd[3]
        memo[key] = got
    return got


def tree_type(side, st, tree, memo):
    """The value type of value tree ``tree`` in ``st``: its operation's
    type, or for a conversion that keeps every value
    (``datasem.holds_exactly``) its operand's; a read's ``read_type``."""
    k = tree[0]
    if k == "conv":
        inner = tree_type(side, st, tree[3], memo)
        return inner if D.holds_exactly(inner, tree[2]) else tree[2]
    if k == "neg":
        return tree[1]
    if k == "rd":
        return read_type(side, st, tree, memo)
    return tree[2]                 # k, op, ext
