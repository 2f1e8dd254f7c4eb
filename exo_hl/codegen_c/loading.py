"""``Procedure.compile``: a callable for the generated C, plain or sanitized.

Kept apart from ``runner`` (plain builds) and ``sanitized`` (builds run in a
child process), which both build on ``runner``'s compiler settings, so that
neither has to import the other.
"""
from __future__ import annotations

import numpy as np

from .runner import CompiledProcedure
from .sanitized import SanitizedProcedure


def compile_callable(procedure, **opts):
    """``Procedure.compile``: see ``CompiledProcedure``; with ``sanitize``,
    a ``sanitized.SanitizedProcedure`` (each call runs in a child process,
    since no sanitizer runtime can be loaded into Python)."""
    _check_option_types(opts)
    from .cross import TARGETS as CROSS, CrossProcedure, check_host_target
    if opts.get("target") in CROSS:
        if opts.pop("sanitize", None):
            raise ValueError("compile(sanitize=True) runs on the host; a "
                             "cross target runs under qemu")
        return CrossProcedure(procedure, **opts)
    from ..core_ir.cpu_features import proc_features
    from .analysis import as_ir
    ir = as_ir(procedure)
    from .runner import TARGETS as HOST
    if opts.get("target") in (None, "host") or opts.get("target") in HOST:
        check_host_target(ir.name, proc_features(ir), opts.get("target"))
    if opts.get("sanitize"):
        return SanitizedProcedure(procedure, **opts)
    opts.pop("sanitize", None)
    return CompiledProcedure(procedure, **opts)


#: compile()'s options and the types each takes (None: the default)
_OPTION_TYPES = {"openmp": (bool, np.bool_), "emulate": (bool, np.bool_),
                 "cc": (str, ), "cflags": (str, ), "target": (str, ),
                 "sanitize": (bool, np.bool_, str)}


def _check_option_types(opts) -> None:
    """``TypeError`` for an option of the wrong type: ``openmp="no"`` and
    ``emulate="false"`` were taken as true (any non-empty string)."""
    for name, types in _OPTION_TYPES.items():
        v = opts.get(name)
        if v is not None and not isinstance(v, types):
            want = " or ".join(t.__name__ for t in types)
            raise TypeError(f"compile(): option {name!r} must be {want} (or "
                            f"None), got {type(v).__name__} {v!r}")
