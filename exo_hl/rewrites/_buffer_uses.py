"""Where and how a buffer is used: every place a block touches a buffer
(with the statement path of each, in program order), the window names that
alias it, and the kinds of access ('read', 'write', 'reduce') a callee makes
to a buffer parameter.

Buffer rewrites (``stage_mem``, ``sink_alloc``, ``reuse_buffer``,
``resize_dim``, ``inline_assign``...) ask the same questions: where is this
buffer read, written, windowed or passed whole, and under which statement?
This module answers them once.
"""
from __future__ import annotations

from typing import Iterator, NamedTuple

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.paths import walk_with_paths
from ..core_ir.traversal import walk, walk_stmts
from ..effects.effects import truncating_reduce, write_kinds
from ..patterns import stmt_expr_fields


def param_uses(callee, k, _seen=None) -> frozenset:
    """Kinds of access ('read', 'write', 'reduce') the procedure ``callee``
    makes to its ``k``-th parameter, through windows and nested calls."""
    seen = _seen if _seen is not None else set()
    key = (id(callee), k)
    if key in seen:
        return frozenset()
    seen.add(key)
    names = {callee.args[k].name}
    for s in walk_stmts(callee.body):
        if isinstance(s, IR.WindowStmt) and s.rhs.name in names:
            names.add(s.name)
    kinds = set()
    for s in walk_stmts(callee.body):
        if isinstance(s, (IR.Assign, IR.Reduce)) and s.name in names:
            kinds.update(write_kinds(s))
        elif isinstance(s, IR.Call):
            for j, a in enumerate(s.args):
                if isinstance(a, (IR.Read, IR.WindowExpr)) and a.name in names:
                    kinds |= param_uses(s.f, j, seen)
        for e in stmt_exprs(s):
            for n in walk(e):
                if isinstance(n, IR.Read) and n.name in names and n.idx:
                    kinds.add("read")
    return frozenset(kinds)


def stmt_exprs(s):
    """The expressions of a statement itself (not of nested statements);
    call arguments that pass whole buffers/windows are left out."""
    if isinstance(s, (IR.Assign, IR.Reduce)):
        return tuple(s.idx) + (s.rhs, )
    if isinstance(s, IR.WriteConfig):
        return (s.rhs, )
    if isinstance(s, IR.If):
        return (s.cond, )
    if isinstance(s, IR.For):
        return (s.lo, s.hi)
    if isinstance(s, IR.WindowStmt):
        return tuple(x for w in s.rhs.idx for x in _w_exprs(w))
    if isinstance(s, IR.Call):
        out = []
        for a in s.args:
            if isinstance(a, IR.WindowExpr):
                out.extend(x for w in a.idx for x in _w_exprs(w))
            elif not (isinstance(a, IR.Read) and not a.idx):
                out.append(a)
        return tuple(out)
    return ()


def _w_exprs(w):
    return (w.lo, w.hi) if isinstance(w, IR.Interval) else (w.pt, )



class Use(NamedTuple):
    kind: str      # 'write' | 'reduce' | 'read' | 'whole' | 'window' | 'stride'
    path: tuple    # statement path of the statement holding it
    stmt: object   # that statement
    node: object   # the Assign/Reduce statement or the expression node


def stmt_uses(path, s, names) -> Iterator[Use]:
    """The uses of any buffer in ``names`` by ``s`` itself (not by the
    statements nested in it)."""
    if isinstance(s, IR.Assign) and s.name in names:
        yield Use("write", path, s, s)
    elif isinstance(s, IR.Reduce) and s.name in names:
        yield Use("reduce", path, s, s)
    for _, _, e in stmt_expr_fields(s):
        for n in walk(e):
            if isinstance(n, IR.Read) and n.name in names:
                if n.idx or T.is_real_scalar(n.type):
                    yield Use("read", path, s, n)
                else:
                    yield Use("whole", path, s, n)
            elif isinstance(n, IR.WindowExpr) and n.name in names:
                yield Use("window", path, s, n)
            elif isinstance(n, IR.StrideExpr) and n.name in names:
                yield Use("stride", path, s, n)


def uses(stmts, parent, field, lo, names) -> list:
    """Every use of the buffers ``names`` in ``stmts`` (the statements
    ``lo...`` of ``get_list(parent, field)``), in program order."""
    out = []
    for p, s in walk_with_paths(tuple(stmts), tuple(parent), field, lo):
        out.extend(stmt_uses(p, s, names))
    return out


def aliases(proc_ir, sym) -> set:
    """``sym`` and every window statement name viewing it (transitively)."""
    names = {sym}
    for s in walk_stmts(proc_ir.body):
        if isinstance(s, IR.WindowStmt) and s.rhs.name in names:
            names.add(s.name)
    return names


def reads_strides(f, _seen=None) -> bool:
    """Whether the procedure ``f`` reads any stride (``stride(...)``) in its
    body or preconditions, or in a procedure it calls: the safe, coarse
    answer to "may ``f`` observe the strides of a window passed to it"."""
    seen = set() if _seen is None else _seen
    if id(f) in seen:
        return False
    seen.add(id(f))
    for s in walk_stmts(f.body):
        for _, _, e in stmt_expr_fields(s):
            if any(isinstance(n, IR.StrideExpr) for n in walk(e)):
                return True
        if isinstance(s, IR.Call) and reads_strides(s.f, seen):
            return True
    return any(isinstance(n, IR.StrideExpr) for p in f.preds for n in walk(p))


def window_dims(proc_ir, sym, rank) -> dict:
    """``{name: dims}`` for ``sym`` (of ``rank`` dimensions) and each window
    name viewing it (transitively): dimension ``k`` of the name runs along
    dimension ``dims[k]`` of ``sym``, so its stride is that one's."""
    out = {sym: tuple(range(rank))}
    for s in walk_stmts(proc_ir.body):
        if isinstance(s, IR.WindowStmt) and s.rhs.name in out:
            src = out[s.rhs.name]
            out[s.name] = tuple(src[j] for j, w in enumerate(s.rhs.idx)
                                if isinstance(w, IR.Interval))
    return out


def stride_reads(us, dims) -> Iterator[tuple]:
    """The uses among ``us`` (of ``sym`` and the window names of
    ``dims = window_dims(..., sym, ...)``) that can observe strides of
    ``sym``, each with the dimensions of ``sym`` whose strides it sees:
    ``stride(x, k)``, and a window or window name passed to a callee that
    reads strides (``reads_strides``), or passed whole to one (all its
    dimensions)."""
    for u in us:
        n = u.node
        if u.kind == "stride":
            yield u, (dims[n.name][n.dim], )
        elif u.kind in ("window", "whole") and isinstance(u.stmt, IR.Call) \
                and reads_strides(u.stmt.f):
            if u.kind == "window":
                yield u, tuple(dims[n.name][j] for j, w in enumerate(n.idx)
                               if isinstance(w, IR.Interval))
            else:
                yield u, dims[n.name]


def refuse_changed_stride_reads(ir, sym, rank, scope_at, changed, clause,
                                fail):
    """Raise ``fail(stmt, message)`` at the first use in the scope
    ``scope_at = (stmts, parent, field, index)`` that reads a stride of
    ``sym`` (``stride_reads``) along a dimension ``d`` with ``changed(d)``.
    ``clause(plural)`` ends the message: what changes those strides."""
    from ._expr_at import expr_text
    dims = window_dims(ir, sym, rank)
    for u, ds in stride_reads(uses(*scope_at, set(dims)), dims):
        bad = [d for d in ds if changed(d)]
        if not bad:
            continue
        s = "s" if len(bad) > 1 else ""
        dim_text = (f"dimension{s} {', '.join(str(d) for d in bad)} of "
                    f"'{sym.name}'")
        if u.kind == "stride":
            raise fail(u.stmt, f"'{expr_text(u.node)}' reads the stride of "
                       f"{dim_text}, which {clause(False)}")
        raise fail(u.stmt, f"'{u.stmt.f.name}' reads strides of its "
                   f"argument '{expr_text(u.node)}', a window along "
                   f"{dim_text}, whose stride{s} {clause(bool(s))}")


def window_roots(ir) -> dict:
    """Each window statement name of the procedure mapped to the buffer
    (allocation or argument) it views, through windows of windows."""
    root = {}
    for st in walk_stmts(ir.body):
        if isinstance(st, IR.WindowStmt):
            root[st.name] = root.get(st.rhs.name, st.rhs.name)
    return root


def truncating_note(stmts) -> str:
    """A note for a "do not commute" refusal when ``stmts`` hold a ``+=`` of
    a floating-point value into an integer location
    (``effects.truncating_reduce``), which the effect analysis counts as a
    read and a write: the generic reason would not say why two additions
    do not commute."""
    from ..core_ir.printer import stmt_to_str
    s = truncating_reduce(stmts)
    if s is None:
        return ""
    return (f"; note: '{stmt_to_str(s).strip()}' adds a "
            f"floating-point value into an integer location, which "
            f"truncates and saturates at each step, so such additions do "
            f"not commute")
