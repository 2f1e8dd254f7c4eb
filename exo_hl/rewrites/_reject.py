"""Refusing a rewrite: ``reject`` builds every ``SchedulingError``.

A refusal names the procedure and, when there is one, the statement it is
about (as it now reads) and its original source line.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..errors import SchedulingError, located


def stmt_text(stmt) -> str:
    """A statement as it now reads (printer), falling back to repr."""
    try:
        from ..core_ir.printer import stmt_to_str
        return stmt_to_str(stmt)
    except Exception:  # never let the printer hide the real error
        return repr(stmt)


def _short(text: str, max_lines: int = 8) -> str:
    lines = text.rstrip().splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["..."]
    return "\n".join(lines)


def reject(proc, at, msg: str) -> SchedulingError:
    """The ``SchedulingError`` of every refusal: ``msg`` naming the
    procedure, located at ``at``: a statement (its original source line and
    the statement as it now reads), an ``IR.Proc`` (the procedure's
    definition) or None (no location). Use as ``raise reject(...)``."""
    name = proc.name() if hasattr(proc, "name") and callable(proc.name) \
        else getattr(proc, "name", None)
    if isinstance(at, IR.Proc):
        return SchedulingError(located(msg, at.srcinfo, name))
    srcinfo = getattr(at, "srcinfo", None) if at is not None else None
    text = _short(stmt_text(at)) if at is not None else None
    return SchedulingError(located(msg, srcinfo, name, text))


#: the name most rewrites use: ``raise scheduling_error(proc, stmt, msg)``
scheduling_error = reject


def _proc_error(proc, msg: str) -> SchedulingError:
    """``reject`` located at the procedure's definition."""
    return reject(proc, proc.ir(), msg)


def _prefix(op: str) -> str:
    return f"{op}: " if op else ""
