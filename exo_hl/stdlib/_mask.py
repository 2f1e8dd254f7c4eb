"""The last, partial block of ``vectorize(tail='mask')``: its guard and
the bound ``m`` of the masked instructions (``i < m``).

Kept apart from ``vectorize`` (public API only, as it) so that module
stays one composition under the size limit.
"""
from __future__ import annotations

from exo_hl import SchedulingError

from ._util import mentions, subst_var, text


def guard_of(inner_loop):
    """The ``if`` that is the whole body of the loop ``inner_loop``."""
    body = list(inner_loop.body())
    if len(body) != 1 or not body[0].is_if():
        raise SchedulingError(
            f"vectorize: expected the guarded body of loop "
            f"{inner_loop.name()!r}, found: {text(inner_loop)}")
    return body[0]


def mask_bounds(part, inner_loop, inner):
    """Candidates for the bound ``m`` of the last block's guard (``ii <
    m``): that of the guarded copies (``i0 < m``, the lanes inside the
    buffers), then the loop's own (``8 * io + ii < n`` gives ``n - (8 *
    io + 0)``), which is the one when the buffers are longer than the trip
    count (no copy is guarded, or they hold more lanes than the loop
    runs); ``rewrite_expr`` proves the one taken."""
    out = []
    for s in part.body():
        if s.is_loop() and s.path() != inner_loop.path():
            try:
                out.append(text(s.find("_ < _").rhs()))
                break
            except SchedulingError:
                continue
    cond = guard_of(inner_loop).find("_ < _")
    lhs, rhs = text(cond.lhs()), text(cond.rhs())
    if mentions(lhs, inner) and not mentions(rhs, inner):
        out.append(f"({rhs}) - ({subst_var(lhs, inner, '0')})")
    if not out:
        raise SchedulingError(      # pragma: no cover - split's guard
            f"vectorize: tail='mask' cannot read the lanes of the last "
            f"block from its guard {text(cond)}")
    return out
