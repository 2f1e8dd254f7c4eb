"""Small helpers shared by the standard library (public API only)."""
from __future__ import annotations

import re

from exo_hl import SchedulingError


def loop_cursor(p, loop):
    """The loop ``loop`` (a pattern or a cursor) of ``p`` as a cursor; any
    other argument is a ``SchedulingError``, as for the primitives."""
    check_target(p, loop, "a loop")
    c = p.find_loop(loop) if isinstance(loop, str) and " " not in loop \
        else (p.find(loop) if isinstance(loop, str) else loop)
    if not c.is_loop():
        raise SchedulingError(f"{p.name()}: {loop!r} is not a loop")
    return c


def check_target(p, target, what="a statement"):
    """Raise ``SchedulingError`` unless ``target`` is a pattern string or a
    statement cursor: a scheduling call fails with nothing else, so a
    wrong argument must not surface as an ``AttributeError`` later."""
    if not isinstance(target, str) and not callable(
            getattr(target, "is_loop", None)):
        raise SchedulingError(f"{p.name()}: expected {what} (a cursor or a "
                              f"pattern string), got {target!r}")


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
