"""``Procedure.compile``: a callable for the generated C, plain or sanitized.

Kept apart from ``runner`` (plain builds) and ``sanitized`` (builds run in a
child process), which both build on ``runner``'s compiler settings, so that
neither has to import the other.
"""
from __future__ import annotations

from .runner import CompiledProcedure
from .sanitized import SanitizedProcedure


def compile_callable(procedure, **opts):
    """``Procedure.compile``: see ``CompiledProcedure``; with ``sanitize``,
    a ``sanitized.SanitizedProcedure`` (each call runs in a child process,
    since no sanitizer runtime can be loaded into Python)."""
    if opts.get("sanitize"):
        return SanitizedProcedure(procedure, **opts)
    opts.pop("sanitize", None)
    return CompiledProcedure(procedure, **opts)
