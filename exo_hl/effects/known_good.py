"""Whole procedures already known to pass the static checks.

A bounded memo keyed by everything the checks read (arguments,
preconditions, body); only successes are remembered. It lives apart from
``recheck`` so that the modules whose caches it belongs with (``bounds``,
``api``) can clear it without importing the re-checker, which imports them.
"""
from __future__ import annotations

from collections import OrderedDict

from ..caches import container

#: keys of procedures that passed; oldest first
KNOWN: "OrderedDict[tuple, None]" = container(
    "exo_hl.effects.known_good", OrderedDict())
KNOWN_LIMIT = 2048


def is_known(key) -> bool:
    """True (and the entry refreshed) when ``key`` passed before."""
    if key in KNOWN:
        KNOWN.move_to_end(key)
        return True
    return False


def remember(key) -> None:
    """Record that ``key`` passed, dropping the oldest entry when full."""
    KNOWN[key] = None
    if len(KNOWN) > KNOWN_LIMIT:
        KNOWN.popitem(last=False)


def clear_cache() -> None:
    """Forget every remembered success."""
    KNOWN.clear()
