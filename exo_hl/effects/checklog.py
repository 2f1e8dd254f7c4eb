"""``EXO_HL_LOG=debug``: each safety check, its verdict and its SMT time.

A check is a function of the effect analysis a rewrite (or the re-check of
its result) calls; ``@logged_check`` logs one line per outermost check on
the ``exo_hl`` logger, indented under the scheduling call that ran it::

    exo_hl:   check can_reorder_loops: ok (3 SMT queries, 2 solved, 4.1 ms in the solver, 6.0 ms in all)
    exo_hl: p.reorder('j', 'k')  12.3 ms (4.1 ms in the SMT solver)
"""
from __future__ import annotations

import functools
import logging
import time

from ..logdepth import call_depth
from . import smt as S
from .checks import Result

_log = logging.getLogger("exo_hl")
_checking = []          # the check being logged (nested checks are not)


def _verdict(r) -> str:
    if isinstance(r, Result):
        return "ok" if r.ok else "failed: " + (r.reason.splitlines() or
                                               ["not proven"])[0]
    if isinstance(r, bool):
        return "ok" if r else "failed"
    return "ok" if r is None else "done"   # None: raises when it fails


def logged_check(fn):
    """Log ``fn`` (a safety check) at DEBUG on the ``exo_hl`` logger: its
    verdict, its SMT queries and the time spent in the solver. Costs one
    ``isEnabledFor`` test when logging is off."""
    @functools.wraps(fn)
    def check(*args, **kwargs):
        if _checking or not _log.isEnabledFor(logging.DEBUG):
            return fn(*args, **kwargs)
        st = S.solver().stats
        q0, c0, s0 = st.queries, st.solver_calls, st.solver_time
        t0 = time.perf_counter()
        _checking.append(fn.__name__)
        try:
            r = fn(*args, **kwargs)
            verdict = _verdict(r)
            return r
        except Exception as e:
            verdict = f"raised {type(e).__name__}"
            raise
        finally:
            _checking.pop()
            _log.debug("%scheck %s: %s (%d SMT queries, %d solved, %.1f ms "
                       "in the solver, %.1f ms in all)", "  " * call_depth(),
                       fn.__name__, verdict, st.queries - q0,
                       st.solver_calls - c0, (st.solver_time - s0) * 1e3,
                       (time.perf_counter() - t0) * 1e3)
    return check
