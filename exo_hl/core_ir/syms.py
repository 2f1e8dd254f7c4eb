"""Unique symbols: names in the IR are ``Sym`` objects, never bare strings.

Two symbols with the same spelling are different variables; identity is the
integer id. Ids come from a process-wide counter, which is only a source of
fresh numbers and carries no compiler state.
"""
from __future__ import annotations

import itertools

_ids = itertools.count(1)


class Sym:
    __slots__ = ("_name", "_id")

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise TypeError("a Sym needs a non-empty str name")
        self._name = name
        self._id = next(_ids)

    @property
    def name(self) -> str:
        return self._name

    @property
    def id(self) -> int:
        return self._id

    def copy(self) -> "Sym":
        """A fresh symbol with the same spelling."""
        return Sym(self._name)

    def __str__(self):
        return self._name

    def __repr__(self):
        return f"{self._name}_{self._id}"

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return self._id

    def __lt__(self, other):
        return self._id < other._id

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self
