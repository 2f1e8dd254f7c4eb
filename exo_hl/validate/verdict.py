"""What ``validate`` answers."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

__all__ = ["Verdict", "PROVEN", "REFUTED", "UNKNOWN"]

PROVEN, REFUTED, UNKNOWN = "proven", "refuted", "unknown"


@dataclass(frozen=True)
class Verdict:
    """``status`` is ``'proven'``, ``'refuted'`` or ``'unknown'``.

    - proven: equal final state (every data argument, bit for bit, and the
      config state) for every input at every size assignment the
      original's preconditions allow;
    - refuted: ``counterexample`` holds inputs on which ``interpret()``
      ran both procedures and they ended differently;
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
