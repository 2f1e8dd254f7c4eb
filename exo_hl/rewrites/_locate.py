"""Locating what a rewrite acts on: cursors, patterns and strings of the
user turned into statement paths, blocks, expressions and buffers.

Everything here either returns the located thing or raises a
``SchedulingError`` (``_reject``) saying why it cannot be found.
"""
from __future__ import annotations

import keyword
from typing import NamedTuple, Tuple

from ..core_ir.nodes import IR
from ..core_ir.paths import Path
from ..core_ir.simplify import env_at
from ..cursors import (ArgCursor, BlockCursor, Cursor, ExprCursor,
                       GapCursor, StmtCursor, find_want, forward, get_list)
from ..frontend import fragment
from ..frontend.fragment import names_at
from ._check import is_count
from ._reject import _prefix, _proc_error, scheduling_error


def to_cursor(proc, target, op: str = ""):
    """A cursor of ``proc``: cursors of ancestors are forwarded."""
    if not isinstance(target, Cursor):
        raise _proc_error(proc, f"{_prefix(op)}expected a cursor or a pattern "
                          f"string, got {target!r}")
    if target.proc() is proc:
        return target
    return forward(proc, target)


def resolve_stmt(proc, target, op: str = "") -> Tuple[Path, object]:
    """``(path, stmt)`` of a statement given as a cursor or pattern."""
    if isinstance(target, str):
        c = find_want(proc, target, "stmt")
    else:
        c = to_cursor(proc, target, op)
    if isinstance(c, BlockCursor) and len(c) == 1:
        c = c.first()
    if not isinstance(c, StmtCursor):
        raise _proc_error(proc, f"{_prefix(op)}expected a statement, got {c!r}")
    return c.path(), c.node()


def resolve_position(proc, target, op: str = ""):
    """A statement position: ``(stmt_target, before)``, where ``before``
    says the position is just before the statement rather than just after.

    A gap cursor (``c.after()``, ``c.before()``) becomes the statement
    before it (``before=False``), or, at the start of a block, the
    statement after it (``before=True``); anything else is returned as
    given with ``before=False``. An empty block has no statement to anchor
    the gap and is rejected."""
    if not isinstance(target, GapCursor):
        return target, False
    g = to_cursor(proc, target, op)
    parent, field, i = g.location()
    lst = get_list(proc.ir(), parent, field)
    if i > 0:
        return StmtCursor(proc, parent + ((field, i - 1), )), False
    if lst:
        return StmtCursor(proc, parent + ((field, 0), )), True
    raise _proc_error(proc, f"{_prefix(op)}the gap {g!r} is in an empty "
                      "block: there is no statement next to it")


def resolve_loop(proc, target, op: str = "") -> Tuple[Path, object]:
    """``(path, for_stmt)``: a loop by cursor, name (``'i'``, ``'i #1'``) or
    loop pattern."""
    if isinstance(target, str):
        c = find_want(proc, target, "loop")
        return c.path(), c.node()
    path, s = resolve_stmt(proc, target, op)
    if not isinstance(s, IR.For):
        raise scheduling_error(proc, s, f"{_prefix(op)}expected a loop")
    return path, s


def _candidates(proc, target, want: str, op: str):
    """Every ``(path, stmt)`` a target may denote: all matches of a pattern
    (one when it picks ``#k``), the one statement of a cursor."""
    if isinstance(target, str):
        return [(tuple(c.path()), c.node())
                for c in find_want(proc, target, want, many=True)]
    if want == "loop":
        path, s = resolve_loop(proc, target, op)
    else:
        path, s = resolve_stmt(proc, target, op)
    return [(tuple(path), s)]


def resolve_pair(proc, first, second, want: str, related, op: str = ""):
    """Two targets that must relate to each other (a loop and the loop
    directly inside it, two adjacent statements...): ``(path1, s1, path2,
    s2, ok)`` for the first pair, in program order of ``first`` then of
    ``second``, with ``related(path1, s1, path2, s2)``. A pattern stands for
    any of its matches, so ``('ni', 'ic')`` finds the ``ni`` loop that holds
    an ``ic`` loop wherever the first ``ni`` is. When no pair relates,
    ``ok`` is False and the first candidates are returned (for the
    message)."""
    c1 = _candidates(proc, first, want, op)
    c2 = _candidates(proc, second, want, op)
    for p1, s1 in c1:
        for p2, s2 in c2:
            if related(p1, s1, p2, s2):
                return p1, s1, p2, s2, True
    return c1[0] + c2[0] + (False, )


def directly_inside(p1, s1, p2, s2) -> bool:
    """``s2`` is the first statement of the loop body ``s1``."""
    return isinstance(s1, IR.For) and p2 == p1 + (("body", 0), )


def directly_after(p1, s1, p2, s2) -> bool:
    """``s2`` is the statement right after ``s1`` in the same block."""
    return (p1[:-1] == p2[:-1] and p1[-1][0] == p2[-1][0]
            and p2[-1][1] == p1[-1][1] + 1)


def _sibling_at_or_after(p1, s1, p2, s2) -> bool:
    return (p1[:-1] == p2[:-1] and p1[-1][0] == p2[-1][0]
            and p2[-1][1] >= p1[-1][1])


class Block(NamedTuple):
    parent: Path      # path of the owning statement (() for the proc body)
    field: str        # 'body' or 'orelse'
    lo: int           # the block is get_list(...)[lo:hi]
    hi: int
    stmts: tuple

    def paths(self):
        return [self.parent + ((self.field, i), )
                for i in range(self.lo, self.hi)]


def resolve_block(proc, target, op: str = "") -> Block:
    """A block: block cursor, statement (cursor or pattern), or a pair
    ``(first, last)`` of sibling statements."""
    if isinstance(target, (tuple, list)):
        if len(target) != 2:
            raise _proc_error(proc, f"{_prefix(op)}a block is a pair "
                              "(first_stmt, last_stmt)")
        p1, s1, p2, s2, _ = resolve_pair(proc, target[0], target[1], "stmt",
                                         _sibling_at_or_after, op)
        if p1[:-1] != p2[:-1] or p1[-1][0] != p2[-1][0]:
            raise scheduling_error(proc, s2, f"{_prefix(op)}the last statement "
                                   "of a block must be a sibling of the first")
        lo, hi = p1[-1][1], p2[-1][1] + 1
        if hi <= lo:
            raise scheduling_error(proc, s2, f"{_prefix(op)}the last statement "
                                   "of a block must not precede the first")
        parent, field = p1[:-1], p1[-1][0]
    elif isinstance(target, str) or isinstance(target, StmtCursor):
        p, _ = resolve_stmt(proc, target, op)
        parent, field, lo, hi = p[:-1], p[-1][0], p[-1][1], p[-1][1] + 1
    else:
        c = to_cursor(proc, target, op)
        if isinstance(c, StmtCursor):
            c = c.as_block()
        if not isinstance(c, BlockCursor):
            raise _proc_error(proc, f"{_prefix(op)}expected a block, got {c!r}")
        parent, field = c.parent_path(), c.field()
        lo, hi = c.range()
    stmts = get_list(proc.ir(), parent, field)[lo:hi]
    return Block(parent, field, lo, hi, stmts)


def resolve_expr(proc, target, op: str = ""):
    """``(stmt_path, expr_path, expr)`` of an expression cursor or pattern."""
    if isinstance(target, str):
        c = find_want(proc, target, "expr")
    else:
        c = to_cursor(proc, target, op)
    if not isinstance(c, ExprCursor):
        raise _proc_error(proc, f"{_prefix(op)}expected an expression, "
                          f"got {c!r}")
    return c.stmt_path(), c.expr_path(), c.node()


class Buffer(NamedTuple):
    kind: str         # 'alloc' | 'window' | 'arg'
    loc: object       # statement path, or argument index for 'arg'
    node: object      # the Alloc / WindowStmt / FnArg
    sym: object       # the buffer's Sym


def resolve_buffer(proc, target, op: str = "") -> Buffer:
    """A buffer (allocation, window statement or argument) by name,
    ``'t : _'`` pattern, or cursor."""
    if isinstance(target, str):
        c = find_want(proc, target, "buffer")
    else:
        c = to_cursor(proc, target, op)
    if isinstance(c, ArgCursor):
        return Buffer("arg", c.index(), c.node(), c.node().name)
    if isinstance(c, StmtCursor):
        s = c.node()
        if isinstance(s, IR.Alloc):
            return Buffer("alloc", c.path(), s, s.name)
        if isinstance(s, IR.WindowStmt):
            return Buffer("window", c.path(), s, s.name)
        raise scheduling_error(proc, s, f"{_prefix(op)}expected a buffer "
                               "(an allocation or an argument)")
    raise _proc_error(proc, f"{_prefix(op)}expected a buffer, got {c!r}")


def resolve_alloc(proc, target, op: str = "", why: str = "") -> Buffer:
    """``resolve_buffer`` for rewrites that change a buffer's storage: an
    argument (its layout is the caller's) or a window is refused, ``why``
    saying what only an allocation allows."""
    buf = resolve_buffer(proc, target, op)
    if buf.kind != "alloc":
        what = "an argument" if buf.kind == "arg" else "a window"
        raise scheduling_error(
            proc, None if buf.kind == "arg" else buf.node,
            f"{_prefix(op)}'{buf.sym.name}' is {what}, not an allocation"
            + (f" ({why})" if why else ""))
    return buf


def check_identifier(proc, name, op: str = "", what: str = "name") -> str:
    """Validate a user-supplied identifier (new loop/buffer/proc names)."""
    if not isinstance(name, str) or not name.isidentifier() \
            or keyword.iskeyword(name):
        raise _proc_error(proc, f"{_prefix(op)}{name!r} is not a valid "
                          f"{what} (expected a Python identifier)")
    from ..core_ir.names import globals_used
    if name in globals_used(proc.ir()):
        # the naming rule (docs/api.md §4): the new name would read as the
        # procedure, config, function or memory of that name
        raise _proc_error(proc, f"{_prefix(op)}{name!r} names something "
                          f"the procedure uses (a called procedure, config,"
                          f" function or memory); choose another {what}")
    return name


def parse_expr_at(proc, text, parent: Path, field: str, index: int,
                  op: str = "", allow_window: bool = False, scope=None):
    """Parse ``text`` (Python syntax, e.g. ``'i0 + 4'`` or
    ``'C[i, j0:j0+16]'``) as an expression of ``proc`` at the given
    position, with the frontend's typing rules. Ints become constants.
    ``scope``: extra global names (e.g. ``{'stride': stride, 'Cfg': Cfg}``).
    Raises ``SchedulingError`` for anything the frontend would reject."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str):
        raise _proc_error(proc, f"{_prefix(op)}expected an expression "
                          f"string, got {text!r}")
    try:
        node = fragment.parse_text(text)
    except SyntaxError as e:
        raise _proc_error(proc, f"{_prefix(op)}cannot parse "
                          f"{fragment.excerpt(text)!r}: {e.msg}") from None
    ir = proc.ir()
    try:
        return fragment.parse_expr(
            ir, text, names_at(ir, parent, field, index), scope=scope,
            allow_window=allow_window, filename=f"<{op or 'argument'}>",
            node=node)
    except (SyntaxError, TypeError, ValueError) as e:
        raise _proc_error(proc, f"{_prefix(op)}cannot use "
                          f"{fragment.excerpt(text)!r} here: {e}") from None


def resolve_alloc_dim(proc, buffer, dim, op: str, verb: str):
    """The allocation ``buffer`` and the constant size of its dimension
    ``dim``, for rewrites that reshape one dimension (``verb`` says how)."""
    from ..core_ir.types import shape as shape_of
    buf = resolve_alloc(proc, buffer, op)
    a = buf.node
    shape = shape_of(a.type)
    if not is_count(dim, 0) or dim >= len(shape):
        raise scheduling_error(
            proc, a, f"{op}: dim must be a dimension index of '{a.name}' "
            f"(0..{len(shape) - 1}), got {dim!r}")
    from ..core_ir.simplify import const_value
    n = const_value(shape[dim], env_at(proc.ir(), buf.loc))
    if not isinstance(n, int):
        raise scheduling_error(
            proc, a, f"{op}: dimension {dim} of '{a.name}' must have a "
            f"constant size to be {verb}")
    return buf, n
