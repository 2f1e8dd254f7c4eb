"""User-facing error classes (docs/api.md §7).

Every message names the procedure, the offending statement and, where it
comes from user source, the file and line (or the notebook cell: ``where``).
``located`` builds such text.

Which traceback frames are exo_hl's own, and dropping them, live here too
(``user_frames``): an ``ExoError`` renders its own traceback in IPython,
and this module imports nothing of exo_hl.
"""
from __future__ import annotations

import os
import sys
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


class ExoError(Exception):
    """Base of exo_hl's own errors: catch it to handle any of them.

    >>> try:
    ...     p = gemm.split('j', 4, 'jo', 'ji', tail='perfect')
    ... except ExoError as e:
    ...     print(str(e).splitlines()[0])
    """

    def _render_traceback_(self):
        """IPython's hook: the traceback a notebook shows, without
        exo_hl's frames (``exo_hl.feedback``)."""
        return ipython_traceback(self)


class SchedulingError(ExoError):
    """An unsafe or invalid scheduling request. The message names the
    statement (with its source line) and the check that failed.

    >>> gemm.reorder('i', 'k')            # k is not directly inside i
    Traceback (most recent call last):
    SchedulingError: ...: reorder: the inner loop must be directly nested in the outer loop
    """


class ExoTypeError(ExoError, TypeError):
    """A frontend type error in a procedure.

    >>> @proc
    ... def bad(n: size, x: f32[n]):
    ...     for i in seq(0, n):
    ...         x[i] = n                    # a size is not data
    Traceback (most recent call last):
    ExoTypeError: ...
    """


class BoundsError(ExoError):
    """An access out of bounds, or a precondition that cannot be proven
    (with a counterexample).

    >>> @proc
    ... def shifted(n: size, x: f32[n]):
    ...     for i in seq(0, n):
    ...         x[i + 1] = 0.0
    Traceback (most recent call last):
    BoundsError: ...
    """


class MemGenError(ExoError):
    """A memory used in a way its Memory class forbids (backend check),
    raised when C is generated.

    >>> p.set_memory('t', AVX2).c_code_str()   # t is read directly from C
    Traceback (most recent call last):
    MemGenError: ...: cannot read or write 't' directly: memory AVX2 is not readable from C (use an instruction)
    """


class SanitizerError(RuntimeError):
    """A sanitized run (``compile(sanitize=True)``) found a memory error or
    undefined behaviour; ``report`` holds the sanitizer's output.

    >>> try:
    ...     p.compile(sanitize=True)(n, x)
    ... except SanitizerError as e:
    ...     print(e.report)
    """

    def __init__(self, msg, report=""):
        super().__init__(msg)
        self.report = report


class ExoSyntaxError(SyntaxError):
    """Python syntax that procedures do not support (a ``SyntaxError``).

    >>> @proc
    ... def loop(n: size, x: f32[n]):
    ...     while True:
    ...         pass
    Traceback (most recent call last):
    ExoSyntaxError: ...
    """

    def __init__(self, msg, srcinfo=None):
        self.msg_text = msg
        if srcinfo is not None:
            super().__init__(located(msg, srcinfo),
                             (srcinfo.filename, srcinfo.lineno,
                              srcinfo.col_offset + 1, srcinfo.line_text))
        else:
            super().__init__(msg)

    def __str__(self):
        return self.args[0] if self.args else ""


def located(msg: str, srcinfo=None, proc_name: str | None = None,
            stmt_text: str | None = None) -> str:
    """Compose an error message: location, procedure, message, code, caret."""
    head = ""
    if srcinfo is not None and srcinfo.lineno:
        head = f"{where(srcinfo.filename, srcinfo.lineno)}: "
    if proc_name:
        head += f"in procedure '{proc_name}': "
    text = head + msg
    if stmt_text:
        text += "\n" + "\n".join("    " + l for l in stmt_text.rstrip().splitlines())
    elif srcinfo is not None:
        c = srcinfo.caret()
        if c:
            text += "\n" + c
    return text


# ---------------------------------------------------------------------------
# exo_hl's own frames (exo_hl.feedback hides them from the user)

#: the package directory: frames whose file is under it are exo_hl's own
PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def debug_tracebacks() -> bool:
    """True when ``EXO_HL_DEBUG`` asks for exo_hl's own frames."""
    return os.environ.get("EXO_HL_DEBUG", "").strip().lower() not in (
        "", "0", "no", "false", "off")


def is_internal_file(filename: str) -> bool:
    """A file of the exo_hl package (its shipped hardware libraries count
    as the user's: they are written as user code)."""
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    if not path.startswith(PKG_DIR + os.sep):
        return False
    return not path.startswith(os.path.join(PKG_DIR, "hw_libs") + os.sep)


def user_frames(tb):
    """The traceback ``tb`` without exo_hl's own frames (relinked in place;
    None if none is left)."""
    keep = []
    while tb is not None:
        if not is_internal_file(tb.tb_frame.f_code.co_filename):
            keep.append(tb)
        tb = tb.tb_next
    for a, b in zip(keep, keep[1:]):
        a.tb_next = b
    if keep:
        keep[-1].tb_next = None
    return keep[0] if keep else None


def error_chain(err):
    """``err`` and the exceptions it was raised from or while handling."""
    seen = []
    while err is not None and err not in seen:
        seen.append(err)
        err = err.__cause__ or (None if err.__suppress_context__
                                else err.__context__)
    return seen


def hide_internal_frames(err):
    """Drop exo_hl's frames from the tracebacks of ``err`` and of the
    exo_hl errors in its chain: an error raised for the user, and one it was
    raised from (``vectorize(tail='mask')`` says why, ``from`` the refusal
    of the step it tried), whose frames are all exo_hl's. Other exceptions
    in the chain (a bug's) keep theirs."""
    if debug_tracebacks():
        return
    for e in error_chain(err):
        if getattr(e, "_exo_hl_for_user", False) or isinstance(
                e, (ExoError, ExoSyntaxError)):
            e.__traceback__ = user_frames(e.__traceback__)


def ipython_traceback(err):
    """IPython's structured traceback of ``err`` without exo_hl's frames
    when it was raised for the user (``ExoError._render_traceback_``).
    IPython hides ``__tracebackhide__`` frames except the last one, which
    is the facade's re-raise: without this, a notebook showed it."""
    shell = sys.modules["IPython"].get_ipython()
    if getattr(err, "_exo_hl_for_user", False):
        hide_internal_frames(err)
    return shell.InteractiveTB.structured_traceback(type(err), err,
                                                    err.__traceback__)
