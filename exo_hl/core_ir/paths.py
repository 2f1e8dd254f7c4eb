"""Statement paths: naming a statement of a procedure by where it is.

A statement path is a tuple of ``(field, index)`` steps from the procedure
down, starting with ``('body', i)``; the field of a later step is ``body``
or ``orelse`` of the statement reached so far. Cursors, the effect
analysis and the rewrites all name statements this way, so the walking
lives here once.

Two flavours of lookup: the strict ``get_*`` functions (user-facing: a path
that denotes nothing raises ``InvalidCursorError``) and ``stmt_at`` /
``block_of`` (internal: the path is known to be valid).
"""
from __future__ import annotations

from typing import Iterator, Tuple

from ..errors import SchedulingError
from .nodes import IR

Path = Tuple[Tuple[str, int], ...]

__all__ = ["Path", "InvalidCursorError", "get_list", "get_stmt", "get_expr",
           "walk_with_paths", "norm_path", "stmt_at", "block_of"]


class InvalidCursorError(SchedulingError):
    """A cursor that does not (or no longer) denote anything.

    >>> p.find_loop('i').parent()         # a top-level statement
    Traceback (most recent call last):
    InvalidCursorError: ...: a top-level statement has no parent statement
    """


# ----------------------------------------------------------------------
# strict lookups
def _owner(proc_ir, parent_path):
    node = proc_ir
    for field, i in parent_path:
        lst = getattr(node, field, None)
        if lst is None or not 0 <= i < len(lst):
            raise InvalidCursorError(f"invalid path {parent_path!r}")
        node = lst[i]
    return node


def get_list(proc_ir, parent_path, field) -> tuple:
    """The statement list ``field`` of the statement at ``parent_path``."""
    owner = _owner(proc_ir, parent_path)
    if field not in ("body", "orelse") or not hasattr(owner, field):
        raise InvalidCursorError(f"{type(owner).__name__} has no {field!r}")
    return getattr(owner, field)


def get_stmt(proc_ir, path):
    """The statement at a statement path (``InvalidCursorError`` if none)."""
    if not path:
        raise InvalidCursorError("empty statement path")
    s = _owner(proc_ir, path)
    if not isinstance(s, IR.stmt):
        raise InvalidCursorError(f"path {path!r} does not denote a statement")
    return s


def get_expr(stmt, expr_path):
    """The expression at ``expr_path`` inside ``stmt``."""
    node = stmt
    for field, i in expr_path:
        v = getattr(node, field, None) if field in node._fields else None
        if v is None:
            raise InvalidCursorError(f"invalid expression path {expr_path!r}")
        if i is not None:
            if not isinstance(v, tuple) or not 0 <= i < len(v):
                raise InvalidCursorError(
                    f"invalid expression path {expr_path!r}")
            v = v[i]
        node = v
    if not isinstance(node, IR.expr):
        raise InvalidCursorError(f"path {expr_path!r} is not an expression")
    return node


# ----------------------------------------------------------------------
# walking
def walk_with_paths(stmts, prefix: Path = (), field: str = "body",
                    start: int = 0) -> Iterator[Tuple[Path, object]]:
    """``(path, stmt)`` for every statement of ``stmts`` (the list
    ``field`` of the statement at ``prefix``, from its index ``start`` on:
    a block) and below, in program order (a statement before the
    statements inside it)."""
    for i, s in enumerate(stmts, start):
        p = prefix + ((field, i), )
        yield p, s
        if isinstance(s, IR.For):
            yield from walk_with_paths(s.body, p, "body")
        elif isinstance(s, IR.If):
            yield from walk_with_paths(s.body, p, "body")
            yield from walk_with_paths(s.orelse, p, "orelse")


def map_with_paths(path: Path, stmt, fn):
    """``stmt`` (at ``path``) rebuilt bottom-up after ``fn(path, s)``: each
    statement is first replaced by ``fn``'s result, then the loop and if
    bodies of that result are mapped the same way (paths of the original
    positions, which ``fn`` keeps when it rewrites a statement in place)."""
    s = fn(path, stmt)
    if isinstance(s, IR.For):
        return s.update(body=tuple(map_with_paths(path + (("body", j), ), b,
                                                  fn)
                                   for j, b in enumerate(s.body)))
    if isinstance(s, IR.If):
        return s.update(
            body=tuple(map_with_paths(path + (("body", j), ), b, fn)
                       for j, b in enumerate(s.body)),
            orelse=tuple(map_with_paths(path + (("orelse", j), ), b, fn)
                         for j, b in enumerate(s.orelse)))
    return s


# ----------------------------------------------------------------------
# internal lookups (valid paths)
def norm_path(path) -> Path:
    """A path with bare integers read as ``('body', i)`` steps."""
    out = []
    for st in path:
        if isinstance(st, int):
            out.append(("body", st))
        else:
            f, i = st
            if f not in ("body", "orelse"):
                raise ValueError(f"bad path step {st!r}")
            out.append((f, int(i)))
    return tuple(out)


def stmt_at(proc, path):
    """The statement of ``proc`` (an ``IR.Proc``) at ``path``."""
    path = norm_path(path)
    blk = proc.body
    s = None
    for f, i in path:
        if s is not None:
            blk = getattr(s, f)
        s = blk[i]
    return s


def block_of(proc, path):
    """(the statement list containing the statement at ``path``, index)."""
    path = norm_path(path)
    if len(path) == 1:
        return proc.body, path[0][1]
    parent = stmt_at(proc, path[:-1])
    f, i = path[-1]
    return getattr(parent, f), i
