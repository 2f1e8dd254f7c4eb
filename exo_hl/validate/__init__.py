"""End-to-end translation validation: is a scheduled procedure equal to
its algorithm? (docs/validate.md)

Independent of the scheduling language: it reads only the two procedures'
IR and their semantics (docs/semantics.md), never how one was derived from
the other.
"""
from __future__ import annotations

from .check import validate_ir
from .refute import Counterexample
from .verdict import PROVEN, REFUTED, UNKNOWN, Verdict

__all__ = ["validate", "Verdict", "Counterexample", "PROVEN", "REFUTED",
           "UNKNOWN"]


def _ir(p):
    return p.ir() if hasattr(p, "ir") and callable(p.ir) else p


def validate(original, scheduled, **options) -> Verdict:
    """Whether ``scheduled`` computes what ``original`` computes.

    Returns a ``Verdict``: ``proven`` (for every size the original's
    preconditions allow), ``refuted`` (with a ``Counterexample`` that
    ``interpret()`` confirms, and that no reordering of a float reduction
    explains) or ``unknown`` (with the condition it could
    not discharge). Options: ``max_sizes`` (size assignments to check),
    ``budget`` (largest product of sizes), ``rounds`` (random input sets
    per refutation search), ``seed``; the others are in docs/api.md §11.

    >>> v = exo_hl.validate(gemm, gemm.split('k', 4, 'ko', 'ki'))
    >>> v.status
    'proven'
    """
    return validate_ir(_ir(original), _ir(scheduled), **options)
