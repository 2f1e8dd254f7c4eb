"""Provenance: where a procedure came from, and deriving a new one.

Every scheduling step ends in ``derive(proc, new_ir, op, ...)``: it makes
the new procedure, records its parent, the operation and the config fields
modulo which it is equivalent to the parent, and re-checks the new IR like
freshly written code (call signatures, bounds, callee preconditions,
parallel loops). Whatever a rewrite's own check missed, it can never hand
back an ill-formed procedure.

Equivalence is a question about this derivation tree, never about what two
procedures compute: ``p`` and ``q`` are related when they share an ancestor,
and then ``p ≅_L q`` with ``L`` the union of ``equiv_mod`` along the tree
path between them (each edge is an equivalence modulo its fields, and
``≅_L1 ∘ ≅_L2 ⊆ ≅_{L1 ∪ L2}``). Unrelated procedures are never equivalent,
even when they compute the same thing: proving that would be a different
(undecidable in general) question.

This module sits between the rewrites and the ``Procedure`` facade
(``api.py``): ``Derived`` holds the record, ``Procedure`` subclasses it with
the user-facing methods, and rewrites import only this module.
"""
from __future__ import annotations

from typing import Optional

from .core_ir.names import respell
from .core_ir.nodes import IR
from .core_ir.windows import retype_window_names
from .effects.recheck import check_rewritten
from .errors import BoundsError, ExoTypeError, SchedulingError

__all__ = ["Derived", "derive", "check_well_formed", "ancestry",
           "equivalence_modulo", "is_eq", "derived_from"]


class Derived:
    """An immutable IR procedure with the record of how it was made.

    ``Procedure`` (``api.py``) is the user-facing subclass; this base holds
    only what derivation and equivalence by provenance need.
    """
    __slots__ = ("_ir", "_parent", "_op", "_equiv_mod", "_checked",
                 "_forward", "_step", "_doc")

    def __init__(self, ir, parent: Optional["Derived"] = None, op: str = "",
                 equiv_mod=frozenset(), forward=None):
        if not isinstance(ir, IR.Proc):
            raise TypeError("Procedure wraps an IR.Proc")
        object.__setattr__(self, "_ir", ir)
        object.__setattr__(self, "_parent", parent)
        object.__setattr__(self, "_op", op)
        # config fields (Config, field) modulo which this procedure is only
        # equivalent to its parent; empty when fully equivalent; None when
        # the rewrite changed what it computes (set_precision): derived,
        # but not equivalent
        object.__setattr__(self, "_equiv_mod", None if equiv_mod is None
                           else frozenset(equiv_mod))
        # True once this procedure is known to pass the well-formedness
        # checks: rewrites of it are then re-checked incrementally
        object.__setattr__(self, "_checked", False)
        # maps a cursor path of the parent onto this procedure (or None)
        object.__setattr__(self, "_forward", forward)
        # (receiver, "p.method(...)") of the user call that made this one
        object.__setattr__(self, "_step", None)
        # the docstring of the @proc / @instr def (rewrites do not copy it)
        object.__setattr__(self, "_doc", None)

    def __setattr__(self, name, value):
        raise AttributeError("Procedure objects are immutable")


# ----------------------------------------------------------------------
# deriving
def check_well_formed(proc_ir, op: str, parent_ir=None) -> None:
    """Raise ``SchedulingError`` unless ``proc_ir`` passes the static checks.

    ``parent_ir``: a procedure known to pass them that ``proc_ir`` was
    derived from; then only what the rewrite could affect is re-checked
    (``effects.recheck``; ``EXO_HL_FULL_RECHECK=1`` re-checks everything).
    """
    try:
        check_rewritten(proc_ir, parent_ir)
    except (BoundsError, ExoTypeError) as e:
        raise SchedulingError(
            f"{op}: the rewritten procedure '{proc_ir.name}' would not be "
            f"well formed, so the rewrite is rejected:\n{e}") from None


def same_ir(a, b) -> bool:
    """``a == b`` for two procedures, without hashing whole bodies (tuple
    comparison skips identical statements)."""
    return a is b or (a.name == b.name and a.instr == b.instr
                      and a.args == b.args and a.preds == b.preds
                      and a.body == b.body)


def derive(proc: Derived, new_ir, op: str, equiv_mod=frozenset(),
           forward=None):
    """A new procedure (of ``proc``'s class) derived from ``proc`` by the
    rewrite ``op``, re-checked like fresh code.

    ``equiv_mod``: the (Config, field) pairs modulo which the result is
    equivalent to ``proc`` (empty: fully equivalent; None: not equivalent,
    a change of meaning the user asked for). ``forward``: maps a
    statement path of ``proc`` onto the result (None: paths are kept).
    When ``proc`` passed the checks itself, only what the rewrite changed
    (and what that can affect) is re-checked (``effects.recheck``).
    """
    checked = proc._checked
    # the naming rule: a name a rewrite brought into a scope where it is
    # visible for another symbol (an inlined callee's loop) is respelled
    new_ir = respell(new_ir)
    if not same_ir(new_ir, proc._ir):
        parent = proc._ir if checked else None
        new_ir = retype_window_names(new_ir, parent)
        check_well_formed(new_ir, op, parent)
        checked = True
    p = type(proc)(new_ir, parent=proc, op=op, equiv_mod=equiv_mod,
                   forward=forward)
    if checked:
        # new_ir passed the checks and is retyped (a fixed point of
        # retype_window_names): later rewrites can re-check against it
        object.__setattr__(p, "_checked", True)
    return p


# ----------------------------------------------------------------------
# equivalence by provenance
def _same(p, q) -> bool:
    return p is q or p._ir is q._ir


def ancestry(p):
    """[(procedure, fields modulo which p ≅ it)] from p up to its root, or
    up to the first rewrite that changed what it computes."""
    out = []
    acc = frozenset()
    while p is not None:
        out.append((p, acc))
        if p._equiv_mod is None:
            break
        acc = acc | p._equiv_mod
        p = p._parent
    return out


def meaning_change(proc_ir, p):
    """The rewrite (``op`` name) that changed what ``p`` computes since the
    procedure whose IR is ``proc_ir``, when that one is in ``p``'s
    derivation chain beyond such a rewrite; else None."""
    change = None
    while p is not None:
        if change is not None and (p._ir is proc_ir or p._ir == proc_ir):
            return change
        if p._equiv_mod is None and change is None:
            change = p._op
        p = p._parent
    return None


def equivalence_modulo(p, q):
    """The set of (Config, field) pairs modulo which ``p`` and ``q`` are
    known equivalent by provenance, or None when they are unrelated."""
    ups = ancestry(p)
    for anc_q, mod_q in ancestry(q):
        for anc_p, mod_p in ups:
            if _same(anc_p, anc_q):
                return frozenset(mod_p | mod_q)
    return None


def is_eq(p, q) -> bool:
    """True when ``p`` and ``q`` are fully equivalent by provenance."""
    if not isinstance(p, Derived) or not isinstance(q, Derived):
        return False
    return equivalence_modulo(p, q) == frozenset()


def derived_from(proc_ir, p):
    """Fields modulo which ``p`` ≅ the procedure whose IR is ``proc_ir``,
    when that procedure is in ``p``'s derivation chain; else None."""
    for anc, mod in ancestry(p):
        if anc._ir is proc_ir:
            return mod
    for anc, mod in ancestry(p):
        if anc._ir == proc_ir:  # structurally the same node
            return mod
    return None
