"""What ``validate`` answers."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

__all__ = ["Verdict", "Failed", "PROVEN", "REFUTED", "UNKNOWN"]

PROVEN, REFUTED, UNKNOWN = "proven", "refuted", "unknown"


@dataclass(frozen=True)
class Verdict:
    """``status`` is ``'proven'``, ``'refuted'`` or ``'unknown'``.

    - proven: equal final state (every data argument, bit for bit, and the
      config state) for every input at every size assignment the
      original's preconditions allow;
    - refuted: ``counterexample`` holds inputs on which ``interpret()``
      ran both procedures and they ended differently, in a way no
      reordering of a float reduction explains (``refute``);
    - unknown: ``condition`` says what could not be discharged.

    ``sizes`` lists the size assignments checked symbolically.
    """
    status: str
    condition: str = ""
    counterexample: Optional[object] = None
    sizes: List[dict] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def proven(self) -> bool:
        return self.status == PROVEN

    @property
    def refuted(self) -> bool:
        return self.status == REFUTED

    def __bool__(self):
        return self.proven

    def __str__(self):
        s = self.status
        if self.condition:
            s += f": {self.condition}"
        if self.counterexample is not None:
            s += f"\n  {self.counterexample!r}"
        return s


class Failed(Exception):
    """A verification condition that Z3 did not discharge; ``params``:
    the size arguments (``p<position>`` -> value) of a model violating
    it, when Z3 gave one (a place to look for a counterexample)."""

    def __init__(self, msg, params=None):
        super().__init__(msg)
        self.params = params or {}
