"""User-facing error classes (docs/api.md §7).

Every message names the procedure, the offending statement and, where it
comes from user source, the file and line. ``located`` builds such text.
"""
from __future__ import annotations


class ExoError(Exception):
    """Base of exo_hl's own errors: catch it to handle any of them.

    >>> try:
    ...     p = gemm.split('j', 4, 'jo', 'ji', tail='perfect')
    ... except ExoError as e:
    ...     print(str(e).splitlines()[0])
    """


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
        from .core_ir.srcinfo import where
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
