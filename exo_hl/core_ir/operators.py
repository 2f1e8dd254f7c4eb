"""Operators and loop kinds of the IR, defined once.

The grammar (``loopir.asdl``) has ``BinOp(string op, ...)`` and
``loop_mode = Seq | Par``; this table says which strings ``op`` may be, how
Python spells each one, and what loop kinds are called in source. The
frontend's parser and the pattern matcher both read their operators from
here, so a pattern accepts exactly the operators a procedure can contain.
"""
from __future__ import annotations

import ast

from .nodes import IR

__all__ = ["ARITH_OPS", "CMP_OPS", "BOOL_OPS", "PY_ARITH", "PY_CMP",
           "PY_BOOL", "LOOP_KINDS", "loop_kind_name"]

#: Python operator class -> IR arithmetic op. ``/`` and ``%`` are floor
#: division and modulo on control values, the data type's own division
#: and remainder on data (docs/semantics.md); Python's ``//`` is not an
#: operator of the language.
PY_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/",
            ast.Mod: "%"}

#: Python comparison class -> IR comparison op (``!=`` is ``not ==``)
PY_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
          ast.Eq: "=="}

#: Python boolean operator class -> IR op
PY_BOOL = {ast.And: "and", ast.Or: "or"}

ARITH_OPS = frozenset(PY_ARITH.values())
CMP_OPS = frozenset(PY_CMP.values())
BOOL_OPS = frozenset(PY_BOOL.values())

#: loop kind as written in source (``for i in seq(0, n)``) -> IR loop_mode
LOOP_KINDS = {"seq": IR.Seq, "par": IR.Par}


def loop_kind_name(mode) -> str:
    """How the loop kind ``mode`` (``IR.Seq``/``IR.Par``) is written."""
    for name, m in LOOP_KINDS.items():
        if m is mode or m == mode:
            return name
    raise ValueError(f"unknown loop kind {mode!r}")
