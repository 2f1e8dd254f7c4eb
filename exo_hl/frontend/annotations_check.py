"""A module defining procedures needs ``from __future__ import annotations``.

Without it Python *evaluates* every annotation when the ``def`` runs, so
``A: f32[M, K]`` fails with a bare ``NameError: name 'M' is not defined``
before ``@proc`` ever sees the function. That happens inside the user's
module, where no decorator can intervene; but the module must first fetch
``proc`` or ``instr`` from ``exo_hl``. ``exo_hl`` checks the fetching module
at that moment (once per file): if it lacks the future import and some
``@proc``/``@instr`` function has an annotation naming a variable that is
bound nowhere it could be seen (typically the function's own size
arguments), the evaluation is certain to fail, and ``ExoSyntaxError`` says
where and what to add instead.
"""
from __future__ import annotations

import __future__
import ast
import builtins
import linecache
from typing import Optional

from ..core_ir.srcinfo import SrcInfo
from ..errors import ExoSyntaxError

_FUTURE_FLAG = __future__.annotations.compiler_flag
_DECORATORS = {"proc", "instr"}
_BUILTINS = set(dir(builtins))
_checked: set = set()


def check_importer(frame, exo_names=()) -> None:
    """Raise ``ExoSyntaxError`` if the code running in ``frame`` belongs to
    a module whose procedures' annotations cannot be evaluated.
    ``exo_names``: the names ``from exo_hl import *`` binds (passed in by
    the package, which this module must not import)."""
    if frame is None:
        return
    code = frame.f_code
    if code.co_flags & _FUTURE_FLAG:
        return
    filename = code.co_filename
    if filename in _checked:
        return
    _checked.add(filename)
    lines = linecache.getlines(filename, frame.f_globals)
    if not lines:
        return
    try:
        tree = ast.parse("".join(lines), filename)
    except (SyntaxError, ValueError):
        return
    found = first_failing_annotation(tree, exo_names)
    if found is None:
        return
    fdef, name = found
    line = lines[name.lineno - 1].rstrip("\n") \
        if name.lineno <= len(lines) else None
    raise ExoSyntaxError(
        f"procedure '{fdef.name}': Python evaluates its argument annotations "
        f"when the module runs, and '{name.id}' is not defined then (this "
        f"would be a NameError); add `from __future__ import annotations` "
        f"at the top of the module",
        SrcInfo(filename, name.lineno, name.col_offset, name.end_col_offset,
                line))


def first_failing_annotation(tree, exo_names=()) -> Optional[tuple]:
    """(function def, Name node) of the first name in an annotation of a
    ``@proc``/``@instr`` function that is certainly unbound when Python
    evaluates it, or None. ``exo_names``: what ``from exo_hl import *``
    binds."""
    parents = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            parents[c] = n
    decorators = set(_DECORATORS)
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module == "exo_hl":
            decorators |= {a.asname for a in n.names
                           if a.name in _DECORATORS and a.asname}
    visible_cache = {}
    for fdef in ast.walk(tree):
        if not isinstance(fdef, ast.FunctionDef) or not any(
                _decorator_name(d) in decorators
                for d in fdef.decorator_list):
            continue
        visible = _visible_names(fdef, parents, visible_cache, exo_names)
        if visible is None:  # a star import: anything may be bound
            continue
        for arg in fdef.args.args:
            if arg.annotation is None:
                continue
            for n in ast.walk(arg.annotation):
                if isinstance(n, ast.Name) and n.id not in visible and \
                        n.id not in _BUILTINS:
                    return fdef, n
    return None


def _decorator_name(d) -> Optional[str]:
    if isinstance(d, ast.Call):
        d = d.func
    if isinstance(d, ast.Name):
        return d.id
    if isinstance(d, ast.Attribute):
        return d.attr
    return None


def _visible_names(fdef, parents, cache, exo_names) -> Optional[set]:
    """Names that may be bound in the scopes where ``fdef``'s annotations
    are evaluated (every binding anywhere in them counts), or None when a
    star import makes that unknowable."""
    names = set()
    scope = parents.get(fdef)
    while scope is not None:
        if isinstance(scope, (ast.Module, ast.ClassDef, ast.FunctionDef,
                              ast.AsyncFunctionDef)):
            if scope not in cache:
                cache[scope] = _bound_in(scope, exo_names)
            if cache[scope] is None:
                return None
            names |= cache[scope]
        elif isinstance(scope, ast.Lambda):
            names |= _arg_names(scope.args)
        scope = parents.get(scope)
    return names


def _arg_names(a) -> set:
    out = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    out |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    return out


def _bound_in(scope, exo_names) -> Optional[set]:
    """Every name bound directly in ``scope`` (not in nested functions or
    classes, whose own names count), or None after a star import of
    anything but exo_hl."""
    names = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        names |= _arg_names(scope.args)
    stack = list(scope.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                          ast.ClassDef)):
            names.add(n.name)
            continue
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp,
                          ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, ast.ImportFrom):
            for a in n.names:
                if a.name == "*":
                    if n.module != "exo_hl":
                        return None
                    names |= set(exo_names)
                else:
                    names.add(a.asname or a.name)
        elif isinstance(n, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            names |= set(n.names)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            names.add(n.rest)
        stack.extend(ast.iter_child_nodes(n))
    return names
