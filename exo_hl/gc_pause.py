"""Fewer cyclic garbage-collector passes while a schedule is being built.

Scheduling allocates millions of short-lived, acyclic objects (IR nodes,
SMT terms, effect records) that reference counting frees; with CPython's
default thresholds (700, 10, 10) the cyclic collector still runs about a
thousand times per SGEMM schedule and its full (generation 2) passes walk
every live object, caches included: ~12% of the schedule's CPU time
(measured with ``gc.callbacks``). Raising the thresholds for the duration
of a user's call leaves the few cycles to a later pass and costs a
little memory at most.

The collector's thresholds are process-wide, so this is the one piece of
process state exo_hl changes, and only while a call runs:
``fewer_collections`` raises them (never lowers a threshold the program
set higher, and leaves a disabled generation 0 alone) on entry of the
outermost active call, over all threads, and restores exactly the
previous thresholds when the last one leaves.
"""
from __future__ import annotations

import contextlib
import gc
import threading

__all__ = ["fewer_collections", "SCHEDULING_THRESHOLDS"]

#: the thresholds while a call runs: generation 0 every 10000 net
#: allocations instead of 700, the older generations 20 passes apart
SCHEDULING_THRESHOLDS = (10000, 20, 20)

_lock = threading.Lock()
_active = [0, None]      # calls inside, thresholds to restore


@contextlib.contextmanager
def fewer_collections():
    """Run the body with the raised thresholds, then restore them."""
    with _lock:
        if _active[0] == 0:
            old = gc.get_threshold()
            _active[1] = old
            if old[0] != 0:     # 0: automatic collection switched off
                gc.set_threshold(*(max(a, b) for a, b in
                                   zip(old, SCHEDULING_THRESHOLDS)))
        _active[0] += 1
    try:
        yield
    finally:
        with _lock:
            _active[0] -= 1
            if _active[0] == 0:
                gc.set_threshold(*_active[1])
                _active[1] = None
