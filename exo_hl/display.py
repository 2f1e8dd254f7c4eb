"""Seeing procedures in terminals and notebooks: highlighting, diffs, and
the scheduling history as a re-runnable snippet.

Kept apart from ``api.py`` so the facade stays a list of methods; nothing
here affects semantics.
"""
from __future__ import annotations

import difflib
import html


def highlight_html(text: str) -> str:
    """``text`` (procedure source) as syntax-highlighted HTML."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:  # pragma: no cover - pygments is a dependency
        return f"<pre>{html.escape(text)}</pre>"
    fmt = HtmlFormatter(noclasses=True, nowrap=False)
    return highlight(text, PythonLexer(), fmt)


class ProcDiff:
    """The lines that differ between two procedures: unified text in a
    terminal (``str``), coloured lines in a notebook."""

    def __init__(self, before: str, after: str, before_name: str,
                 after_name: str):
        self.lines = list(difflib.unified_diff(
            before.splitlines(), after.splitlines(), before_name, after_name,
            lineterm=""))

    def __bool__(self):
        return bool(self.lines)

    def __str__(self):
        return "\n".join(self.lines) if self.lines else "(no difference)"

    def __repr__(self):
        return str(self)

    def _repr_html_(self):
        colours = {"+": "#e6ffed", "-": "#ffeef0", "@": "#f1f8ff"}
        rows = []
        for ln in self.lines or ["(no difference)"]:
            bg = colours.get(ln[:1], "transparent")
            if ln.startswith(("+++", "---")):
                bg = "#fafbfc"
            rows.append(f'<div style="background:{bg};white-space:pre">'
                        f'{html.escape(ln)}</div>')
        return ('<div style="font-family:monospace;font-size:90%">'
                + "".join(rows) + "</div>")


def _arg_text(a, var: str) -> str:
    """A scheduling argument as Python text that recreates it."""
    from .cursors import Cursor
    from .core_ir.memory import Memory
    if isinstance(a, _Spelled):
        return a.text
    if isinstance(a, Cursor):
        return _cursor_text(a, var)
    if isinstance(a, type) and issubclass(a, Memory):
        return a.__name__
    name = getattr(a, "name", None)
    if callable(name) and hasattr(a, "ir"):          # a Procedure
        return name()
    if hasattr(a, "fields") and callable(name):      # a config
        return name()
    if isinstance(a, (tuple, list)):
        inner = ", ".join(_arg_text(x, var) for x in a)
        return f"({inner})" if isinstance(a, tuple) else f"[{inner}]"
    return repr(a)


def named_objects(args, kwargs) -> tuple:
    """The objects a step's text names by bare name (procedures and
    instructions, memories, configs): ``history()`` imports them."""
    out = []

    def visit(a):
        from .core_ir.memory import Memory
        from .cursors import Cursor
        if isinstance(a, Cursor):
            return
        if isinstance(a, type) and issubclass(a, Memory):
            out.append((a.__name__, a))
            return
        name = getattr(a, "name", None)
        if callable(name) and (hasattr(a, "ir") or hasattr(a, "fields")):
            out.append((name(), a))
        elif isinstance(a, (tuple, list)):
            for x in a:
                visit(x)

    try:
        for a in list(args) + list(kwargs.values()):
            visit(a)
    except Exception:  # noqa: BLE001 - a description, not semantics
        return ()
    return tuple(out)


def _defining_file(obj):
    """The source file that defines ``obj`` (a procedure or config), else
    None."""
    import os
    ir = getattr(obj, "ir", None)
    si = ir().srcinfo if callable(ir) else getattr(obj, "srcinfo", None)
    f = getattr(si, "filename", None)
    return os.path.realpath(f) if f else None


def _holders(name, obj):
    """(module name, module file) of every loaded module whose global
    ``name`` is ``obj``."""
    import sys
    main = sys.modules.get("__main__")
    out = []
    for mname, m in list(sys.modules.items()):
        if m is main and mname != "__main__":
            continue        # an alias of __main__ (multiprocessing's)
        try:
            if m is not None and vars(m).get(name) is obj:
                out.append((mname, getattr(m, "__file__", None)))
        except Exception:  # noqa: BLE001 - odd module objects
            continue
    return out


def _import_from(name, obj):
    """The module to import ``name`` from, else None: the module defining
    ``obj`` or, better, the shortest package above it that re-exports the
    same object; ``__main__`` only when nothing else holds it."""
    import os
    holders = _holders(name, obj)
    if not holders:
        return None
    home = obj.__module__ if isinstance(obj, type) else None
    if home is None:
        file = _defining_file(obj)
        home = next((m for m, f in holders if file is not None and
                     f is not None and os.path.realpath(f) == file), None)
    cands = [m for m, _ in holders]
    if home is not None:
        above = [m for m in cands if m == home or home.startswith(m + ".")]
        cands = above or cands

    def rank(m):
        private = any(x.startswith("_") for x in m.split(".")
                      if x != "__main__")
        return (m == "__main__", private, m.count("."), m)
    return min(cands, key=rank)


def import_lines(objs) -> list:
    """``from MODULE import NAME`` lines for the ``(name, obj)`` pairs (see
    ``_import_from``); a name no loaded module holds gets a comment that
    says to define it."""
    by_module, missing, seen = {}, [], set()
    for name, obj in objs:
        if name in seen:
            continue
        seen.add(name)
        m = _import_from(name, obj)
        if m is None:
            missing.append(name)
        else:
            by_module.setdefault(m, []).append(name)
    lines = [f"from {m} import {', '.join(names)}"
             for m, names in by_module.items()]
    lines += [f"# {n}: not a global of any imported module; define it "
              f"before running this" for n in missing]
    return lines


def _cursor_text(c, var: str) -> str:
    from .core_ir.nodes import IR
    from .core_ir.printer import stmt_to_str
    from .cursors import BlockCursor, GapCursor, StmtCursor
    if isinstance(c, GapCursor):       # the gap after / before a statement
        parent, field, k = c.location()
        side, k = (".after()", k - 1) if k > 0 else (".before()", k)
        stmt = StmtCursor(c.proc(), parent + ((field, k), ))
        return _cursor_text(stmt, var) + side
    if isinstance(c, BlockCursor):
        first = _cursor_text(c.first(), var)
        n = len(c.paths())
        return first + (f".expand(0, {n - 1})" if n > 1 else ".as_block()")
    node = c.node() if hasattr(c, "node") else None
    if isinstance(node, IR.For):
        name = node.iter.name
        same = [n for n in _loops(c.proc().ir().body) if n.iter.name == name]
        k = next((i for i, n in enumerate(same) if n is node), 0)
        pat = name if k == 0 else f"{name} #{k}"
        return f"{var}.find_loop({pat!r})"
    if isinstance(node, IR.expr):
        from .core_ir.printer import expr_to_str
        pat = expr_to_str(node)
        found = _selector(c.proc(), pat, c)
        if found is None:   # not found by its text (a bare read 'c' is a
            steps = _accessors(c)             # name pattern): by its path
            if steps is not None:
                return _cursor_text(c.stmt(), var) + steps
        return f"{var}.find({found or pat!r})"
    if isinstance(node, IR.stmt):
        first = stmt_to_str(node).splitlines()[0].strip().rstrip(":")
        return f"{var}.find({_selector(c.proc(), first, c) or first!r})"
    return f"{var}.body()"


def _accessors(c):
    """The cursor methods that lead from ``c``'s statement to ``c``
    (``.rhs().lhs()``, ``.idx()[1]``), checked by following them; None if
    some step has no method."""
    from .cursors import ExprCursor
    cur, text, epath = c.stmt(), "", ()
    for field, i in c.expr_path():
        epath += ((field, i), )
        want = ExprCursor(c.proc(), c.stmt_path(), epath)
        # the method named as the field (.rhs(), .idx()[i]), else the
        # operands (.args()[i]: a read's indices, ``-e``'s operand)
        for name, k in ((field, i), ("args", i or 0)):
            step = getattr(cur, name, None)
            try:
                nxt = step() if k is None else step()[k]
            except Exception:  # noqa: BLE001 - a description, not semantics
                continue
            if nxt == want:
                cur = nxt
                text += f".{name}()" + ("" if k is None else f"[{k}]")
                break
        else:
            return None
    return text


def _selector(where, pat, c):
    """``pat``, with ``#k`` when the cursor ``c`` is its k-th match in
    ``where`` (a procedure or a statement cursor), so that the spelled
    ``find`` finds ``c`` and not an earlier match of the same text (the
    alloc ``c: f32`` for a read of ``c``); None if no match is ``c``."""
    from .cursors import find
    try:
        found = (where.find(pat, many=True) if hasattr(where, "path")
                 else find(where, pat, many=True))
    except Exception:  # noqa: BLE001 - a description, not semantics
        return None
    for k, m in enumerate(found):
        if m == c:
            return pat if k == 0 else f"{pat} #{k}"
    return None


def _loops(stmts):
    from .core_ir.nodes import IR
    from .core_ir.traversal import walk_stmts
    return [s for s in walk_stmts(stmts) if isinstance(s, IR.For)]


class _Spelled:
    """An argument already turned into its text (``StepText``)."""

    __slots__ = ("text", )

    def __init__(self, text):
        self.text = text


def _snapshot(a, var):
    """``a`` with every part but cursors spelled now (a list the caller
    may change later is copied): cursors are immutable, and spelling one
    (``p.find_loop('i #2')``) walks its procedure's loops."""
    from .cursors import Cursor
    if isinstance(a, Cursor):
        return a
    if isinstance(a, (tuple, list)) and any(isinstance(x, (Cursor, tuple,
                                                            list))
                                            for x in a):
        out = [_snapshot(x, var) for x in a]
        return tuple(out) if isinstance(a, tuple) else out
    return _Spelled(_arg_text(a, var))


class StepText:
    """``step_text(...)``, spelled when first read (``history()``): a
    schedule makes hundreds of steps and spelling their cursors was ~3%
    of building the SGEMM schedule. Everything but the cursors is spelled
    at the call, so the text is the one the call would have had."""

    __slots__ = ("_parts", "_text")

    def __init__(self, method: str, args, kwargs, var: str = "p"):
        try:
            self._parts = (method, [_snapshot(a, var) for a in args],
                           {k: _snapshot(v, var) for k, v in kwargs.items()},
                           var)
            self._text = None
        except Exception:  # noqa: BLE001 - a description, not semantics
            self._parts, self._text = None, f"{var}.{method}(...)"

    def __str__(self):
        if self._text is None:
            method, args, kwargs, var = self._parts
            self._text = step_text(method, args, kwargs, var)
            self._parts = None
        return self._text


def step_text(method: str, args, kwargs, var: str = "p") -> str:
    """``p.method(args...)`` as text; never raises (a history entry must
    not make a scheduling call fail)."""
    try:
        parts = [_arg_text(a, var) for a in args]
        parts += [f"{k}={_arg_text(v, var)}" for k, v in kwargs.items()]
    except Exception:  # noqa: BLE001 - a description, not semantics
        parts = ["..."]
    return f"{var}.{method}({', '.join(parts)})"
