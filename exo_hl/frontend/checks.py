"""Static checks run on every freshly parsed procedure (after typing).

This is only a hook: bounds and precondition checking is implemented in
``exo_hl.effects.bounds`` (built on the effect analysis). While that module
does not exist the hook does nothing, so the frontend never depends on it.
"""
from __future__ import annotations

import importlib


def run_static_checks(proc_ir) -> None:
    """Call ``exo_hl.effects.bounds.check_proc(proc_ir)`` if available; it
    raises ``BoundsError`` for out-of-bounds accesses or unprovable call
    preconditions."""
    try:
        bounds = importlib.import_module("exo_hl.effects.bounds")
    except ModuleNotFoundError as e:
        if e.name in ("exo_hl.effects.bounds", "exo_hl.effects"):
            return
        raise
    bounds.check_proc(proc_ir)
