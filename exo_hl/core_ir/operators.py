"""Operators and loop kinds of the IR, defined once.

The grammar (``loopir.asdl``) has ``BinOp(string op, ...)`` and
``loop_mode = Seq | Par | ParDynamic``; this table says which strings
``op`` may be and, for each, everything another module needs to know
about it: how Python spells it (the parser and the pattern matcher), how
tightly it binds in Python and in C (the printer and the C emitter), how
C spells it, its value on control values (the interpreter, constant
folding, the effect expressions), and its family (arithmetic,
comparison, logical), which the simplifier and the SMT translation
dispatch on. What loop kinds are called in source is here too. A new
operator is one row; the test in
``tests/core_ir/test_operators.py`` walks every row through every consumer.
"""
from __future__ import annotations

import ast
import operator as _py
from dataclasses import dataclass
from typing import Callable, Dict, Optional

from .nodes import IR

__all__ = ["Operator", "OPERATORS", "BY_NAME", "ARITH_OPS", "CMP_OPS",
           "BOOL_OPS", "PY_ARITH", "PY_CMP", "PY_BOOL", "PY_PREC", "C_PREC",
           "C_SPELLING", "CONTROL_EVAL", "FLIP", "COMMUTATIVE",
           "PREC_OR", "PREC_AND", "PREC_NOT", "PREC_CMP", "PREC_ADD",
           "PREC_MUL", "PREC_UNARY", "PREC_ATOM", "C_PREC_EQ",
           "LoopKind", "LOOP_KIND_TABLE", "LOOP_KINDS", "loop_kind_name",
           "is_parallel"]

ARITH, CMP, BOOL = "arith", "cmp", "bool"

# Python's precedence levels (higher binds tighter); ``not``, unary minus
# and atoms are not binary operators but the printers need their place.
PREC_OR, PREC_AND, PREC_NOT, PREC_CMP = 1, 2, 3, 4
PREC_ADD, PREC_MUL, PREC_UNARY, PREC_ATOM = 5, 6, 7, 8
# C puts equality below the ordering comparisons (and ``!`` among unary
# operators); every other level is Python's.
C_PREC_EQ = 3


@dataclass(frozen=True)
class Operator:
    """One binary operator of the IR.

    ``control`` is its value on control values (integers and booleans):
    ``/`` and ``%`` floor (docs/semantics.md). Data values follow the data
    type's own rules (``core_ir/datasem.py``). ``flip`` is the comparison
    with its operands swapped (``a < b`` is ``b > a``).
    """
    op: str
    kind: str
    py: type
    prec: int
    c: str
    c_prec: int
    control: Callable
    commutative: bool = False
    flip: Optional[str] = None


def _and(a, b):
    return a and b


def _or(a, b):
    return a or b


# ``//`` is not an operator of the language: ``/`` already floors on
# control values.
OPERATORS = (
    Operator("+", ARITH, ast.Add, PREC_ADD, "+", PREC_ADD, _py.add, True),
    Operator("-", ARITH, ast.Sub, PREC_ADD, "-", PREC_ADD, _py.sub),
    Operator("*", ARITH, ast.Mult, PREC_MUL, "*", PREC_MUL, _py.mul, True),
    Operator("/", ARITH, ast.Div, PREC_MUL, "/", PREC_MUL, _py.floordiv),
    Operator("%", ARITH, ast.Mod, PREC_MUL, "%", PREC_MUL, _py.mod),
    Operator("<", CMP, ast.Lt, PREC_CMP, "<", PREC_CMP, _py.lt, flip=">"),
    Operator("<=", CMP, ast.LtE, PREC_CMP, "<=", PREC_CMP, _py.le,
             flip=">="),
    Operator(">", CMP, ast.Gt, PREC_CMP, ">", PREC_CMP, _py.gt, flip="<"),
    Operator(">=", CMP, ast.GtE, PREC_CMP, ">=", PREC_CMP, _py.ge,
             flip="<="),
    Operator("==", CMP, ast.Eq, PREC_CMP, "==", C_PREC_EQ, _py.eq, True,
             flip="=="),
    Operator("and", BOOL, ast.And, PREC_AND, "&&", PREC_AND, _and, True),
    Operator("or", BOOL, ast.Or, PREC_OR, "||", PREC_OR, _or, True),
)

BY_NAME: Dict[str, Operator] = {o.op: o for o in OPERATORS}


def _of(kind):
    return tuple(o for o in OPERATORS if o.kind == kind)


#: Python operator class -> IR op, per family. ``/`` and ``%`` are floor
#: division and modulo on control values, the data type's own division
#: and remainder on data (docs/semantics.md). Python's ``!=`` is parsed
#: as ``not ==``.
PY_ARITH = {o.py: o.op for o in _of(ARITH)}
PY_CMP = {o.py: o.op for o in _of(CMP)}
PY_BOOL = {o.py: o.op for o in _of(BOOL)}

ARITH_OPS = frozenset(o.op for o in _of(ARITH))
CMP_OPS = frozenset(o.op for o in _of(CMP))
BOOL_OPS = frozenset(o.op for o in _of(BOOL))

#: IR op -> precedence in Python source / in C
PY_PREC = {o.op: o.prec for o in OPERATORS}
C_PREC = {o.op: o.c_prec for o in OPERATORS}
#: IR op -> C operator
C_SPELLING = {o.op: o.c for o in OPERATORS}
#: IR op -> its value on control values (not short-circuiting)
CONTROL_EVAL = {o.op: o.control for o in OPERATORS}
#: comparison -> the comparison with swapped operands
FLIP = {o.op: o.flip for o in OPERATORS if o.flip is not None}
#: operators whose operands may be swapped on every value of every type
COMMUTATIVE = frozenset(o.op for o in OPERATORS if o.commutative)

@dataclass(frozen=True)
class LoopKind:
    """One loop kind: its source name (``for i in seq(0, n)``), its
    ``loop_mode`` in the IR, and whether its iterations may run at the same
    time. Parallel loops must be race-free (the effect checks), keep
    allocations and config writes out of order-dependent places (the
    rewrites ask ``is_parallel``) and become OpenMP loops in C."""
    name: str
    mode: object
    parallel: bool


LOOP_KIND_TABLE = (
    LoopKind("seq", IR.Seq, False),
    LoopKind("par", IR.Par, True),
    # the same race-free loop; in C its threads take the iterations one
    # at a time (docs/api.md, section 6), not in fixed consecutive blocks
    LoopKind("par_dynamic", IR.ParDynamic, True),
)

#: loop kind as written in source -> IR loop_mode
LOOP_KINDS = {k.name: k.mode for k in LOOP_KIND_TABLE}


def _kind(mode) -> LoopKind:
    for k in LOOP_KIND_TABLE:
        if k.mode is mode or k.mode == mode:
            return k
    raise ValueError(f"unknown loop kind {mode!r}")


def loop_kind_name(mode) -> str:
    """How the loop kind ``mode`` (``IR.Seq``, ``IR.Par``,
    ``IR.ParDynamic``) is written."""
    return _kind(mode).name


def is_parallel(mode) -> bool:
    """Whether iterations of a loop of kind ``mode`` may run concurrently."""
    return _kind(mode).parallel


def const_int(e) -> Optional[int]:
    """The value of an integer constant expression (literals and
    arithmetic on them), else None: the constant operand quasi-affine
    control arithmetic needs (``*`` by one, ``/`` and ``%`` by a positive
    one)."""
    if isinstance(e, IR.Const):
        return e.val if type(e.val) is int else None
    if isinstance(e, IR.USub):
        v = const_int(e.arg)
        return None if v is None else -v
    if isinstance(e, IR.BinOp) and e.op in ARITH_OPS:
        a, b = const_int(e.lhs), const_int(e.rhs)
        if a is None or b is None:
            return None
        if e.op in "/%" and b == 0:
            return None
        return CONTROL_EVAL[e.op](a, b)
    return None
