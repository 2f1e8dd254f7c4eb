"""Pattern strings (docs/api.md §4): pointing at code by writing it.

A pattern is parsed with Python's own ``ast`` and matched structurally
against the IR, comparing names by spelling (``Sym.name``). ``_`` is a
wildcard for a name, an expression, an index list, an argument list or a
body. A trailing ``#k`` picks the k-th match (0-based) in program order;
``k`` is written in digits, and any other ``#`` (``'i #-1'``, ``'i #x'``,
``'i #1 #2'``) is refused rather than read as a Python comment.

Kinds of patterns:

* a bare name ``'i'``: a loop over ``i``, an allocation/window named ``i``,
  or (when no statement matches) the argument ``i``;
* a statement: ``'for i in _: _'``, ``'if _: _'``, ``'t : _'`` (an
  allocation, or when none matches the argument ``t``),
  ``'C[_] += _'``, ``'C[i, j] = _'``, ``'t = _'``, ``'Cfg.field = _'``,
  ``'foo(_)'`` (a call), ``'pass'``; a bare buffer name on the left
  (``'t = _'``, ``'C += _'``) matches its indexed writes too, as in Exo;
* a loop nest ``'i j'``: the loop over ``i`` that has a loop over ``j``
  directly in its body (Exo's shorthand);
* an expression: ``'A[i, k]'``, ``'A[_]'``, ``'_ * _'``, ``'n + 1'``,
  ``'stride(A, 0)'``, ``'relu(_)'``.

Matching returns *locations* in the path convention of ``exo_hl.cursors``:
``('stmt', path)``, ``('expr', path, expr_path)`` or ``('arg', index)``.
This module knows nothing about cursors or procedures objects; it works on
``IR.Proc`` nodes.

Why one module of this size: reading a pattern and matching it share one
representation (Python's ast of the pattern, its wildcards and ``#k``
picks), and each pattern kind's reading and matching are written side by
side; split apart, that representation would be every piece's interface.
"""
from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from .caches import memo
from .core_ir.nodes import IR, same_constant
from .core_ir.operators import LOOP_KINDS, PY_ARITH, PY_BOOL, PY_CMP
from .core_ir.paths import get_stmt, walk_with_paths
from .core_ir.types import TYPE_NAMES
from .errors import SchedulingError

_INDEX_RE = re.compile(r"^(?P<body>.*?)\s*#\s*(?P<k>[0-9]+)\s*$", re.S)

# the operators a procedure can contain (core_ir.operators)
_BINOPS = PY_ARITH
_CMPOPS = PY_CMP


class PatternError(SchedulingError, ValueError):
    """A pattern string that is not a valid pattern (a usage error)."""


@dataclass(frozen=True)
class Pattern:
    text: str           # the pattern as written, ``#k`` included
    kind: str           # 'name' | 'stmt' | 'expr'
    node: object        # the ast node (ast.stmt for 'stmt', ast.expr else)
    k: Optional[int]    # the ``#k`` selector, None when absent

    @property
    def name(self) -> Optional[str]:
        return self.node.id if self.kind == "name" else None


_NEST_RE = re.compile(r"^([A-Za-z_]\w*)\s+([A-Za-z_]\w*)$")


class _LoopNest(ast.stmt):
    """``'a b'``: a loop over ``a`` with a loop over ``b`` directly in its
    body (Exo's shorthand for a loop nest); matches the outer loop."""
    _fields = ("outer", "inner")

    def __init__(self, outer, inner):
        super().__init__()
        self.outer, self.inner = outer, inner


@memo(maxsize=512)
def parse(text: str) -> Pattern:
    """Parse a pattern string (cached: patterns are immutable)."""
    if not isinstance(text, str):
        raise PatternError(f"a pattern must be a string, got {text!r}")
    k = None
    m = _INDEX_RE.match(text)
    body = text
    if m:
        body, k = m.group("body"), int(m.group("k"))
    if "#" in body:
        # Python would read the rest as a comment: 'i #-1' or 'i #1 #2'
        # must not silently mean 'i' or 'i #1'
        raise PatternError(f"bad selector in pattern {text!r}: a pattern "
                           f"ends with at most one '#k', k a non-negative "
                           f"integer written in digits")
    src = body.strip()
    if not src:
        raise PatternError(f"empty pattern {text!r}")
    nest = _NEST_RE.match(src)
    if nest and not any(keyword.iskeyword(g) for g in nest.groups()):
        # ('not b' is an expression: no loop is named 'not')
        return Pattern(text, "stmt", _LoopNest(nest.group(1),
                                               nest.group(2)), k)
    try:
        mod = ast.parse(src, mode="exec")
    except SyntaxError as e:
        raise PatternError(f"cannot parse pattern {text!r}: {e.msg}") from None
    except (RecursionError, MemoryError):
        raise PatternError(f"pattern nested too deeply to parse: "
                           f"{src[:60]!r}...") from None
    if len(mod.body) != 1:
        raise PatternError(f"pattern {text!r} must be a single statement "
                           "or expression")
    st = mod.body[0]
    if isinstance(st, ast.Expr):
        if isinstance(st.value, ast.Name) and st.value.id != "_":
            return Pattern(text, "name", st.value, k)
        return Pattern(text, "expr", st.value, k)
    if not isinstance(st, (ast.For, ast.If, ast.AnnAssign, ast.Assign,
                           ast.AugAssign, ast.Pass)):
        raise PatternError(f"unsupported pattern {text!r}")
    return Pattern(text, "stmt", st, k)


def parse_expr(text: str) -> Pattern:
    """Parse a pattern that must denote an expression (bare names included)."""
    p = parse(text)
    if p.kind == "stmt":
        raise PatternError(f"pattern {text!r} is a statement, "
                           "an expression was expected")
    return p


# ----------------------------------------------------------------------
# walking the IR in program order, with paths
def stmt_paths(proc) -> Iterator[Tuple[tuple, object]]:
    """``(path, stmt)`` for every statement of an ``IR.Proc``, in order."""
    return walk_with_paths(proc.body)


def stmt_expr_fields(s) -> List[Tuple[str, Optional[int], object]]:
    """The expression fields of a statement in reading order:
    ``(field, index or None, expr)``."""
    if isinstance(s, (IR.Assign, IR.Reduce)):
        return [("idx", i, e) for i, e in enumerate(s.idx)] + \
            [("rhs", None, s.rhs)]
    if isinstance(s, (IR.WriteConfig, IR.WindowStmt)):
        return [("rhs", None, s.rhs)]
    if isinstance(s, IR.If):
        return [("cond", None, s.cond)]
    if isinstance(s, IR.For):
        return [("lo", None, s.lo), ("hi", None, s.hi)]
    if isinstance(s, IR.Call):
        return [("args", i, e) for i, e in enumerate(s.args)]
    return []


def expr_children(e) -> List[Tuple[str, Optional[int], object]]:
    """The sub-expression fields of an expression or window access."""
    if isinstance(e, IR.Read):
        return [("idx", i, x) for i, x in enumerate(e.idx)]
    if isinstance(e, (IR.USub, IR.Not)):
        return [("arg", None, e.arg)]
    if isinstance(e, IR.BinOp):
        return [("lhs", None, e.lhs), ("rhs", None, e.rhs)]
    if isinstance(e, IR.Extern):
        return [("args", i, x) for i, x in enumerate(e.args)]
    if isinstance(e, IR.WindowExpr):
        return [("idx", i, x) for i, x in enumerate(e.idx)]
    if isinstance(e, IR.Interval):
        return [("lo", None, e.lo), ("hi", None, e.hi)]
    if isinstance(e, IR.Point):
        return [("pt", None, e.pt)]
    return []


def expr_paths(s) -> Iterator[Tuple[tuple, object]]:
    """``(expr_path, expr)`` for every expression in a statement (not in
    nested statements), pre-order, in reading order."""
    def go(node, prefix):
        if isinstance(node, IR.expr):
            yield prefix, node
        for f, i, c in expr_children(node):
            yield from go(c, prefix + ((f, i), ))
    for f, i, e in stmt_expr_fields(s):
        yield from go(e, ((f, i), ))


# ----------------------------------------------------------------------
# matching
def match(pattern, proc, want: Optional[str] = None,
          within: Optional[tuple] = None) -> list:
    """All locations in ``proc`` (an ``IR.Proc``) matching ``pattern``.

    ``want`` narrows what may match: ``'loop'``, ``'stmt'``, ``'expr'``,
    ``'buffer'`` (allocations, windows and arguments), or None for the
    pattern's natural kind. ``#k`` is *not* applied here (see ``select``).
    ``within``: a statement path; only that statement and the statements
    in it are searched (the same matches, in the same order, as the
    matches of the whole procedure under that path; arguments may still
    be returned when nothing in it matches a name).
    """
    pat = parse(pattern) if isinstance(pattern, str) else pattern
    if within is not None:
        def stmt_paths(proc):
            return _subtree_paths(proc, within)
    else:
        stmt_paths = _all_stmt_paths
    out = []
    if pat.kind == "name" and want != "expr":
        name = pat.node.id
        for path, s in stmt_paths(proc):
            if isinstance(s, IR.For) and s.iter.name == name:
                if want in (None, "loop", "stmt"):
                    out.append(("stmt", path))
            elif isinstance(s, (IR.Alloc, IR.WindowStmt)) and s.name.name == name:
                if want in (None, "buffer", "stmt"):
                    out.append(("stmt", path))
        if not out and want in (None, "buffer"):
            out = [("arg", i) for i, a in enumerate(proc.args)
                   if a.name.name == name]
        return out
    if pat.kind == "stmt":
        if want == "expr":
            return []
        for path, s in stmt_paths(proc):
            if _match_stmt(pat.node, s):
                if want == "loop" and not isinstance(s, IR.For):
                    continue
                if want == "buffer" and not isinstance(s, (IR.Alloc, IR.WindowStmt)):
                    continue
                out.append(("stmt", path))
        if not out and want in (None, "buffer") \
                and isinstance(pat.node, ast.AnnAssign):
            # 't : _' names a buffer: an allocation, else an argument (as a
            # bare name does)
            ann = pat.node
            out = [("arg", i) for i, a in enumerate(proc.args)
                   if isinstance(ann.target, ast.Name)
                   and _name_ok(ann.target.id, a.name)
                   and _match_type(ann.annotation, a.type, a.mem)]
        return out
    # expression patterns ('foo(_)' may also be a call statement)
    is_call = isinstance(pat.node, ast.Call)
    for path, s in stmt_paths(proc):
        if is_call and want in (None, "stmt") and isinstance(s, IR.Call) \
                and _match_call_stmt(pat.node, s):
            out.append(("stmt", path))
        if want in (None, "expr"):
            for epath, e in expr_paths(s):
                if _match_expr(pat.node, e):
                    out.append(("expr", path, epath))
    return out


def _all_stmt_paths(proc):
    return stmt_paths(proc)


def _subtree_paths(proc, within):
    """``(path, stmt)`` for the statement at ``within`` and those in it, in
    program order (a cursor's search: not the whole procedure)."""
    *parent, (field, i) = within
    return walk_with_paths((get_stmt(proc, within), ), tuple(parent), field,
                           i)


def select(pattern, matches: list) -> list:
    """Apply the pattern's ``#k`` selector to a match list."""
    pat = parse(pattern) if isinstance(pattern, str) else pattern
    if pat.k is None:
        return matches
    return matches[pat.k:pat.k + 1]


def _is_wild(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "_"


def _is_wild_stmt(node) -> bool:
    return isinstance(node, ast.Expr) and _is_wild(node.value)


def _name_ok(pat_name: str, sym) -> bool:
    return pat_name == "_" or sym.name == pat_name


def _match_body(pats, stmts) -> bool:
    """``_`` alone matches any body; otherwise a prefix match in which each
    ``_`` stands for one statement."""
    if len(pats) == 1 and _is_wild_stmt(pats[0]):
        return True
    if len(pats) > len(stmts):
        return False
    return all(_is_wild_stmt(p) or _match_stmt(p, s)
               for p, s in zip(pats, stmts))


def _match_stmt(p, s) -> bool:
    if isinstance(p, _LoopNest):
        return (isinstance(s, IR.For) and _name_ok(p.outer, s.iter)
                and any(isinstance(b, IR.For) and _name_ok(p.inner, b.iter)
                        for b in s.body))
    if isinstance(p, ast.Pass):
        return isinstance(s, IR.Pass)
    if isinstance(p, ast.Expr):
        if _is_wild(p.value):
            return True
        if isinstance(p.value, ast.Call):
            return isinstance(s, IR.Call) and _match_call_stmt(p.value, s)
        return False
    if isinstance(p, ast.For):
        if not isinstance(s, IR.For) or not isinstance(p.target, ast.Name):
            return False
        if not _name_ok(p.target.id, s.iter):
            return False
        it = p.iter
        if not _is_wild(it):
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                    and it.func.id in LOOP_KINDS):
                return False
            mode = LOOP_KINDS[it.func.id]
            if s.mode != mode:
                return False
            if not (len(it.args) == 1 and _is_wild(it.args[0])):
                if len(it.args) != 2 or not (_match_expr(it.args[0], s.lo) and
                                             _match_expr(it.args[1], s.hi)):
                    return False
        return _match_body(p.body, s.body)
    if isinstance(p, ast.If):
        if not isinstance(s, IR.If) or not _match_expr(p.test, s.cond):
            return False
        if not _match_body(p.body, s.body):
            return False
        return not p.orelse or _match_body(p.orelse, s.orelse)
    if isinstance(p, ast.AnnAssign):
        return (isinstance(s, IR.Alloc) and isinstance(p.target, ast.Name)
                and _name_ok(p.target.id, s.name)
                and _match_type(p.annotation, s.type, s.mem))
    if isinstance(p, ast.AugAssign):
        return (isinstance(p.op, ast.Add) and isinstance(s, IR.Reduce)
                and _match_lhs(p.target, s) and _match_expr(p.value, s.rhs))
    if isinstance(p, ast.Assign):
        if len(p.targets) != 1:
            return False
        tgt = p.targets[0]
        if isinstance(tgt, ast.Attribute):
            return (isinstance(s, IR.WriteConfig)
                    and isinstance(tgt.value, ast.Name)
                    and tgt.value.id in ("_", s.config.name())
                    and tgt.attr in ("_", s.field)
                    and _match_expr(p.value, s.rhs))
        if isinstance(s, IR.WindowStmt):
            return (isinstance(tgt, ast.Name) and _name_ok(tgt.id, s.name)
                    and _match_expr(p.value, s.rhs))
        return (isinstance(s, IR.Assign) and _match_lhs(tgt, s)
                and _match_expr(p.value, s.rhs))
    return False


def _match_lhs(tgt, s) -> bool:
    if isinstance(tgt, ast.Name):
        # as in Exo, 'x = _' also matches the indexed writes 'x[i] = _'
        return _name_ok(tgt.id, s.name)
    if isinstance(tgt, ast.Subscript) and isinstance(tgt.value, ast.Name):
        return (_name_ok(tgt.value.id, s.name)
                and _match_index(tgt.slice, s.idx, window=False))
    return False


def _match_type(ann, typ, mem) -> bool:
    if _is_wild(ann):
        return True
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.MatMult):
        m = ann.right
        if not (_is_wild(m) or (isinstance(m, ast.Name)
                                and getattr(mem, "__name__", None) == m.id)):
            return False
        ann = ann.left
    if isinstance(ann, ast.Subscript):
        if not isinstance(typ, IR.Tensor):
            return False
        if not _match_index(ann.slice, typ.hi, window=False):
            return False
        typ, ann = typ.type, ann.value
    if _is_wild(ann):
        return True
    base = typ.type if isinstance(typ, IR.Tensor) else typ
    return isinstance(ann, ast.Name) and TYPE_NAMES.get(base) == ann.id


def _index_list(sl) -> list:
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


def _match_index(sl, idx, window) -> bool:
    """Match a subscript against an index (or window access) list."""
    if _is_wild(sl):
        return True
    pats = _index_list(sl)
    if len(pats) != len(idx):
        return False
    for p, x in zip(pats, idx):
        if _is_wild(p):
            continue
        if isinstance(p, ast.Slice):
            if not isinstance(x, IR.Interval):
                return False
            if p.lower is not None and not _match_expr(p.lower, x.lo):
                return False
            if p.upper is not None and not _match_expr(p.upper, x.hi):
                return False
        else:
            if isinstance(x, IR.Interval):
                return False
            e = x.pt if isinstance(x, IR.Point) else x
            if not _match_expr(p, e):
                return False
    return True


def _match_args(pargs, args) -> bool:
    if len(pargs) == 1 and _is_wild(pargs[0]):
        return True
    return len(pargs) == len(args) and all(
        _match_expr(p, a) for p, a in zip(pargs, args))


def _match_call_stmt(p, s) -> bool:
    return (isinstance(p.func, ast.Name) and p.func.id in ("_", s.f.name)
            and _match_args(p.args, s.args))


def _match_expr(p, e) -> bool:
    if _is_wild(p):
        return True
    if isinstance(p, ast.Name):
        return isinstance(e, IR.Read) and not e.idx and e.name.name == p.id
    if isinstance(p, ast.Constant):
        return (isinstance(e, IR.Const) and type(e.val) is type(p.value)
                and same_constant(e.val, p.value)) or (
            isinstance(e, IR.Const) and isinstance(p.value, (int, float))
            and not isinstance(p.value, bool) and not isinstance(e.val, bool)
            and same_constant(e.val, p.value))
    if isinstance(p, ast.Subscript):
        if not isinstance(p.value, ast.Name):
            return False
        if isinstance(e, IR.Read):
            return (_name_ok(p.value.id, e.name) and bool(e.idx)
                    and _match_index(p.slice, e.idx, window=False))
        if isinstance(e, IR.WindowExpr):
            return (_name_ok(p.value.id, e.name)
                    and _match_index(p.slice, e.idx, window=True))
        return False
    if isinstance(p, ast.BinOp):
        op = _BINOPS.get(type(p.op))
        return (isinstance(e, IR.BinOp) and e.op == op
                and _match_expr(p.left, e.lhs) and _match_expr(p.right, e.rhs))
    if isinstance(p, ast.Compare):
        if len(p.ops) != 1:
            return False
        op = _CMPOPS.get(type(p.ops[0]))
        return (isinstance(e, IR.BinOp) and e.op == op
                and _match_expr(p.left, e.lhs)
                and _match_expr(p.comparators[0], e.rhs))
    if isinstance(p, ast.BoolOp):
        op = PY_BOOL[type(p.op)]
        vals = p.values
        return _match_boolchain(op, vals, e)
    if isinstance(p, ast.UnaryOp):
        if isinstance(p.op, ast.USub):
            if isinstance(e, IR.USub):
                return _match_expr(p.operand, e.arg)
            return (isinstance(p.operand, ast.Constant)
                    and isinstance(e, IR.Const) and not isinstance(e.val, bool)
                    and same_constant(e.val, -p.operand.value))
        if isinstance(p.op, ast.Not):
            return isinstance(e, IR.Not) and _match_expr(p.operand, e.arg)
        return False
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name):
        f = p.func.id
        if f == "stride" and isinstance(e, IR.StrideExpr):
            if len(p.args) != 2 or not isinstance(p.args[0], ast.Name):
                return False
            d = p.args[1]
            return (_name_ok(p.args[0].id, e.name)
                    and (_is_wild(d) or (isinstance(d, ast.Constant)
                                         and d.value == e.dim)))
        if isinstance(e, IR.Extern):
            return f in ("_", e.f.name()) and _match_args(p.args, e.args)
        return False
    if isinstance(p, ast.Attribute) and isinstance(p.value, ast.Name):
        return (isinstance(e, IR.ReadConfig)
                and p.value.id in ("_", e.config.name())
                and p.attr in ("_", e.field))
    return False


def _match_boolchain(op, vals, e) -> bool:
    """``a and b and c`` matches either association of the IR chain."""
    if len(vals) == 1:
        return _match_expr(vals[0], e)
    if not (isinstance(e, IR.BinOp) and e.op == op):
        return False
    # left-associated: ((a op b) op c)
    if _match_boolchain(op, vals[:-1], e.lhs) and _match_expr(vals[-1], e.rhs):
        return True
    # right-associated: (a op (b op c))
    return _match_expr(vals[0], e.lhs) and _match_boolchain(op, vals[1:], e.rhs)


__all__ = ["Pattern", "PatternError", "parse", "parse_expr", "match",
           "select", "stmt_paths", "expr_paths", "stmt_expr_fields",
           "expr_children"]
