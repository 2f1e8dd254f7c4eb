"""Generic traversal and structural helpers over IR nodes.

Every pass walks the IR through these few functions, so a new node kind in
the grammar is picked up everywhere without per-pass edits.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterator

from .nodes import IR, Node
from .syms import Sym


#: the fields of a ``Call`` that may hold children (not its callee ``f``)
_CALL_FIELDS = tuple(n for n in IR.Call._fields if n != "f")
#: node kinds held in fields that are not children (types, loop modes)
_NOT_CHILDREN = (IR.type, IR.loop_mode)


def children(node: Node) -> Iterator[Node]:
    """Direct IR children of a node (fields holding nodes or tuples of them).

    A ``Call``'s callee (``f``) is not a child: it is a separate procedure.
    Types on expressions are not children either (they hold size expressions
    that live in the declaring scope).
    """
    for name in (_CALL_FIELDS if type(node) is IR.Call else node._fields):
        v = getattr(node, name)
        if isinstance(v, Node):
            if not isinstance(v, _NOT_CHILDREN):
                yield v
        elif isinstance(v, tuple):
            for x in v:
                if isinstance(x, Node):
                    yield x


def walk(node: Node) -> Iterator[Node]:
    """Pre-order iteration over a node and all its descendants."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(list(children(n))))


def walk_stmts(stmts) -> Iterator:
    """Every statement in a block, nested ones included, in program order."""
    for s in stmts:
        yield s
        if isinstance(s, IR.If):
            yield from walk_stmts(s.body)
            yield from walk_stmts(s.orelse)
        elif isinstance(s, IR.For):
            yield from walk_stmts(s.body)


def map_node(node: Node, fn: Callable[[Node], Node | None]) -> Node:
    """Bottom-up rewrite: children first, then ``fn`` on the rebuilt node.

    ``fn`` returns a replacement or None to keep the node. Unchanged subtrees
    are shared, not copied.
    """
    changes = {}
    for name in (_CALL_FIELDS if type(node) is IR.Call else node._fields):
        v = getattr(node, name)
        if isinstance(v, Node) and not isinstance(v, _NOT_CHILDREN):
            nv = map_node(v, fn)
            if nv is not v:
                changes[name] = nv
        elif isinstance(v, tuple) and v and isinstance(v[0], Node):
            nl = []
            changed = False
            for x in v:
                nx = map_node(x, fn) if isinstance(x, Node) else x
                if isinstance(nx, (list, tuple)) and isinstance(x, IR.stmt):
                    nl.extend(nx)
                    changed = True
                else:
                    nl.append(nx)
                    changed |= nx is not x
            if changed:
                changes[name] = tuple(nl)
    if changes:
        node = node.update(**changes)
    r = fn(node)
    return node if r is None else r


def map_types_in_node(node: Node, fn) -> Node:
    """Apply ``fn`` (expr -> expr) to the size expressions in type fields,
    and to each window type itself (so a renaming reaches the buffer it
    records as viewed, ``src_buf``)."""
    def fix_type(t):
        if isinstance(t, IR.Tensor):
            return t.update(hi=tuple(map_node(h, fn) for h in t.hi))
        if isinstance(t, IR.WindowType):
            t = t.update(src_type=fix_type(t.src_type),
                         as_tensor=fix_type(t.as_tensor),
                         idx=tuple(map_node(w, fn) for w in t.idx))
            r = fn(t)           # the type's own fields (``src_buf``)
            return t if r is None else r
        return t

    def visit(n):
        if isinstance(n, (IR.Alloc, IR.FnArg)):
            return n.update(type=fix_type(n.type))
        if isinstance(n, IR.expr) and isinstance(n.type, (IR.Tensor, IR.WindowType)):
            return n.update(type=fix_type(n.type))
        return None
    return map_node(node, visit)


def subst(node: Node, env: Dict[Sym, Node]) -> Node:
    """Replace reads of control variables ``Read(x, ())`` by expressions.

    Also renames buffers when ``env`` maps a symbol to a symbol. Size
    expressions inside types are substituted too.
    """
    if not env:
        return node

    def fn(n):
        if isinstance(n, IR.Read):
            r = env.get(n.name)
            if r is None:
                return None
            if isinstance(r, Sym):
                return n.update(name=r)
            if not n.idx:
                if isinstance(r, IR.expr) and r.srcinfo is None:
                    return r.update(srcinfo=n.srcinfo)
                return r
            return None
        for field in ("name", "iter"):
            if field in n._fields:
                v = getattr(n, field)
                if isinstance(v, Sym) and isinstance(env.get(v), Sym):
                    return n.update(**{field: env[v]})
        if isinstance(n, IR.WindowType) and isinstance(env.get(n.src_buf), Sym):
            return n.update(src_buf=env[n.src_buf])
        return None

    def type_fn(n):
        return fn(n)

    out = map_node(node, fn)
    return map_types_in_node(out, type_fn)


def free_vars(node, bound=None) -> set:
    """Symbols used in ``node`` (a node or tuple of stmts) but not bound there."""
    out = set()
    _free(node if isinstance(node, tuple) else (node, ), set(bound or ()), out)
    return out


def _type_vars(t, bound, out):
    if isinstance(t, IR.Tensor):
        for h in t.hi:
            _free((h, ), bound, out)


def _free(nodes, bound, out):
    bound = set(bound)
    for n in nodes:
        if isinstance(n, IR.For):
            _free((n.lo, n.hi), bound, out)
            _free(n.body, bound | {n.iter}, out)
            continue
        if isinstance(n, IR.Alloc):
            _type_vars(n.type, bound, out)
            bound.add(n.name)
            continue
        if isinstance(n, IR.WindowStmt):
            _free((n.rhs, ), bound, out)
            bound.add(n.name)
            continue
        if isinstance(n, IR.If):
            _free((n.cond, ), bound, out)
            _free(n.body, bound, out)
            _free(n.orelse, bound, out)
            continue
        for field in ("name", ):
            if field in n._fields:
                v = getattr(n, field)
                if isinstance(v, Sym) and v not in bound:
                    out.add(v)
        _free(tuple(children(n)), bound, out)


def bound_syms(stmts) -> list:
    """Every symbol a block binds (loop iterators, allocations, window
    names), nested blocks included, in program order."""
    out = []
    for s in walk_stmts(stmts):
        if isinstance(s, IR.For):
            out.append(s.iter)
        elif isinstance(s, (IR.Alloc, IR.WindowStmt)):
            out.append(s.name)
    return out


def fresh_copy(stmts: tuple) -> tuple:
    """Copy a block giving every symbol it binds a fresh ``Sym``.

    Needed whenever a block is duplicated (unroll, inline, guard tails) so
    that symbols stay unique within a procedure.
    """
    env: Dict[Sym, Sym] = {b: b.copy() for b in bound_syms(stmts)}
    return tuple(subst(s, env) for s in stmts)


def used_syms(node) -> set:
    """All symbols mentioned anywhere (reads, writes, windows, strides)."""
    out = set()
    nodes = node if isinstance(node, tuple) else (node, )
    for root in nodes:
        for n in walk(root):
            for field in ("name", "iter"):
                if field in n._fields:
                    v = getattr(n, field)
                    if isinstance(v, Sym):
                        out.add(v)
            t = getattr(n, "type", None) if "type" in (n._fields + n._attributes) else None
            if isinstance(t, IR.Tensor):
                for h in t.hi:
                    out |= used_syms(h)
    return out
