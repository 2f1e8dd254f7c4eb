"""Small helpers shared by the standard library (public API only)."""
from __future__ import annotations

import re

from exo_hl import SchedulingError


def loop_cursor(p, loop):
    """The loop ``loop`` (a pattern or a cursor) of ``p`` as a cursor."""
    c = p.find_loop(loop) if isinstance(loop, str) and " " not in loop \
        else (p.find(loop) if isinstance(loop, str) else loop)
    if not c.is_loop():
        raise SchedulingError(f"{p.name()}: {loop!r} is not a loop")
    return c


def loop_name(p, loop) -> str:
    """The iteration variable's name of ``loop`` in ``p``."""
    return loop_cursor(p, loop).name()


def text(cursor) -> str:
    """The source text of a cursor's statement or expression
    (``cursor.text()``)."""
    return cursor.text()


def subst_var(expr: str, name: str, value: str) -> str:
    """``expr`` with the variable ``name`` replaced by ``(value)``."""
    return re.sub(rf"\b{re.escape(name)}\b", f"({value})", expr)


def mentions(expr: str, name: str) -> bool:
    """Whether ``expr`` names the variable ``name``."""
    return re.search(rf"\b{re.escape(name)}\b", expr) is not None


def all_loops(p):
    """Every loop of ``p``, outermost first, in program order."""
    try:
        return p.find("for _ in _: _", many=True)
    except SchedulingError:
        return []


def enclosing_loops(c):
    """The loops enclosing the statement cursor ``c``, innermost first."""
    out = []
    while True:
        try:
            c = c.parent()
        except Exception:
            return out
        if c is None:
            return out
        if c.is_loop():
            out.append(c)
        elif not c.is_if():
            return out
