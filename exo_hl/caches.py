"""Every memo exo_hl keeps between calls, in one registry.

exo_hl memoises pure functions of immutable IR (effects, liftings, bounds
proofs, parsed patterns) and keeps a few bounded tables (SMT answers, block
summaries, procedures known to be well formed). None of them changes a
result; they only make repeated work cheap. Each registers itself here
when its module is imported, so that ``clear_all()`` really starts cold
(benchmarks measuring first-time cost, tests of cold paths).

>>> from exo_hl import caches
>>> @caches.memo(maxsize=64)
... def square(n):
...     return n * n
>>> square(3), square.cache_info().currsize
(9, 1)
>>> caches.clear_all()
>>> square.cache_info().currsize
0
"""
from __future__ import annotations

import functools

#: name -> (clear function, size function or None)
_REGISTRY: dict = {}


def register(name: str, clear, size=None):
    """Register a cache under ``name``: ``clear()`` empties it, ``size()``
    (optional) says how many entries it holds. Returns ``clear``.

    >>> table = {}
    >>> _ = register("doc.table", table.clear, lambda: len(table))
    >>> table["k"] = 1; sizes()["doc.table"]
    1
    """
    _REGISTRY[name] = (clear, size)
    return clear


def container(name: str, table):
    """Register a dict, ``OrderedDict`` or list used as a cache; returns it.

    >>> seen = container("doc.seen", [])
    >>> seen.append(1); clear_all(); seen
    []
    """
    register(name, table.clear, table.__len__)
    return table


def memo(maxsize: int | None = 4096):
    """``functools.lru_cache(maxsize)``, registered under the function's
    module and name.

    >>> @memo(maxsize=8)
    ... def twice(n):
    ...     return 2 * n
    >>> twice(2); "exo_hl.caches.twice" in names()
    4
    True
    """
    def wrap(fn):
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        register(f"{fn.__module__}.{fn.__qualname__}", cached.cache_clear,
                 lambda: cached.cache_info().currsize)
        return cached
    return wrap


def clear_all() -> None:
    """Empty every registered cache.

    >>> clear_all(); sum(sizes().values())
    0
    """
    for clear, _ in list(_REGISTRY.values()):
        clear()


def names() -> list:
    """The registered caches' names, sorted.

    >>> "exo_hl.effects.smt.solver" in names()
    True
    """
    return sorted(_REGISTRY)


def sizes() -> dict:
    """{name: entries} for every registered cache that can say.

    >>> isinstance(sizes(), dict)
    True
    """
    return {n: s() for n, (_, s) in sorted(_REGISTRY.items())
            if s is not None}
