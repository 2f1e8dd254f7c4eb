"""What the user sees when a call into exo_hl fails or takes time.

Errors that point at the user's code
    An ``ExoError`` (``SchedulingError``, ``BoundsError``, ``ExoTypeError``,
    ``MemGenError``) or ``ExoSyntaxError`` raised through the ``Procedure``
    facade or the ``@proc``/``@instr`` decorators reaches the user with
    exo_hl's own frames cut from its traceback: what is printed is the
    user's line, one line of the facade, and the message (which already
    names the statement, its source line and the check that failed). The
    exception object is the one the rewrite raised, with its message
    unchanged; a scheduling error also gets a note (``add_note``, printed
    after the message) naming the user's call and its file:line. In a
    notebook, locations name the cell (``Cell In[3], line 2``), not the
    temporary file IPython compiled it into.
    ``EXO_HL_DEBUG=1`` keeps the full traceback, for debugging exo_hl itself.
    The facade frame also sets ``__tracebackhide__``, so IPython (notebooks)
    and pytest show only the user's frames. The functions of
    ``exo_hl.stdlib`` are wrapped the same way (``user_function``): a
    refused step inside ``vectorize`` reaches the user at the call of
    ``vectorize``, not through every stdlib frame.

    One frame of exo_hl stays in the exception's traceback: the one that
    re-raises it (Python adds the raising frame; nothing can remove it
    before the exception reaches the user). When such an error is not
    caught, the ``sys.excepthook`` installed at import (chained to the one
    it finds) drops exo_hl's frames before the traceback is printed, so a
    script's traceback shows only the user's lines; IPython (which never
    hides the last frame) asks the error itself (``_render_traceback_``).

Progress
    Every user-level call through the facade is logged on the ``exo_hl``
    logger at DEBUG level with its time (``p.split(...)  12.3 ms``).
    ``EXO_HL_LOG=debug`` (or ``info``, ``warning``, ...) attaches a stderr
    handler at that level when exo_hl is imported; a program that configures
    ``logging`` itself sees the same records without it.
"""
from __future__ import annotations

import functools
import linecache
import logging
import os
import sys
import time

from .errors import (PKG_DIR, ExoError, ExoSyntaxError,  # noqa: F401
                     debug_tracebacks, hide_internal_frames,
                     is_internal_file, user_frames)
from .gc_pause import fewer_collections
from .logdepth import call_depth, set_call_depth

log = logging.getLogger("exo_hl")

_USER_ERRORS = (ExoError, ExoSyntaxError)


def user_call_site(frame):
    """(filename, lineno, source line) of the innermost frame at or outside
    ``frame`` that is not exo_hl's own code, or None."""
    while frame is not None:
        fn = frame.f_code.co_filename
        if not is_internal_file(fn):
            line = linecache.getline(fn, frame.f_lineno).strip()
            return fn, frame.f_lineno, line
        frame = frame.f_back
    return None


def for_user(err: BaseException) -> BaseException:
    """``err`` ready to be re-raised at the user's code: its traceback
    (exo_hl's frames) dropped and any internal exception it was raised
    while handling hidden. An explicit cause (``raise ... from x``) stays.
    With ``EXO_HL_DEBUG`` set, ``err`` is returned untouched."""
    if debug_tracebacks():
        return err
    err.__suppress_context__ = True
    err._exo_hl_for_user = True     # the excepthook hides the re-raise frame
    return err.with_traceback(None)


def make_excepthook(previous):
    """A ``sys.excepthook`` that hides exo_hl's frames of the errors it
    raised for the user (``for_user``), then calls ``previous``."""
    def exo_hl_excepthook(etype, value, tb):
        if not debug_tracebacks():
            hide_internal_frames(value)
            tb = value.__traceback__
        previous(etype, value, tb)
    exo_hl_excepthook._exo_hl = True
    return exo_hl_excepthook


def install_excepthook() -> None:
    """Chain ``make_excepthook`` before the current ``sys.excepthook``
    (once)."""
    if not getattr(sys.excepthook, "_exo_hl", False):
        sys.excepthook = make_excepthook(sys.excepthook)


def _add_note(err: BaseException, note: str) -> None:
    if getattr(err, "_exo_hl_call_site", None) is not None:
        return  # an outer facade call already said where it came from
    add = getattr(err, "add_note", None)
    if add is not None:
        add(note)
    else:  # Python 3.10: kept for tools that read it
        err.__notes__ = list(getattr(err, "__notes__", [])) + [note]


def _solver_time() -> float:
    """Seconds the SMT solver has run in this process."""
    from .effects.api import stats
    return stats().solver_time


def _call_text(name, args, kwargs) -> str:
    from .display import step_text
    return step_text(name, args, kwargs)


def _failed(e, name, args, kwargs, depth, caller, t0) -> bool:
    """Note the user's call on ``e`` and log the failure; returns the
    ``__tracebackhide__`` value for the facade frame."""
    site = user_call_site(caller)
    if site is not None and depth == 0:
        file, line, text = site
        from .core_ir.srcinfo import where
        _add_note(e, f"exo_hl: raised by the call at {where(file, line)}:"
                     f" {text or _call_text(name, args, kwargs)}")
        e._exo_hl_call_site = (file, line)
    if t0 is not None:
        log.debug("%s%s failed after %.1f ms: %s", "  " * depth,
                  _call_text(name, args, kwargs),
                  (time.perf_counter() - t0) * 1e3,
                  str(e).splitlines()[0] if str(e) else type(e).__name__)
    return not debug_tracebacks()


def user_facing(fn, name: str | None = None):
    """Wrap a ``Procedure`` method so that its errors point at the user's
    call and its time is logged (see the module docstring)."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def facade(self, *args, **kwargs):
        depth = call_depth()
        t0 = time.perf_counter() if log.isEnabledFor(logging.DEBUG) else None
        s0 = _solver_time() if t0 is not None else 0.0
        set_call_depth(depth + 1)
        try:
            if depth == 0:      # the user's call: see gc_pause
                with fewer_collections():
                    result = fn(self, *args, **kwargs)
            else:
                result = fn(self, *args, **kwargs)
        except _USER_ERRORS as e:
            # the error is in the call above (exo_hl frames are hidden)
            __tracebackhide__ = _failed(  # noqa: F841
                e, name, args, kwargs, depth, sys._getframe(1), t0)
            raise for_user(e)  # exo_hl's frames: set EXO_HL_DEBUG=1
        finally:
            set_call_depth(depth)
        if t0 is not None:
            log.debug("%s%s  %.1f ms (%.1f ms in the SMT solver)",
                      "  " * depth, _call_text(name, args, kwargs),
                      (time.perf_counter() - t0) * 1e3,
                      (_solver_time() - s0) * 1e3)
        return result

    # the one facade line left in a traceback reads "in split", not
    # "in facade"
    code = facade.__code__
    try:
        facade.__code__ = code.replace(co_name=name,
                                       co_qualname=f"Procedure.{name}")
    except TypeError:  # Python 3.10: no qualified names on code objects
        facade.__code__ = code.replace(co_name=name)
    return facade


def user_function(fn):
    """Wrap a public function of ``exo_hl.stdlib`` like the ``Procedure``
    facade: a refused step inside it reaches the user at their call of the
    function, with a note naming that call, without exo_hl's frames."""
    name = fn.__name__

    @functools.wraps(fn)
    def stdlib_facade(*args, **kwargs):
        depth = call_depth()
        set_call_depth(depth + 1)
        try:
            return fn(*args, **kwargs)
        except _USER_ERRORS as e:
            __tracebackhide__ = _failed(  # noqa: F841
                e, name, args[1:], kwargs, depth, sys._getframe(1), None)
            raise for_user(e)  # exo_hl's frames: set EXO_HL_DEBUG=1
        finally:
            set_call_depth(depth)

    code = stdlib_facade.__code__
    try:
        stdlib_facade.__code__ = code.replace(co_name=name, co_qualname=name)
    except TypeError:  # Python 3.10
        stdlib_facade.__code__ = code.replace(co_name=name)
    return stdlib_facade


def configure_logging(environ=None) -> None:
    """Honour ``EXO_HL_LOG=LEVEL``: a stderr handler on the ``exo_hl``
    logger at that level (once; an unknown level name is ignored)."""
    environ = os.environ if environ is None else environ
    want = environ.get("EXO_HL_LOG", "").strip()
    if not want:
        return
    level = logging.getLevelName(want.upper())
    if not isinstance(level, int):
        return
    log.setLevel(level)
    if not any(getattr(h, "_exo_hl_env", False) for h in log.handlers):
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("exo_hl: %(message)s"))
        h._exo_hl_env = True
        log.addHandler(h)


configure_logging()
install_excepthook()
