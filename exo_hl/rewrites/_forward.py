"""Recording how statement paths move: forward functions.

A forward function maps a statement path of the old procedure to the new
one, and raises ``InvalidCursorError`` for statements that no longer exist.
The helpers cover the usual shapes (insert, delete, replace, wrap, unwrap,
move, fission, hoist) and compose with ``forward_compose``.

Forwarding is exact or refused (docs/api.md §4): a forward function names
the *image* of a statement, never a neighbour that happens to sit at the
old place. ``cursors.py`` derives blocks, gaps and arguments from it, and
keeps an expression's path only when its statement's own expressions are
unchanged or when the rewrite states where it went (``forward_exprs``).
"""
from __future__ import annotations

from typing import Callable, Optional

from ..core_ir.paths import InvalidCursorError, Path


Forward = Callable[[Path], Path]


def _split(p, parent, field):
    """``(index, rest)`` when ``p`` lies in ``parent.field``, else None."""
    n = len(parent)
    if len(p) > n and p[:n] == tuple(parent) and p[n][0] == field:
        return p[n][1], p[n + 1:]
    return None


def _gone(p, why):
    raise InvalidCursorError(f"the statement at {p!r} was {why}")


def forward_replace_block(parent: Path, field: str, lo: int, hi: int,
                          n_new: int) -> Forward:
    """``list[lo:hi]`` replaced by ``n_new`` new statements; cursors into
    the old statements become invalid, later siblings shift."""
    parent = tuple(parent)

    def fwd(p):
        s = _split(p, parent, field)
        if s is None or s[0] < lo:
            return p
        i, rest = s
        if i < hi:
            _gone(p, "replaced")
        return parent + ((field, i + n_new - (hi - lo)), ) + rest
    return fwd


def forward_replace(path: Path, n_new: int, keep_inside: bool = False
                    ) -> Forward:
    """The statement at ``path`` replaced by ``n_new`` statements.

    With ``n_new == 1`` a cursor to the statement itself follows it to its
    replacement, which must be its image (the statement rebuilt); when it
    is not, use ``forward_replace_by_new``. ``keep_inside=True`` also keeps
    cursors into its body (for rewrites that only change the statement's
    own fields)."""
    *parent, (field, j) = path
    parent = tuple(parent)

    def fwd(p):
        s = _split(p, parent, field)
        if s is None or s[0] < j:
            return p
        i, rest = s
        if i == j:
            if n_new == 1 and (not rest or keep_inside):
                return p
            _gone(p, "replaced")
        return parent + ((field, i + n_new - 1), ) + rest
    return fwd


def forward_replace_by_new(path: Path, n_new: int) -> Forward:
    """The statement at ``path`` replaced by ``n_new`` statements none of
    which is its image (an inlined call's body, a loop's unrolled copies,
    even when there is only one): cursors to it and into it become
    invalid, later siblings shift."""
    *parent, (field, j) = path
    return forward_replace_block(tuple(parent), field, j, j + 1, n_new)


def forward_fission(stmt_path: Path, field: str, k: int,
                    second_field: str = "body",
                    other_field_to_second: bool = True) -> Forward:
    """The statement at ``stmt_path`` split into two copies placed where it
    was: the first keeps ``field[:k]``, the second holds ``field[k:]`` as its
    ``second_field``. Cursors follow the statements they pointed to; a
    cursor to the split statement itself follows the first copy, and ones
    into its other field (an if's other branch) follow the copy that kept
    it (the second when ``other_field_to_second``)."""
    stmt_path = tuple(stmt_path)
    *parent, (pfield, j) = stmt_path
    parent = tuple(parent)
    second = parent + ((pfield, j + 1), )
    shift_siblings = forward_replace(stmt_path, 2, keep_inside=True)

    def fwd(p):
        n = len(stmt_path)
        if p == stmt_path:
            return p
        if len(p) > n and p[:n] == stmt_path:
            f, i = p[n]
            rest = p[n + 1:]
            if f == field:
                if i < k:
                    return p
                return second + ((second_field, i - k), ) + rest
            return (second if other_field_to_second else stmt_path) + p[n:]
        return shift_siblings(p)
    return fwd


def forward_hoist(stmt_path: Path) -> Forward:
    """The statement at ``stmt_path`` moved out of its parent statement, to
    just before it (e.g. an allocation lifted out of a loop). Cursors follow
    the moved statement, the parent and everything inside it."""
    stmt_path = tuple(stmt_path)
    *ppath, (field, k) = stmt_path
    ppath = tuple(ppath)
    *gparent, (gfield, j) = ppath
    moved_parent = tuple(gparent) + ((gfield, j + 1), )
    shift_siblings = forward_replace(ppath, 2, keep_inside=True)

    def fwd(p):
        n = len(ppath)
        if p[:len(stmt_path)] == stmt_path:
            return ppath + p[len(stmt_path):]
        if p == ppath:
            return moved_parent
        if len(p) > n and p[:n] == ppath:
            f, i = p[n]
            if f == field and i > k:
                i -= 1
            return moved_parent + ((f, i), ) + p[n + 1:]
        return shift_siblings(p)
    return fwd


def forward_insert(parent: Path, field: str, index: int, k: int) -> Forward:
    """``k`` statements inserted before ``list[index]``."""
    parent = tuple(parent)

    def fwd(p):
        s = _split(p, parent, field)
        if s is None or s[0] < index:
            return p
        return parent + ((field, s[0] + k), ) + s[1]
    return fwd


def forward_delete(parent: Path, field: str, lo: int, hi: int) -> Forward:
    """``list[lo:hi]`` deleted."""
    return forward_replace_block(parent, field, lo, hi, 0)


def forward_wrap(parent: Path, field: str, lo: int, hi: int,
                 into: str = "body") -> Forward:
    """``list[lo:hi]`` moved into the ``into`` list of one new statement
    placed at ``lo`` (a new loop or if around a block)."""
    parent = tuple(parent)

    def fwd(p):
        s = _split(p, parent, field)
        if s is None or s[0] < lo:
            return p
        i, rest = s
        if i < hi:
            return parent + ((field, lo), (into, i - lo)) + rest
        return parent + ((field, i - (hi - lo) + 1), ) + rest
    return fwd


def forward_unwrap(path: Path, n_inner: int, field: str = "body") -> Forward:
    """The statement at ``path`` replaced by the ``n_inner`` statements of
    its ``field`` list (removing a loop or an if)."""
    *parent, (pfield, j) = path
    parent = tuple(parent)
    path = tuple(path)

    def fwd(p):
        s = _split(p, parent, pfield)
        if s is None or s[0] < j:
            return p
        i, rest = s
        if i > j:
            return parent + ((pfield, i + n_inner - 1), ) + rest
        if rest and rest[0][0] == field:
            return parent + ((pfield, j + rest[0][1]), ) + rest[1:]
        _gone(p, "removed")
    return fwd


def forward_move(src: Path, dst: Path) -> Forward:
    """The subtree at ``src`` now lives at ``dst`` (cursors inside follow);
    nothing else moves. Compose with insert/delete for sibling shifts."""
    src, dst = tuple(src), tuple(dst)

    def fwd(p):
        if p[:len(src)] == src:
            return dst + p[len(src):]
        return p
    return fwd


def forward_table(table: dict, default: Optional[Forward] = None) -> Forward:
    """Explicit mapping for rewrites that rebuild a region wholesale.

    The longest prefix of a path found in ``table`` is replaced by its
    image (None: deleted); paths with no entry go through ``default``
    (identity when None)."""
    def fwd(p):
        for n in range(len(p), 0, -1):
            if p[:n] in table:
                img = table[p[:n]]
                if img is None:
                    _gone(p, "removed")
                return tuple(img) + p[n:]
        return default(p) if default else p
    return fwd


def forward_exprs(fwd: Forward, stmt_path: Path, moves=None,
                  replaced=()) -> Forward:
    """``fwd``, plus where the expressions of the one statement the rewrite
    changed (at ``stmt_path`` before it) went: the subtree at an old
    expression path ``a`` is now at ``moves[a]``; an expression path in
    ``replaced`` holds the expression that replaced the old one there (its
    image), and what was below the old one is gone; every other expression
    of that statement keeps its path."""
    stmt_path = tuple(stmt_path)
    moves = {tuple(a): tuple(b) for a, b in (moves or {}).items()}
    replaced = [tuple(a) for a in replaced]

    def expr(sp, ep):
        if tuple(sp) != stmt_path:
            return None
        for a in replaced:
            if len(ep) > len(a) and ep[:len(a)] == a:
                raise InvalidCursorError(
                    f"the expression at {ep!r} was part of one replaced")
        for a, b in moves.items():
            if ep[:len(a)] == a:
                return b + ep[len(a):]
        return ep

    def out(p):
        return fwd(p)
    out.expr = expr
    return out


def forward_lists(fwd: Forward, lists: dict) -> Forward:
    """``fwd``, plus the statement lists the rewrite moved whole into a new
    statement: ``lists[(parent, field)] = (parent2, field2)`` states that
    the list ``parent2.field2`` of the new procedure holds exactly the
    images of the old list's statements and runs once each time the old
    list ran (``split``: ``i``'s body is ``ii``'s, or its guard's, one
    ``(io, ii)`` per ``i``). A gap at an end of such a list stays at that
    end of the stated list; without a statement it would be refused, since
    the list of the owner's image (``io``'s body) runs once per block."""
    table = {(tuple(p), f): (tuple(q), g) for (p, f), (q, g) in
             lists.items()}

    def out(p):
        return fwd(p)
    out.list = lambda parent, field: table.get((tuple(parent), field))
    for attr in ("expr", ):
        if hasattr(fwd, attr):
            setattr(out, attr, getattr(fwd, attr))
    return out


def forward_compose(*fns) -> Forward:
    """Apply forward functions in order (None entries are skipped)."""
    fns = [f for f in fns if f is not None]

    def fwd(p):
        for f in fns:
            p = f(p)
        return p
    return fwd
