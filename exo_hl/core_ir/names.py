"""The naming rule (docs/api.md §4): where a name is visible, it denotes one
symbol, and no binding spells a global the procedure uses.

Symbols are ``Sym`` objects, so the IR itself never confuses two variables
of one spelling; people and patterns do. The printer would respell such a
binding (``i_1``), patterns match spellings, and a cursor's ``.text()``
prints a fragment without context: a callee's loop ``i`` inlined into a
caller's loop ``i`` printed ``for i_1``, yet ``find_loop('i_1')`` failed
and ``.text()`` gave ``y[i, i]``. So the IR carries the spelling the printer
would choose: every procedure (parsed, or made by a rewrite, ``derive``)
passes ``respell``, and names a rewrite makes up come from ``fresh_name``.
Printing, patterns and ``.text()`` then agree.
"""
from __future__ import annotations

from typing import Dict

from ..caches import memo
from .nodes import IR
from .operators import loop_kind_name
from .printer import mem_name
from .syms import Sym


def fresh_name(base: str, taken) -> str:
    """``base`` if no name in ``taken`` spells it, else the first of
    ``base_1``, ``base_2``, ... that none does."""
    if base not in taken:
        return base
    k = 1
    while f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def globals_used(proc_ir) -> set:
    """The names of the non-local things ``proc_ir`` mentions (called
    procedures, configs, externs, memories, loop kinds, ``stride``): a
    binding of one of these names would read as the global. Memoised per
    statement: a rewrite shares the statements it did not change."""
    out = set()
    for a in proc_ir.args:
        if a.mem is not None:
            out.add(mem_name(a.mem))
    for e in proc_ir.preds:
        out |= _expr_globals(e)
    for s in proc_ir.body:
        out |= _stmt_globals(s)
    return out


def _expr_globals(e) -> frozenset:
    out = set()
    _globals_in(e, out)
    return frozenset(out)


def _globals_in(e, out):
    """Add the globals expression ``e`` names to ``out``: what a walk of
    all its nodes (``traversal.walk``) finds, by a recursion over the
    expression kinds (the walk asks every node for its fields; this is
    run on every statement a rewrite builds)."""
    cls = type(e)
    if cls is IR.Read:
        for i in e.idx:
            _globals_in(i, out)
    elif cls is IR.BinOp:
        _globals_in(e.lhs, out)
        _globals_in(e.rhs, out)
    elif cls is IR.Const:
        pass
    elif cls is IR.USub or cls is IR.Not:
        _globals_in(e.arg, out)
    elif cls is IR.WindowExpr:
        for a in e.idx:
            if type(a) is IR.Interval:
                _globals_in(a.lo, out)
                _globals_in(a.hi, out)
            elif type(a) is IR.Point:
                _globals_in(a.pt, out)
            else:
                _walk_globals(a, out)
    elif cls is IR.StrideExpr:
        out.add("stride")
    elif cls is IR.ReadConfig:
        out.add(e.config.name())
    elif cls is IR.Extern:
        out.add(e.f.name())
        for a in e.args:
            _globals_in(a, out)
    else:   # anything new in the grammar
        _walk_globals(e, out)


def _walk_globals(e, out):
    from .traversal import walk
    for n in walk(e):
        cls = type(n)
        if cls is IR.Extern:
            out.add(n.f.name())
        elif cls is IR.ReadConfig:
            out.add(n.config.name())
        elif cls is IR.StrideExpr:
            out.add("stride")


@memo(maxsize=16384)
def _stmt_globals(s) -> frozenset:
    """The globals a statement (with the statements in it) mentions."""
    cls = type(s)
    out = set()
    if cls is IR.For:
        out.add(loop_kind_name(s.mode))
    elif cls is IR.Alloc:
        out.add(mem_name(s.mem))
    elif cls is IR.Call:
        out.add(s.f.name)
    elif cls is IR.WriteConfig:
        out.add(s.config.name())
    for field in s._fields:
        if cls is IR.Call and field == "f":
            continue
        v = getattr(s, field)
        for x in (v if isinstance(v, tuple) else (v, )):
            if isinstance(x, IR.stmt):
                out |= _stmt_globals(x)
            elif isinstance(x, IR.expr):
                out |= _expr_globals(x)
            elif isinstance(x, IR.Tensor):
                for h in x.hi:
                    out |= _expr_globals(h)
    return frozenset(out)


def respell(proc_ir):
    """``proc_ir`` with every binding the printer would respell renamed (a
    fresh ``Sym`` of the printer's spelling): a loop, allocation or window
    whose name is visible bound to another symbol, or names a global.
    The same object when nothing needs it (the common case)."""
    from .printer import _names_in
    from .traversal import subst
    reserved = globals_used(proc_ir)
    taken = None            # every spelling, computed at the first clash
    decided: Dict[Sym, str] = {}
    env: Dict[Sym, Sym] = {}

    def bind(sym, scope, undo):
        nonlocal taken
        nm = decided.get(sym)
        if nm is None:
            nm = sym.name
            other = scope.get(nm)
            if (other is not None and other is not sym) or nm in reserved:
                if taken is None:
                    taken = set(reserved) | _names_in(proc_ir)[1]
                nm = fresh_name(sym.name, taken)
                env[sym] = Sym(nm)
            if taken is not None:
                taken.add(nm)
            decided[sym] = nm
        undo.append((nm, scope.get(nm, _UNSET)))
        scope[nm] = sym

    def block(stmts, scope):
        # one scope dict, each block's bindings undone at its end (what
        # a copy per nested block gave, without the copies)
        undo = []
        for s in stmts:
            cls = type(s)
            if cls is IR.If:
                block(s.body, scope)
                block(s.orelse, scope)
            elif cls is IR.For:
                it = []
                bind(s.iter, scope, it)
                block(s.body, scope)
                _restore(scope, it)
            elif cls is IR.Alloc or cls is IR.WindowStmt:
                bind(s.name, scope, undo)
        _restore(scope, undo)

    scope: Dict[str, Sym] = {}
    for a in proc_ir.args:
        scope[a.name.name] = a.name
    block(proc_ir.body, scope)
    if not env:
        return proc_ir
    return proc_ir.update(body=tuple(subst(s, env) for s in proc_ir.body))


_UNSET = object()


def _restore(scope, undo):
    for nm, old in reversed(undo):
        if old is _UNSET:
            del scope[nm]
        else:
            scope[nm] = old


__all__ = ["fresh_name", "globals_used", "respell"]
