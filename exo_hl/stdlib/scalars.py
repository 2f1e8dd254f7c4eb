"""Loop-invariant scalars: move an assignment to the top (``hoist``), bind a
constant to a named scalar there (``bind_const``).

Public API only: ``bind_expr``, ``lift_alloc``, ``reorder_stmts``,
``fission_after``, ``remove_loop``, each checked by its primitive (so a
hoist that would change what the program computes is that primitive's
``SchedulingError``). The scalar's precision is asked of ``bind_expr``
(``precision=``), which proves it holds the value: a ``set_precision``
after the binding changed what the statements compute, silently (an
``f32`` scalar for ``0.1`` stored into an ``f64``, for ``300`` stored
into an ``i8``, which wraps to 44 where the ``f32`` saturates to 127).
"""
from __future__ import annotations

from exo_hl import SchedulingError

from ._util import mentions, stmt_cursor, text


def _alloc_in_block(s, name):
    """The allocation of ``name`` before ``s`` in the same block, or None."""
    k = 1
    while True:
        try:
            a = s.prev(k)
        except SchedulingError:
            return None
        if a.is_alloc() and a.name() == name:
            return a
        k += 1


def _is_binding(s):
    """A scalar's allocation or assignment (what ``hoist`` leaves at the
    top of the procedure)."""
    if s.is_alloc():
        return not getattr(s.node().type, "hi", ())    # no dimensions
    return s.is_write() and not s.idx()


def _move_to_front(p, s, past_bindings=True):
    """Move ``s`` up its block while it commutes with the statement before
    (``reorder_stmts`` proves each swap); stops at an allocation of what
    it reads or writes, or at the first statement; with
    ``past_bindings=False`` also at a scalar binding (earlier hoists keep
    their order at the top) and at a statement that spells its name."""
    while True:
        try:
            prev = s.prev()
        except SchedulingError:
            return p, s
        if not past_bindings and (_is_binding(prev) or
                                  mentions(text(prev), s.name())):
            # (above a nest with its own scalar of that name, the naming
            # rule would rename the user's scalar)
            return p, s
        if prev.is_alloc() and prev.name() in (s.name(),) + tuple(
                r.name() for r in _reads(s)):
            return p, s
        try:
            p = p.reorder_stmts(prev, s)
        except SchedulingError:
            return p, s
        s = p.forward(s)


def _reads(s):
    try:
        return s.find("_", many=True)
    except SchedulingError:
        return []


def hoist(p, stmt):
    """Move the assignment ``stmt`` (a pattern or cursor; ``x = e`` to a
    scalar) out of every loop around it and up to the top of the
    procedure: each loop is left by moving the assignment to the front of
    its body (``reorder_stmts``, proven to commute), splitting the loop
    after it (``fission_after``) and removing the loop around it
    (``remove_loop``: ``e`` does not vary with the loop and the loop runs
    at least once); its allocation is lifted with it (``lift_alloc``).
    At the top level, both go up past earlier loops (docs/api.md §9).
    Returns the procedure.

    >>> p = hoist(p, 'c = _')       # for i: c = 0.5; y[i] = x[i] * c
    >>> # ->  c = 0.5; for i: y[i] = x[i] * c
    """
    s = stmt_cursor(p, stmt, "an assignment")
    if not s.is_write() or s.idx():
        raise SchedulingError(
            f"hoist: expected an assignment to a scalar (x = e), found: "
            f"{text(s)}")
    name = s.name()
    while True:
        p, s = _move_to_front(p, s)
        try:
            loop = s.parent()
        except SchedulingError:
            # at the top level: after earlier statements (a loop before
            # the one it left) when its allocation stopped it; move the
            # allocation to the front, then the assignment up to it
            a = _alloc_in_block(s, name)
            if a is None:
                return p
            p, _ = _move_to_front(p, a, past_bindings=False)
            p, s = _move_to_front(p, p.forward(s))
            return p
        if not loop.is_loop():
            raise SchedulingError(
                f"hoist: '{text(s)}' is inside an if; hoist moves an "
                f"assignment out of loops only")
        a = _alloc_in_block(s, name)
        if a is not None:
            p = p.lift_alloc(a)
            s = p.forward(s)
            # its own allocation stopped the move: move on past what was
            # before that (another scalar's allocation, which the part
            # after the cut uses, so fission_after would refuse the cut)
            p, s = _move_to_front(p, s)
        if len(s.parent().body()) > 1:
            p = p.fission_after(s)
            s = p.forward(s)
        p = p.remove_loop(s.parent())
        s = p.forward(s)


def bind_const(p, expr, name, precision="f32"):
    """Bind the constant ``expr`` (a literal such as ``0.5``, or any data
    expression that does not vary with the loops around it; a pattern or
    cursor) to a new scalar ``name`` of ``precision``, assigned once at the
    top of the procedure (``bind_expr`` with ``precision``, ``hoist``):
    refused when a scalar of ``precision`` would not give the statements
    the value they computed with ``expr``.
    Every loop then reads ``name``, which ``vectorize`` broadcasts into a
    register (``mm256_set1_scalar_ps``, ``mm512_set1_scalar_ps``).

    >>> p = bind_const(p, p.find('0.5'), 'half')
    >>> # half: f32; half = 0.5; for i: y[i] = x[i] * half
    """
    e = _expr_cursor(p, expr)
    user = e.stmt()
    p = p.bind_expr(e, name, precision=precision)
    # the binding is the two statements bind_expr puts right before the
    # statement that used the expression: found from that statement, not
    # by its name (another nest may have a 'name'; the naming rule may
    # have renamed the new one), so no other allocation is changed
    user = p.forward(user)
    assign, alloc = user.prev(), user.prev(2)
    if not (alloc.is_alloc() and assign.is_write()
            and assign.name() == alloc.name()):       # pragma: no cover
        raise SchedulingError(
            f"bind_const: the binding of {text(e)} is not before "
            f"'{text(user)}'")
    return hoist(p, p.forward(assign))


def _expr_cursor(p, expr):
    """The expression ``expr`` (a pattern or an expression cursor, of
    ``p`` or an ancestor) of ``p`` as a cursor."""
    if isinstance(expr, str):
        c = p.find(expr)
    elif callable(getattr(expr, "expr_path", None)):
        c = p.forward(expr)
    else:
        c = None
    if not callable(getattr(c, "expr_path", None)):
        raise SchedulingError(f"{p.name()}: bind_const: expected an "
                              f"expression (a cursor or a pattern string), "
                              f"got {expr!r}")
    return c
