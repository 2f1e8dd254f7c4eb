"""Small helpers shared by the standard library (public API only)."""
from __future__ import annotations

import re
from typing import NamedTuple

from exo_hl import SchedulingError


class Run(NamedTuple):
    """The ``n`` statements from the one at ``path`` on, in its block: the
    region a composition built in place of one statement (where its
    instruction selection may act, and nowhere else)."""
    path: tuple
    n: int


def loop_cursor(p, loop):
    """The loop ``loop`` (a pattern or a cursor, of ``p`` or an ancestor)
    of ``p`` as a cursor; any other argument is a ``SchedulingError``, as
    for the primitives."""
    check_target(p, loop, "a loop")
    c = p.find_loop(loop) if isinstance(loop, str) else p.forward(loop)
    if not c.is_loop():
        raise SchedulingError(f"{p.name()}: {loop!r} is not a loop")
    return c


def loop_pair(p, outer, inner, who):
    """The loops ``outer`` and ``inner`` (patterns or cursors, of ``p`` or
    an ancestor) as cursors of ``p``, ``inner`` directly in the body of
    ``outer``. As for the primitives' pairs, a pattern stands for any of
    its matches (one with ``#k``): the first related pair in program order.
    Resolving each alone took the first ``j`` of the procedure even when
    it was in another nest than ``i``, and a helper then transformed that
    nest; with no such pair, ``SchedulingError``."""
    def candidates(x):
        check_target(p, x, "a loop")
        return p.find_loop(x, many=True) if isinstance(x, str) \
            else [loop_cursor(p, x)]
    outs, ins = candidates(outer), candidates(inner)
    for o in outs:
        for c in ins:
            if c.path()[:-1] == o.path() and c.path()[-1][0] == "body":
                return o, c
    raise SchedulingError(
        f"{who}: the loop {inner!r} is not directly inside the loop "
        f"{outer!r} (the loops {outer!r}: "
        f"{', '.join(_fmt(o.path()) for o in outs)}; {inner!r}: "
        f"{', '.join(_fmt(c.path()) for c in ins)})")


def _fmt(path):
    """A statement path as ``body[0].body[1]`` (for messages)."""
    return ".".join(f"{f}[{k}]" for f, k in path)


def stmt_cursor(p, target, what="a statement"):
    """The statement ``target`` (a pattern or a statement cursor, of ``p``
    or an ancestor) of ``p`` as a cursor."""
    check_target(p, target, what)
    c = p.find(target) if isinstance(target, str) else p.forward(target)
    if not callable(getattr(c, "is_loop", None)):
        raise SchedulingError(f"{p.name()}: {target!r} is not {what}")
    return c


def at_path(p, path):
    """The statement of ``p`` at ``path`` (a cursor's ``.path()``): how a
    composition finds what one of its own steps built where it knows the
    shape of the result (the divided loop stands where the loop stood),
    rather than by a name another nest may share."""
    (_, k), *rest = path
    try:
        c = p.body()[k]
        for field, k in rest:
            c = (c.body() if field == "body" else c.orelse())[k]
    except IndexError:
        # a step did not build the shape the composition expected: a
        # refusal, not an IndexError from deep inside a helper
        raise SchedulingError(
            f"{p.name()}: no statement at {_fmt(path)} (a step of the "
            f"composition did not build what it expected)") from None
    return c


def sibling_path(path, delta):
    """The path of the statement ``delta`` places after ``path``."""
    *parent, (field, k) = path
    return tuple(parent) + ((field, k + delta), )


def ancestors(c):
    """The statements enclosing the statement cursor ``c`` (loops and
    ifs), innermost first."""
    out = []
    while True:
        try:
            c = c.parent()
        except SchedulingError:
            return out
        if c is None or not callable(getattr(c, "is_loop", None)):
            return out
        out.append(c)


def alloc_of(c, name):
    """The allocation of ``name`` visible at the statement cursor ``c`` (the
    one its reads and writes of ``name`` denote: names are unambiguous
    where visible, docs/api.md §4), or None for an argument."""
    s = c
    while s is not None:
        k = 1
        while True:
            try:
                prev = s.prev(k)
            except SchedulingError:
                break
            if prev.is_alloc() and prev.name() == name:
                return prev
            k += 1
        try:
            s = s.parent()
        except SchedulingError:         # the top level: an argument
            return None
    return None


def fresh_name(p, base):
    """``base``, or ``base_1``, ``base_2``... if ``p`` already spells it."""
    text = str(p)
    if not mentions(text, base):
        return base
    k = 1
    while mentions(text, f"{base}_{k}"):
        k += 1
    return f"{base}_{k}"


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
        except SchedulingError:
            return out
        if c is None:
            return out
        if c.is_loop():
            out.append(c)
        elif not c.is_if():
            return out


def data_leaves(e, out):
    """The literals and the reads of ``e`` (an expression cursor), in
    order, not looking into indices."""
    kind = type(e.node()).__name__
    if kind in ("Const", "Read"):
        out.append(e)
    elif kind != "WindowExpr":
        for a in e.args():
            data_leaves(a, out)
    return out
