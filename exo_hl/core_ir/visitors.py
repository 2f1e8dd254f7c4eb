"""Visitor and mutator bases, and rewriting every access to a buffer.

``walk``/``map_node`` (``traversal.py``) visit every node; the classes here
add dispatch by node kind, so a pass says what it does per kind
(``visit_For``, ``mutate_Read``) instead of writing an ``isinstance``
chain. ``map_accesses`` is the one shape half the rewrites need: change
every access to one buffer (writes, reads, windows, strides) and leave
everything else alone. Statement paths are in ``paths.py``
(``walk_with_paths``).
"""
from __future__ import annotations

from typing import Callable, Optional

from .nodes import IR, Node
from .traversal import children, map_node

__all__ = ["Visitor", "Mutator", "map_accesses"]


class Visitor:
    """Pre-order walk with dispatch by node kind: ``visit_<Kind>(node)``
    (``visit_For``, ``visit_Read``, ...) when defined, else
    ``generic_visit``. A method returning ``False`` skips the node's
    children. A ``Call``'s callee is not entered (``traversal.children``).
    """

    def visit(self, node: Node) -> None:
        """Visit ``node`` and, unless told not to, its children."""
        method = getattr(self, "visit_" + type(node).__name__,
                         self.generic_visit)
        if method(node) is not False:
            for c in children(node):
                self.visit(c)

    def generic_visit(self, node: Node) -> Optional[bool]:
        """Called for node kinds without their own method (does nothing)."""
        return None


class Mutator:
    """Bottom-up rewrite with dispatch by node kind: ``mutate_<Kind>(node)``
    returns a replacement or None to keep the node; its children are
    already rewritten. Unchanged subtrees are shared (``map_node``)."""

    def mutate(self, node: Node) -> Node:
        """``node`` with every node rewritten by the ``mutate_*`` methods."""
        return map_node(node, self._dispatch)

    def _dispatch(self, node):
        method = getattr(self, "mutate_" + type(node).__name__, None)
        return method(node) if method is not None else None


Rewrite = Optional[Callable[[Node], Optional[Node]]]


def map_accesses(node: Node, names, write: Rewrite = None,
                 read: Rewrite = None, window: Rewrite = None,
                 stride: Rewrite = None, other: Rewrite = None) -> Node:
    """``node`` with every access to the buffers ``names`` (a ``Sym`` or a
    set of them) rewritten, bottom-up:

    * ``write(s)``: an ``Assign`` or ``Reduce`` to the buffer;
    * ``read(e)``: a ``Read`` of it (indexed, or the whole buffer);
    * ``window(e)``: a ``WindowExpr`` of it;
    * ``stride(e)``: a ``StrideExpr`` naming it;
    * ``other(n)``: any node that is none of these.

    Each returns a replacement or None (keep); a missing one keeps its
    nodes.
    """
    is_named = ((lambda n: n in names) if isinstance(names, (set, frozenset))
                else (lambda n: n == names))

    def fn(n):
        if isinstance(n, (IR.Assign, IR.Reduce)) and is_named(n.name):
            f = write
        elif isinstance(n, IR.Read) and is_named(n.name):
            f = read
        elif isinstance(n, IR.WindowExpr) and is_named(n.name):
            f = window
        elif isinstance(n, IR.StrideExpr) and is_named(n.name):
            f = stride
        else:
            f = other
        return f(n) if f is not None else None
    return map_node(node, fn)
