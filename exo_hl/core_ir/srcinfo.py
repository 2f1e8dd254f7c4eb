"""Source locations of IR nodes, and caret rendering for error messages."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Optional


def notebook_cell(filename: str) -> Optional[int]:
    """The execution count of the notebook (IPython) cell compiled into
    ``filename``, or None when ``filename`` is not a cell. IPython compiles
    each cell into a temporary file whose name means nothing to the user;
    it keeps the map from those names to ``In[n]``. IPython is never
    imported here: outside it there are no cells."""
    ip = sys.modules.get("IPython")
    if ip is None or not filename:
        return None
    try:
        shell = ip.get_ipython()
    except Exception:  # noqa: BLE001 - a partial IPython install
        return None
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    return names.get(filename) if isinstance(names, dict) else None


def where(filename: str, lineno: int) -> str:
    """``file:line``, or ``Cell In[n], line k`` in a notebook.

    >>> where("kernels.py", 12)
    'kernels.py:12'
    """
    cell = notebook_cell(filename)
    if cell is not None:
        return f"Cell In[{cell}], line {lineno}"
    return f"{filename}:{lineno}"


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
