"""Typed IR builders: the common nodes rewrites construct, types filled in.

Every IR expression carries its type, and getting it wrong (an index
expression typed ``Int``, a comparison not typed ``Bool``) is a silent bug.
These builders fix the type by the node's role, so a rewrite says what it
builds (``add(i, lo)``, ``lt(zero, n)``) instead of spelling out the node.
``srcinfo`` is optional everywhere, as on the nodes themselves.
"""
from __future__ import annotations

from .nodes import IR

__all__ = ["const", "true", "index_read", "binop", "add", "sub", "mul",
           "cmp", "conj", "for_loop"]


def const(value: int, srcinfo=None):
    """An integer constant (type ``Int``, which fits any control slot)."""
    return IR.Const(value, type=IR.Int, srcinfo=srcinfo)


def true(srcinfo=None):
    """The constant ``True``."""
    return IR.Const(True, type=IR.Bool, srcinfo=srcinfo)


def index_read(sym, srcinfo=None):
    """A read of the index variable ``sym`` (a loop iterator)."""
    return IR.Read(sym, (), type=IR.Index, srcinfo=srcinfo)


def binop(op: str, a, b, type=IR.Index, srcinfo=None):
    """``a op b`` with the given result type (default: an index)."""
    return IR.BinOp(op, a, b, type=type, srcinfo=srcinfo)


def add(a, b, srcinfo=None):
    """The index expression ``a + b``."""
    return IR.BinOp("+", a, b, type=IR.Index, srcinfo=srcinfo)


def sub(a, b, srcinfo=None):
    """The index expression ``a - b``."""
    return IR.BinOp("-", a, b, type=IR.Index, srcinfo=srcinfo)


def mul(a, b, srcinfo=None):
    """The index expression ``a * b``."""
    return IR.BinOp("*", a, b, type=IR.Index, srcinfo=srcinfo)


def cmp(op: str, a, b, srcinfo=None):
    """A comparison or boolean connective (``<``, ``==``, ``and``, ...)."""
    return IR.BinOp(op, a, b, type=IR.Bool, srcinfo=srcinfo)


def conj(preds, srcinfo=None):
    """``p1 and p2 and ...`` (left-nested), or ``True`` for no predicate."""
    out = None
    for p in preds:
        out = p if out is None else cmp("and", out, p, srcinfo)
    return out if out is not None else true(srcinfo)


def for_loop(iter_sym, lo, hi, body, mode=None, srcinfo=None):
    """``for iter_sym in seq(lo, hi): body`` (``mode``: ``IR.Seq`` by
    default, or ``IR.Par``)."""
    return IR.For(iter_sym, lo, hi, tuple(body),
                  mode if mode is not None else IR.Seq, srcinfo=srcinfo)
