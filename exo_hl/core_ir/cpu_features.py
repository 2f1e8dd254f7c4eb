"""CPU features as data: what an instruction or memory needs to run.

Feature names are GCC's ``__builtin_cpu_supports`` / ``target("...")``
names (``avx2``, ``fma``, ``avx512f``, ...), so the same string serves the
C target attribute, the host check and the user's declaration. A
procedure's features are the union over every instruction it reaches
through calls and every memory it allocates in or takes arguments in:
running any of its code on a CPU without them may execute an illegal
instruction.
"""
from __future__ import annotations

import re
from typing import FrozenSet, Iterable, Tuple

from .nodes import IR
from .traversal import walk_stmts

_NAME = re.compile(r"[a-z][a-z0-9_.-]*")


def normalize_features(features, what: str = "cpu_features") -> Tuple[str, ...]:
    """A sorted tuple of validated feature names.

    Accepts any iterable of strings (a set, list or tuple), or one string
    naming a single feature; rejects anything else with ``TypeError`` so a
    typo never silently drops a requirement.
    """
    if features is None:
        return ()
    if isinstance(features, str):
        features = [features]
    try:
        items = list(features)
    except TypeError:
        raise TypeError(f"{what} must be a set of feature names such as "
                        f"{{'avx2', 'fma'}}, got {features!r}") from None
    out = set()
    for f in items:
        if not isinstance(f, str) or not _NAME.fullmatch(f.strip().lower()):
            raise TypeError(f"{what}: {f!r} is not a CPU feature name (use "
                            f"GCC's names: 'avx2', 'fma', 'avx512f', ...)")
        out.add(f.strip().lower())
    return tuple(sorted(out))


def memory_features(mem) -> FrozenSet[str]:
    """The features a memory class declares (``cpu_features`` attribute)."""
    if mem is None:
        return frozenset()
    return frozenset(normalize_features(getattr(mem, "cpu_features", ()),
                                        f"{getattr(mem, '__name__', mem)}"
                                        f".cpu_features"))


def _own_features(proc) -> FrozenSet[str]:
    found = set()
    if proc.instr is not None:
        found.update(proc.instr.cpu_features)
    for a in proc.args:
        found |= memory_features(a.mem)
    for s in walk_stmts(proc.body):
        if isinstance(s, IR.Alloc):
            found |= memory_features(s.mem)
    return frozenset(found)


def proc_features(proc) -> FrozenSet[str]:
    """Every feature ``proc`` (an ``IR.Proc``) needs, through its calls."""
    found, seen, todo = set(), set(), [proc]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        found |= _own_features(p)
        todo.extend(s.f for s in walk_stmts(p.body) if isinstance(s, IR.Call))
    return frozenset(found)


def target_attribute_text(features: Iterable[str]) -> str:
    """The string inside ``__attribute__((target("...")))``."""
    return ",".join(sorted(features))
