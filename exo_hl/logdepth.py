"""How deep the running scheduling calls are nested, per thread.

The facade (``feedback.user_facing``) counts its calls here, and log lines
written far below it (the effect analysis's ``checklog``) read the count to
indent themselves under the call that ran them. It is a bottom-layer module
so that those low layers need not import the facade.
"""
from __future__ import annotations

import threading

_local = threading.local()


def call_depth() -> int:
    """How many facade calls are running in this thread (0 outside any)."""
    return getattr(_local, "depth", 0)


def set_call_depth(depth: int) -> None:
    """Record the nesting depth of facade calls in this thread."""
    _local.depth = depth
