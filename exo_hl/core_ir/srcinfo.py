"""Source locations of IR nodes, and caret rendering for error messages."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import notebook_cell, where  # noqa: F401 - re-exported


@dataclass(frozen=True)
class SrcInfo:
    filename: str
    lineno: int
    col_offset: int = 0
    end_col_offset: Optional[int] = None
    line_text: Optional[str] = None  # the full source line, for carets

    def __str__(self):
        return where(self.filename, self.lineno)

    def caret(self) -> str:
        """The source line with a caret under the offending columns."""
        if not self.line_text:
            return ""
        line = self.line_text.rstrip("\n")
        start = max(0, self.col_offset)
        end = self.end_col_offset if self.end_col_offset else start + 1
        width = max(1, min(end, len(line)) - start)
        return f"    {line}\n    {' ' * start}{'^' * width}"


def null_srcinfo(what: str = "<generated>") -> SrcInfo:
    return SrcInfo(what, 0)
