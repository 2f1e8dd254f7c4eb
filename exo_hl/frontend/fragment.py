"""Parsing a fragment of surface syntax in the context of a procedure.

Scheduling calls take expressions as strings (``partition_loop(l, 'n - 4')``,
``stage_mem(..., 'C[i, j0:j0+16]', ...)``, ``add_guard(s, 'i < n')``). They
are parsed with the frontend's own parser and typing rules, in the names
visible at a position of the procedure, so that a fragment means exactly
what the same text would mean written there.

Two steps, so that callers can word the two failures differently:
``parse_text`` (Python syntax; raises ``SyntaxError``) and ``parse_expr`` /
``parse_condition`` (the procedure language; raise the frontend's
``ExoSyntaxError``/``ExoTypeError``, or ``ValueError``).
"""
from __future__ import annotations

import ast
from types import SimpleNamespace
from typing import Optional

from ..core_ir.blockinfo import sc_prefix
from ..core_ir.nodes import IR
from .parser import ProcParser, SourceMap, _Var

__all__ = ["names_at", "parse_text", "parse_expr", "parse_condition"]


def names_at(proc_ir, parent, field: str, index: int) -> dict:
    """Surface name -> (Sym, type, mem) of everything visible before
    ``get_list(parent, field)[index]``: arguments, enclosing loop
    iterators, and allocations / window statements earlier in enclosing
    blocks. Later bindings of a spelling shadow earlier ones."""
    names = {a.name.name: (a.name, a.type, a.mem) for a in proc_ir.args}
    node = proc_ir
    steps = tuple(parent) + ((field, index), )
    for k, (f, i) in enumerate(steps):
        lst = getattr(node, f)
        for s in sc_prefix(lst, i):   # binders are state changers
            if isinstance(s, IR.Alloc):
                names[s.name.name] = (s.name, s.type, s.mem)
            elif isinstance(s, IR.WindowStmt):
                names[s.name.name] = (s.name, s.rhs.type, None)
        if k == len(steps) - 1:
            break
        node = lst[i]
        if isinstance(node, IR.For):
            names[node.iter.name] = (node.iter, IR.Index, None)
    return names


def parse_text(text: str):
    """The Python expression node of ``text`` (raises ``SyntaxError``, also
    for an expression nested too deeply for Python's parser, which raises
    ``RecursionError`` or ``MemoryError`` on those)."""
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (RecursionError, MemoryError):
        raise SyntaxError(f"expression nested too deeply to parse: "
                          f"{excerpt(text)}") from None


def excerpt(text: str, n: int = 60) -> str:
    """``text`` on one line, cut after ``n`` characters: for messages."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "..."


def _parser(proc_ir, text: str, scope, filename: str, lineno: int):
    return ProcParser(SimpleNamespace(name=proc_ir.name), dict(scope or {}),
                      SourceMap(filename, [text.strip()], lineno))


def _env(names: dict) -> dict:
    return {n: _Var(sym, typ, mem) for n, (sym, typ, mem) in names.items()}


def parse_expr(proc_ir, text: str, names: dict, scope: Optional[dict] = None,
               allow_window: bool = False, filename: str = "<argument>",
               lineno: int = 1, node=None):
    """``text`` as a typed IR expression of ``proc_ir``, its names resolved
    in ``names`` (``names_at``) and then in ``scope`` (extra globals, e.g.
    ``{'stride': stride, 'Cfg': Cfg}``). ``allow_window``: a subscript with
    a slice becomes a window expression. ``node``: ``parse_text(text)``,
    when the caller already has it."""
    if node is None:
        node = parse_text(text)
    parser = _parser(proc_ir, text, scope, filename, lineno)
    env = _env(names)
    try:
        if allow_window and isinstance(node, ast.Subscript) \
                and parser.is_window_expr(node):
            return parser.window_expr(node, env)
        return parser.expr(node, env)
    except RecursionError:
        raise SyntaxError(f"expression nested too deeply: "
                          f"{excerpt(text)}") from None


def parse_condition(proc_ir, text: str, names: dict, what: str,
                    scope: Optional[dict] = None, filename: str = "<argument>",
                    lineno: int = 1, node=None):
    """``text`` as a control (``bool``) expression of ``proc_ir``; ``what``
    names it in errors ("the guard condition")."""
    if node is None:
        node = parse_text(text)
    parser = _parser(proc_ir, text, scope, filename, lineno)
    return parser.control_expr(node, _env(names), what, want_bool=True)
