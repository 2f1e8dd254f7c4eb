"""A progress bar for long work (generating and compiling C for a large
procedure), shown on stderr only when someone is watching it.

The bar appears when the work is large (at least ``LARGE_WORK`` statements
to emit) and stderr is a terminal; in pipes, CI logs and notebooks (whose
stderr is not a terminal) nothing is printed. ``EXO_HL_PROGRESS=0`` turns
the bar off everywhere, ``EXO_HL_PROGRESS=1`` shows it even when stderr is
not a terminal. The bar itself is ``tqdm``'s and is erased when the work
is done, so a finished build leaves no trace in the terminal.

Example (a bar over three units of work, if stderr is a terminal)::

    >>> from exo_hl.progress import Progress
    >>> with Progress(3, "demo", minimum=0) as bar:
    ...     for _ in range(3):
    ...         bar.advance()
"""
from __future__ import annotations

import io
import os
import sys

#: statements below which generating C is quick enough to need no bar
LARGE_WORK = 400

_ON = ("1", "yes", "on", "true", "always")
_OFF = ("0", "no", "off", "false", "never")


def wanted(stream=None) -> bool:
    """True when a bar should be drawn on ``stream`` (default stderr):
    ``EXO_HL_PROGRESS`` decides if set, else whether it is a terminal."""
    env = os.environ.get("EXO_HL_PROGRESS", "").strip().lower()
    if env in _OFF:
        return False
    if env in _ON:
        return True
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):   # closed or not a real stream
        return False


class Progress:
    """``total`` units of work named ``desc``; a drawn bar when the work
    is at least ``minimum`` units and ``wanted()``, else a silent counter.

    >>> bar = Progress(10, "C for gemm", minimum=100)   # small: no bar
    >>> bar.shown
    False
    >>> bar.advance(10); bar.close()
    """

    def __init__(self, total: int, desc: str, unit: str = "stmt",
                 minimum: int = LARGE_WORK, stream=None):
        self.total = total
        self.done = 0
        self._bar = None
        stream = sys.stderr if stream is None else stream
        if total >= minimum and wanted(stream):
            try:
                from tqdm import tqdm
            except ImportError:  # pragma: no cover - tqdm is a dependency
                return
            self._bar = tqdm(total=total, desc=desc, unit=unit, file=stream,
                             leave=False, mininterval=0.1,
                             **_screen(stream))

    @property
    def shown(self) -> bool:
        """Whether a bar is being drawn."""
        return self._bar is not None

    def advance(self, n: int = 1, desc: str | None = None) -> None:
        """Mark ``n`` more units done (and rename the current step)."""
        self.done += n
        if self._bar is not None:
            if desc is not None:
                self._bar.set_description_str(desc, refresh=False)
            self._bar.update(n)

    def close(self) -> None:
        """Erase the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _screen(stream) -> dict:
    """tqdm's ``ncols`` and ``nrows`` for the terminal behind ``stream``. A
    terminal created without a size reports 0 x 0, on which tqdm would
    draw nothing (it hides bars below the last row): assume 80 x 24."""
    try:
        cols, rows = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        cols, rows = 0, 0
    return {"ncols": min(cols, 120) if cols > 20 else 80,
            "nrows": rows if rows > 0 else 24}


def statement_count(proc_ir) -> int:
    """The number of statements in a procedure's body, nested ones too:
    the unit of work of generating its C."""
    from .core_ir.traversal import walk_stmts
    return sum(1 for _ in walk_stmts(proc_ir.body))
