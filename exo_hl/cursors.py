"""Cursors (docs/api.md §4): immutable pointers into one ``Procedure``.

A cursor is a procedure plus a *path*; it never holds IR nodes, so it stays
meaningful however many procedures share the same subtrees.

Path conventions (shared with rewrites and effects):

* a **statement path** is a tuple of steps ``(field, index)``; the first step
  is always ``('body', i)`` (the procedure body), further steps go through a
  statement's ``'body'`` or ``'orelse'`` list. ``(('body', 0), ('body', 2))``
  is the third statement inside the first top-level loop.
* a **block** is ``(parent_path, field, lo, hi)``: the statements
  ``lo <= i < hi`` of the list ``field`` of the statement at ``parent_path``
  (``parent_path == ()`` means the procedure itself).
* a **gap** (an insertion point) is ``(parent_path, field, index)``.
* an **expression path** is a tuple of ``(field, index or None)`` steps from
  a statement into its expressions, e.g. ``(('rhs', None), ('lhs', None))``
  or ``(('idx', 1), )``; window accesses are steps too (``('idx', 0),
  ('lo', None)``).
* an **argument** is denoted by its index (``path()`` gives
  ``(('args', i), )``); it forwards by its symbol, not by that path.

Forwarding: each ``Procedure`` made by a rewrite carries ``_forward``, a
function from a parent's statement path to the path of that statement's
image, raising ``InvalidCursorError`` when it has none (None means the
statement structure is unchanged). ``forward(p, c)`` applies them along the
derivation chain from ``c.proc()`` down to ``p``. Forwarding is exact or
fails (docs/api.md §4): the other cursor kinds are derived from statement
images here, structurally, so no rewrite can make a block, gap, expression
or argument cursor denote a neighbour: a block needs an image for each of
its statements forming one run of siblings, a gap the images of its two
neighbours on either side of it, an expression an unchanged statement head
or an image the rewrite states (``fwd.expr``, ``rewrites._forward.
forward_exprs``), an argument its symbol.

Why one module of this size: the five cursor kinds and their navigation
form one user-facing API whose methods refer to one another; path
handling itself lives in ``core_ir/paths.py``.
"""
from __future__ import annotations

import operator
from typing import Optional

from .core_ir.nodes import IR
from .core_ir.paths import InvalidCursorError, get_expr, get_list, get_stmt
from .errors import SchedulingError, located


def _ir(p):
    return p.ir() if hasattr(p, "ir") else p


def _stmt_text(s) -> str:
    try:
        from .core_ir.printer import stmt_to_str
        text = stmt_to_str(s)
    except Exception:  # the printer must never hide the real error
        text = repr(s)
    lines = text.splitlines()
    return lines[0] + (" ..." if len(lines) > 1 else "") if lines else ""


def _expr_text(e) -> str:
    from .core_ir.printer import expr_to_str
    return expr_to_str(e)


def _node_name(n) -> Optional[str]:
    for f in ("iter", "name"):
        if f in getattr(n, "_fields", ()):
            return getattr(n, f).name
    if isinstance(n, IR.Call):
        return n.f.name
    if isinstance(n, IR.WriteConfig):
        return f"{n.config.name()}.{n.field}"
    if isinstance(n, IR.ReadConfig):
        return f"{n.config.name()}.{n.field}"
    return None


def _fmt_path(path) -> str:
    return "".join(f".{f}[{i}]" if i is not None else f".{f}"
                   for f, i in path)[1:] or "<proc>"


# ----------------------------------------------------------------------
# cursors
class Cursor:
    """Base class: a procedure and a location in it. Immutable, hashable.

    Cursors come from ``p.find(...)``, ``p.find_loop(...)``, ``p.body()`` and
    ``p.args()``; every scheduling method accepts one where it accepts a
    pattern, and ``new_p.forward(c)`` follows one through a rewrite.

    >>> c = p.find_loop('j')          # a StmtCursor
    >>> c.proc() is p
    True
    """

    __slots__ = ("_proc", )

    def __init__(self, proc):
        object.__setattr__(self, "_proc", proc)

    def __setattr__(self, name, value):
        raise AttributeError("cursors are immutable")

    def proc(self):
        """The ``Procedure`` this cursor points into.

        >>> p.find_loop('k').proc() is p
        True
        """
        return self._proc

    def _key(self):
        raise NotImplementedError

    def __eq__(self, other):
        return (type(self) is type(other) and self._proc is other._proc
                and self._key() == other._key())

    def __hash__(self):
        return hash((type(self).__name__, id(self._proc), self._key()))

    def _forward_one(self, q, fwd):  # pragma: no cover - abstract
        raise NotImplementedError


class StmtCursor(Cursor):
    """A statement, by path.

    >>> s = p.find('C[_] += _')
    >>> s.name(), s.is_loop()
    ('C', False)
    """

    __slots__ = ("_path", )

    def __init__(self, proc, path):
        super().__init__(proc)
        object.__setattr__(self, "_path", tuple(path))
        get_stmt(_ir(proc), self._path)  # validate eagerly

    def _key(self):
        return self._path

    def path(self) -> tuple:
        """The statement's path from the procedure body: ``(field, index)``
        steps (``'body'`` or ``'orelse'``).

        >>> p.find_loop('j').path()           # body[0].body[0] of gemm
        (('body', 0), ('body', 0))
        """
        return self._path

    def node(self):
        """The IR statement.

        >>> type(p.find_loop('j').node()).__name__
        'For'
        """
        return get_stmt(_ir(self._proc), self._path)

    def name(self) -> Optional[str]:
        """Loop iterator, allocated/written buffer, or callee name.

        >>> p.find_loop('j').name(), p.find('C[_] += _').name()
        ('j', 'C')
        """
        return _node_name(self.node())

    def text(self) -> str:
        """The statement's source text as the printer prints it (a loop or
        ``if`` with its whole body, one line per statement, the body
        indented by 4): what to build a pattern or an expression from.

        >>> p.find('C[_] += _').text()
        'C[i, j] += A[i, k] * B[k, j]'
        >>> print(p.find_loop('k').text())
        for k in seq(0, K):
            C[i, j] += A[i, k] * B[k, j]
        """
        from .core_ir.printer import stmt_to_str
        return stmt_to_str(self.node())

    def is_loop(self) -> bool:
        """True for a ``for`` loop.

        >>> p.find_loop('j').is_loop()
        True
        """
        return isinstance(self.node(), IR.For)

    def is_if(self) -> bool:
        """True for an ``if`` statement.

        >>> p.find_loop('j').is_if()
        False
        """
        return isinstance(self.node(), IR.If)

    def is_alloc(self) -> bool:
        """True for an allocation ``t: f32[...]``.

        >>> p.find('acc : _').is_alloc()      # after stage_mem(..., 'acc')
        True
        """
        return isinstance(self.node(), IR.Alloc)

    def is_call(self) -> bool:
        """True for a call of a procedure or instruction.

        >>> p.find('mm256_loadu_ps(_)').is_call()
        True
        """
        return isinstance(self.node(), IR.Call)

    def is_write(self) -> bool:
        """True for an assignment ``x[...] = e`` or a reduction
        ``x[...] += e`` (statements with ``idx()`` and ``rhs()``).

        >>> p.find('C[_] += _').is_write()
        True
        """
        return isinstance(self.node(), (IR.Assign, IR.Reduce))

    # -- navigation ----------------------------------------------------
    def _loc(self):
        *parent, (field, i) = self._path
        return tuple(parent), field, i

    def parent(self) -> "StmtCursor":
        """The enclosing loop or if (error at the top level).

        >>> p.find_loop('j').parent().name()
        'i'
        """
        if len(self._path) < 2:
            raise InvalidCursorError(located(
                "a top-level statement has no parent statement",
                self.node().srcinfo, self._proc.name(), _stmt_text(self.node())))
        return StmtCursor(self._proc, self._path[:-1])

    def _sibling(self, k, sign):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            # next(-1) was prev(), next(0) the statement itself
            raise SchedulingError(
                f"{'next' if sign > 0 else 'prev'}(k): k is the number of "
                f"statements to move, a positive int, got {k!r}")
        delta = sign * k
        parent, field, i = self._loc()
        lst = get_list(_ir(self._proc), parent, field)
        j = i + delta
        if not 0 <= j < len(lst):
            what = "next" if delta > 0 else "previous"
            raise InvalidCursorError(located(
                f"no {what} statement", self.node().srcinfo,
                self._proc.name(), _stmt_text(self.node())))
        return StmtCursor(self._proc, parent + ((field, j), ))

    def next(self, k: int = 1) -> "StmtCursor":
        """The statement ``k`` places after this one in the same block
        (``InvalidCursorError`` past the end).

        >>> s2 = p.find('t : _').next()       # the statement after an allocation
        """
        return self._sibling(k, 1)

    def prev(self, k: int = 1) -> "StmtCursor":
        """The statement ``k`` places before this one in the same block
        (``InvalidCursorError`` before the start).

        >>> s0 = p.find_loop('k #1').prev()   # the statement before a second k loop
        """
        return self._sibling(k, -1)

    def _sub_block(self, field):
        s = self.node()
        if field not in s._fields:
            raise InvalidCursorError(located(
                f"a {type(s).__name__} statement has no {field}",
                s.srcinfo, self._proc.name(), _stmt_text(s)))
        n = len(getattr(s, field))
        if n == 0:
            raise InvalidCursorError(located(
                f"the {field} of this statement is empty",
                s.srcinfo, self._proc.name(), _stmt_text(s)))
        return BlockCursor(self._proc, self._path, field, 0, n)

    def body(self) -> "BlockCursor":
        """A block cursor on the body of this loop or if.

        >>> p.find_loop('j').body()[0].name()
        'k'
        """
        return self._sub_block("body")

    def orelse(self) -> "BlockCursor":
        """A block cursor on the ``else`` branch of this if (error if none).

        >>> alt = p.find('if _: _').orelse()
        """
        return self._sub_block("orelse")

    def as_block(self) -> "BlockCursor":
        """This statement as a block of one.

        >>> len(p.find_loop('j').as_block())
        1
        """
        parent, field, i = self._loc()
        return BlockCursor(self._proc, parent, field, i, i + 1)

    def expand(self, lo: Optional[int] = 0, hi: Optional[int] = 0):
        """The block of this statement grown by ``lo`` statements before and
        ``hi`` after (None: as far as possible; clamped at the ends).

        >>> whole = p.find_loop('k').expand(None, None)   # all of k's siblings
        """
        return self.as_block().expand(lo, hi)

    def before(self) -> "GapCursor":
        """The gap just before this statement.

        >>> g = p.find_loop('j').before()
        >>> g.location()[2]
        0
        """
        parent, field, i = self._loc()
        return GapCursor(self._proc, parent, field, i)

    def after(self) -> "GapCursor":
        """The gap just after this statement.

        >>> p.find_loop('j').after().location()[2]
        1
        """
        parent, field, i = self._loc()
        return GapCursor(self._proc, parent, field, i + 1)

    # -- expressions of the statement ------------------------------------
    def _expr(self, field, i=None):
        return ExprCursor(self._proc, self._path, ((field, i), ))

    def lo(self) -> "ExprCursor":
        """An expression cursor on a loop's lower bound.

        >>> p.find_loop('j').lo().node().val
        0
        """
        return self._expr("lo")

    def hi(self) -> "ExprCursor":
        """An expression cursor on a loop's upper bound.

        >>> p.find_loop('j').hi().name()
        'N'
        """
        return self._expr("hi")

    def cond(self) -> "ExprCursor":
        """An expression cursor on an if's condition.

        >>> c = p.find('if _: _').cond()
        """
        return self._expr("cond")

    def rhs(self) -> "ExprCursor":
        """An expression cursor on an assignment's or reduction's right-hand side.

        >>> p.find('C[_] += _').rhs()
        <ExprCursor gemm:body[0].body[0].body[0].body[0]/rhs: A[i, k] * B[k, j]>
        """
        return self._expr("rhs")

    def idx(self) -> list:
        """Expression cursors on the indices of an assignment or reduction.

        >>> [c.name() for c in p.find('C[_] += _').idx()]
        ['i', 'j']
        """
        return [self._expr("idx", i) for i in range(len(self.node().idx))]

    def args(self) -> list:
        """Expression cursors on the arguments of a call.

        >>> first = p.find('mm256_loadu_ps(_)').args()[0]
        """
        return [self._expr("args", i) for i in range(len(self.node().args))]

    def find(self, pattern, many=False):
        """``find`` restricted to this statement and what it contains.

        >>> p.find_loop('j').find('A[_]').name()
        'A'
        """
        return _find(self._proc, pattern, many, None, within=self._path)

    # -- forwarding ------------------------------------------------------
    def _forward_one(self, q, fwd):
        return StmtCursor(q, _stmt_image(self._proc, q, fwd, self._path))

    def __repr__(self):
        return (f"<StmtCursor {self._proc.name()}:{_fmt_path(self._path)}: "
                f"{_stmt_text(self.node())}>")


class BlockCursor(Cursor):
    """A non-empty range of sibling statements.

    >>> b = p.find_loop('j').body()
    >>> len(b), b[0].name()
    (1, 'k')
    """

    __slots__ = ("_parent", "_field", "_lo", "_hi")

    def __init__(self, proc, parent_path, field, lo, hi):
        super().__init__(proc)
        object.__setattr__(self, "_parent", tuple(parent_path))
        object.__setattr__(self, "_field", field)
        object.__setattr__(self, "_lo", lo)
        object.__setattr__(self, "_hi", hi)
        lst = get_list(_ir(proc), self._parent, field)
        if not 0 <= lo < hi <= len(lst):
            raise InvalidCursorError(
                f"invalid block [{lo}:{hi}] of a list of {len(lst)} statements")

    def _key(self):
        return (self._parent, self._field, self._lo, self._hi)

    def parent_path(self) -> tuple:
        """The path of the statement owning the block (``()`` for the body).

        >>> p.find_loop('j').body().parent_path()
        (('body', 0), ('body', 0))
        """
        return self._parent

    def field(self) -> str:
        """Which list of the owner holds the block: ``'body'`` or ``'orelse'``.

        >>> p.find_loop('j').body().field()
        'body'
        """
        return self._field

    def range(self) -> tuple:
        """``(lo, hi)``: the block is ``lst[lo:hi]``.

        >>> p.find_loop('j').body().range()
        (0, 1)
        """
        return self._lo, self._hi

    def paths(self) -> list:
        """The paths of the block's statements, in order.

        >>> p.find_loop('j').body().paths()
        [(('body', 0), ('body', 0), ('body', 0))]
        """
        return [self._parent + ((self._field, i), )
                for i in range(self._lo, self._hi)]

    def nodes(self) -> tuple:
        """The IR statements of the block.

        >>> type(p.find_loop('j').body().nodes()[0]).__name__
        'For'
        """
        return get_list(_ir(self._proc), self._parent,
                        self._field)[self._lo:self._hi]

    def __len__(self):
        return self._hi - self._lo

    def __iter__(self):
        return (StmtCursor(self._proc, p) for p in self.paths())

    def __getitem__(self, k):
        n = self._hi - self._lo
        if isinstance(k, slice):
            return [StmtCursor(self._proc,
                               self._parent + ((self._field, self._lo + i), ))
                    for i in range(*k.indices(n))]
        k = operator.index(k)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("block cursor index out of range")
        return StmtCursor(self._proc, self._parent + ((self._field,
                                                       self._lo + k), ))

    def first(self) -> StmtCursor:
        """The block's first statement.

        >>> p.find_loop('j').body().first().name()
        'k'
        """
        return StmtCursor(self._proc, self.paths()[0])

    def last(self) -> StmtCursor:
        """The block's last statement.

        >>> p.find_loop('j').body().last().name()
        'k'
        """
        return StmtCursor(self._proc, self.paths()[-1])

    def parent(self) -> StmtCursor:
        """The statement owning this block (error for the procedure body).

        >>> p.find_loop('j').body().parent().name()
        'j'
        """
        if not self._parent:
            raise InvalidCursorError(
                f"in procedure '{self._proc.name()}': the procedure body "
                "has no parent statement")
        return StmtCursor(self._proc, self._parent)

    def expand(self, lo: Optional[int] = 0, hi: Optional[int] = 0):
        """The block grown by ``lo`` statements before and ``hi`` after (None:
        as far as possible; clamped at the ends).

        >>> b = p.find('t : _').as_block().expand(0, 2)   # t and the next two
        """
        for k in (lo, hi):
            # a negative count shrank the block and a float made a block
            # of fractional bounds: neither is a growth, both are refused
            if k is not None and (isinstance(k, bool) or not isinstance(
                    k, int) or k < 0):
                raise SchedulingError(
                    f"expand: the counts of statements to add are "
                    f"non-negative ints or None, got {lo!r}, {hi!r}")
        n = len(get_list(_ir(self._proc), self._parent, self._field))
        new_lo = 0 if lo is None else max(0, self._lo - lo)
        new_hi = n if hi is None else min(n, self._hi + hi)
        return BlockCursor(self._proc, self._parent, self._field, new_lo,
                           new_hi)

    def before(self) -> "GapCursor":
        """The gap before the block's first statement.

        >>> p.find_loop('j').body().before().location()[2]
        0
        """
        return GapCursor(self._proc, self._parent, self._field, self._lo)

    def after(self) -> "GapCursor":
        """The gap after the block's last statement.

        >>> p.find_loop('j').body().after().location()[2]
        1
        """
        return GapCursor(self._proc, self._parent, self._field, self._hi)

    def _forward_one(self, q, fwd):
        # every statement must have an image, and the images must be
        # exactly a run of siblings (in any order): never a block that
        # lost a statement or took in one that was not in it
        new = [_stmt_image(self._proc, q, fwd, p) for p in self.paths()]
        parents = {(p[:-1], p[-1][0]) for p in new}
        if len(parents) != 1:
            raise InvalidCursorError(
                "the block's statements no longer are siblings")
        (parent, field), = parents
        idx = sorted(p[-1][1] for p in new)
        if idx != list(range(idx[0], idx[0] + len(idx))):
            raise InvalidCursorError(
                "the images of the block's statements are not one run of "
                "siblings (other statements came between them, or two "
                "became one)")
        return BlockCursor(q, parent, field, idx[0], idx[-1] + 1)

    def text(self) -> str:
        """The block's statements as the printer prints them, one after
        the other (each line of a nested body indented by 4).

        >>> print(p.body()[0].body().text())    # the body of a loop
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]
        """
        from .core_ir.printer import stmt_to_str
        return stmt_to_str(tuple(self.nodes()))

    def __repr__(self):
        body = "; ".join(_stmt_text(s) for s in self.nodes())
        return (f"<BlockCursor {self._proc.name()}:"
                f"{_fmt_path(self._parent + ((self._field, None), ))}"
                f"[{self._lo}:{self._hi}]: {body}>")


class GapCursor(Cursor):
    """A position between statements: before ``lst[index]``.

    >>> g = p.find_loop('k').after()      # where a new statement would go
    """

    __slots__ = ("_parent", "_field", "_index")

    def __init__(self, proc, parent_path, field, index):
        super().__init__(proc)
        object.__setattr__(self, "_parent", tuple(parent_path))
        object.__setattr__(self, "_field", field)
        object.__setattr__(self, "_index", index)
        lst = get_list(_ir(proc), self._parent, field)
        if not 0 <= index <= len(lst):
            raise InvalidCursorError(f"invalid gap {index}")

    def _key(self):
        return (self._parent, self._field, self._index)

    def location(self) -> tuple:
        """``(parent_path, field, index)``.

        >>> p.find_loop('j').before().location()
        ((('body', 0),), 'body', 0)
        """
        return self._parent, self._field, self._index

    def _forward_one(self, q, fwd):
        # the image is the position between the images of the two
        # neighbours (a list end counts as a neighbour); a neighbour's image
        # may sit inside a statement adjacent to the gap (the `if` that
        # add_guard puts around it), never the other way round
        P, f, i = self._parent, self._field, self._index
        n = len(get_list(_ir(self._proc), P, f))
        prev = (_stmt_image(self._proc, q, fwd, P + ((f, i - 1), ))
                if i > 0 else None)
        nxt = (_stmt_image(self._proc, q, fwd, P + ((f, i), ))
               if i < n else None)
        if prev is not None and nxt is not None:
            lists = [(prev[:-1], prev[-1][0]), (nxt[:-1], nxt[-1][0])]
        else:
            # at an end of its list: the gap stays at that end of the
            # image of the list, which the rewrite may state (split: the
            # body of `i` is the body of `ii`), else is the list of the
            # owner's image
            stated = getattr(fwd, "list", None)
            stated = stated(P, f) if stated is not None else None
            lists = [stated or (
                _stmt_image(self._proc, q, fwd, P) if P else (), f)]
        for Q, g in lists:
            j_prev = 0 if prev is None else _pos_in(prev, Q, g)
            j_next = (len(get_list(_ir(q), Q, g)) if nxt is None
                      else _pos_in(nxt, Q, g))
            if j_prev is None or j_next is None:
                continue
            if prev is not None:
                j_prev += 1
            if j_prev == j_next:
                if prev is None or nxt is None:
                    _refuse_new_loop_at_end(q, Q, g, prev, nxt)
                return GapCursor(q, Q, g, j_next)
        raise InvalidCursorError(
            "the statements around the gap are no longer next to each "
            "other (or were removed)")

    def __repr__(self):
        return (f"<GapCursor {self._proc.name()}:"
                f"{_fmt_path(self._parent + ((self._field, self._index), ))}>")


class ExprCursor(Cursor):
    """An expression inside a statement.

    >>> e = p.find('A[_]')
    >>> e.name(), e.stmt().name()
    ('A', 'C')
    """

    __slots__ = ("_stmt", "_epath")

    def __init__(self, proc, stmt_path, expr_path):
        super().__init__(proc)
        object.__setattr__(self, "_stmt", tuple(stmt_path))
        object.__setattr__(self, "_epath", tuple(expr_path))
        get_expr(get_stmt(_ir(proc), self._stmt), self._epath)

    def _key(self):
        return (self._stmt, self._epath)

    def stmt(self) -> StmtCursor:
        """The statement containing this expression.

        >>> p.find('A[_]').stmt().name()
        'C'
        """
        return StmtCursor(self._proc, self._stmt)

    def stmt_path(self) -> tuple:
        """The path of the statement containing this expression.

        >>> p.find('A[_]').stmt_path() == p.find('C[_] += _').path()
        True
        """
        return self._stmt

    def expr_path(self) -> tuple:
        """The path of the expression inside its statement.

        >>> p.find('C[_] += _').rhs().expr_path()
        (('rhs', None),)
        """
        return self._epath

    def path(self) -> tuple:
        """``(statement path, expression path)``.

        >>> stmt_path, expr_path = p.find('A[_]').path()
        """
        return (self._stmt, self._epath)

    def node(self):
        """The IR expression.

        >>> type(p.find('A[_]').node()).__name__
        'Read'
        """
        return get_expr(get_stmt(_ir(self._proc), self._stmt), self._epath)

    def name(self) -> Optional[str]:
        """The buffer or variable read, or None for other expressions.

        >>> p.find('A[_]').name()
        'A'
        """
        return _node_name(self.node())

    def parent(self):
        """The enclosing expression, or the statement for a top expression.

        >>> p.find('A[_]').parent().node().op
        '*'
        """
        ep = self._epath[:-1]
        while ep:
            try:
                return ExprCursor(self._proc, self._stmt, ep)
            except InvalidCursorError:  # a window access, not an expression
                ep = ep[:-1]
        return self.stmt()

    # -- sub-expressions ----------------------------------------------------
    def _child(self, field, i=None, what=""):
        n = self.node()
        if field not in n._fields:
            raise InvalidCursorError(
                f"'{_expr_text(n)}' ({type(n).__name__}) has no {what or field}")
        return ExprCursor(self._proc, self._stmt,
                          self._epath + ((field, i), ))

    def lhs(self) -> "ExprCursor":
        """The left operand of a binary operation.

        >>> p.find('x[_] + y[_]').lhs().name()
        'x'
        """
        return self._child("lhs", what="left operand")

    def rhs(self) -> "ExprCursor":
        """The right operand of a binary operation.

        >>> p.find('x[_] + y[_]').rhs().name()
        'y'
        """
        return self._child("rhs", what="right operand")

    def args(self) -> list:
        """The operands, in order: both sides of a binary operation, the
        operand of ``-e``/``not e``, an extern call's arguments, a buffer
        read's indices.

        >>> a, b = p.find('x[_] * 2.0').args()
        """
        n = self.node()
        if isinstance(n, IR.BinOp):
            return [self.lhs(), self.rhs()]
        if isinstance(n, (IR.USub, IR.Not)):
            return [self._child("arg")]
        if isinstance(n, IR.Extern):
            return [self._child("args", i) for i in range(len(n.args))]
        if isinstance(n, IR.Read):
            return [self._child("idx", i) for i in range(len(n.idx))]
        return []

    def _forward_one(self, q, fwd):
        # the statement moves with ``fwd``; inside it, the expression keeps
        # its path only where the rewrite says where it went
        # (``rewrites._forward.forward_exprs``) or when the statement's own
        # expressions are unchanged; else no image is known
        sp = _stmt_image(self._proc, q, fwd, self._stmt)
        stated = getattr(fwd, "expr", None)
        ep = stated(self._stmt, self._epath) if stated is not None else None
        if ep is None:
            old = get_stmt(_ir(self._proc), self._stmt)
            if _head(old) != _head(get_stmt(_ir(q), sp)):
                raise InvalidCursorError(
                    "the statement's expressions were rewritten")
            ep = self._epath
        return ExprCursor(q, sp, ep)

    def text(self) -> str:
        """The expression's source text as the printer prints it.

        >>> p.find('A[_] * B[_]').text()
        'A[i, k] * B[k, j]'
        >>> p.find_loop('k').hi().text()
        'K'
        """
        return _expr_text(self.node())

    def __repr__(self):
        return (f"<ExprCursor {self._proc.name()}:{_fmt_path(self._stmt)}"
                f"/{_fmt_path(self._epath)}: {_expr_text(self.node())}>")


class ArgCursor(Cursor):
    """A procedure argument.

    >>> a = p.args()[3]
    >>> a.name(), a.is_tensor()
    ('A', True)
    """

    __slots__ = ("_index", )

    def __init__(self, proc, index):
        super().__init__(proc)
        object.__setattr__(self, "_index", index)
        if not 0 <= index < len(_ir(proc).args):
            raise InvalidCursorError(f"no argument {index}")

    def _key(self):
        return self._index

    def index(self) -> int:
        """The argument's position.

        >>> p.args()[3].index()
        3
        """
        return self._index

    def path(self) -> tuple:
        """``(('args', index),)``.

        >>> p.args()[3].path()
        (('args', 3),)
        """
        return (("args", self._index), )

    def node(self):
        """The IR argument (``IR.FnArg``: name, type, memory).

        >>> p.args()[3].node().mem.name()
        'DRAM'
        """
        return _ir(self._proc).args[self._index]

    def name(self) -> str:
        """The argument's name.

        >>> p.args()[0].name()
        'M'
        """
        return self.node().name.name

    def type(self):
        """The argument's IR type.

        >>> str(p.args()[0].type())
        'Size'
        """
        return self.node().type

    def text(self) -> str:
        """The argument as the signature prints it: name, type, memory.

        >>> p.args()[3].text()
        'A: f32[M, K] @ DRAM'
        """
        from .core_ir.printer import arg_to_str
        return arg_to_str(self.node())

    def is_tensor(self) -> bool:
        """True for a tensor or window argument.

        >>> p.args()[0].is_tensor(), p.args()[3].is_tensor()
        (False, True)
        """
        return isinstance(self.node().type, IR.Tensor)

    def _forward_one(self, q, fwd):
        # an argument is its symbol: rewrites that change its type or
        # memory keep it, ones that remove it (partial_eval) drop it
        sym = self.node().name
        for i, a in enumerate(_ir(q).args):
            if a.name is sym:
                return ArgCursor(q, i)
        raise InvalidCursorError("the argument was removed")

    def __repr__(self):
        return f"<ArgCursor {self._proc.name()}:{self.name()}>"


# ----------------------------------------------------------------------
# the Procedure entry points (api.py forwards here)
def _identity(path):
    return path


def _stmt_image(proc, q, fwd, path):
    """The path in ``q`` of the image of ``proc``'s statement at ``path``:
    what the rewrite's forward function says, provided it is the same kind
    of statement. A statement whose place a ``pass`` now holds was deleted
    (rewrites leave a ``pass`` where a body would otherwise be empty); a
    call replaced by the inlined loop is not that loop."""
    new = fwd(path)
    s, old = get_stmt(_ir(q), new), get_stmt(_ir(proc), path)
    if type(s) is not type(old):
        if isinstance(s, IR.Pass):
            raise InvalidCursorError(
                f"the statement at {path!r} was deleted (a `pass` holds "
                f"its place)")
        raise InvalidCursorError(
            f"the statement at {path!r} was replaced by a different kind "
            f"of statement")
    return new


def _refuse_new_loop_at_end(q, Q, g, prev, nxt):
    """A gap at an end of its list whose neighbour's image now sits inside
    a loop of the list's image has no image: that loop is new (the list's
    own statements are its neighbours' images), and its iterations are not
    the old list's. ``split`` makes ``for i: s`` ``for io: for ii: s``;
    the gap at the start of ``i``'s body (once per ``i``) would become the
    start of ``io``'s body (once per block of ``ii``). An ``if`` around the
    neighbour (``add_guard``) keeps the gap outside it (docs/api.md §4)."""
    n = len(Q) + 1
    for img in (prev, nxt):
        if img is not None and len(img) > n and \
                isinstance(get_stmt(_ir(q), img[:n]), IR.For):
            raise InvalidCursorError(
                "the statement next to the gap, at an end of its block, is "
                "now inside a new loop: the gap's iterations changed; find "
                "the place again in the new procedure (e.g. "
                "`p.find_loop(name).body()[0].before()` for the start of "
                "a loop's body, `.body()[-1].after()` for its end)")


def _head(s):
    """A statement without its bodies: what its expressions belong to."""
    if isinstance(s, IR.For):
        return (IR.For, s.iter, s.lo, s.hi, s.mode)
    if isinstance(s, IR.If):
        return (IR.If, s.cond)
    return s


def _pos_in(path, parent, field):
    """The index in the list ``field`` of the statement at ``parent`` of the
    statement at ``path`` or of the one enclosing it; None if neither."""
    n = len(parent)
    if len(path) > n and path[:n] == parent and path[n][0] == field:
        return path[n][1]
    return None


def forward(proc, cursor):
    """Map a cursor of ``proc`` or of one of its ancestors onto ``proc``."""
    if not isinstance(cursor, Cursor):
        raise TypeError(f"forward expects a cursor, got {cursor!r}")
    chain = []
    p = proc
    while p is not None and p is not cursor.proc():
        chain.append(p)
        p = p.parent()
    if p is None:
        src = cursor.proc()
        same = (" (a different procedure with the same name)"
                if src.name() == proc.name() else "")
        raise SchedulingError(
            f"forward(): the cursor belongs to procedure "
            f"{_provenance(src)}{same}, which is neither the receiver "
            f"{_provenance(proc)} nor one of its ancestors; a cursor can "
            f"only be forwarded from the receiver or a procedure it was "
            f"derived from by scheduling")
    for q in reversed(chain):
        fwd = q._forward or _identity
        try:
            cursor = cursor._forward_one(q, fwd)
        except InvalidCursorError as e:
            raise InvalidCursorError(
                f"in procedure '{q.name()}': the cursor {cursor!r} no longer "
                f"denotes anything after '{q._op}' ({e})") from None
    return cursor


def _provenance(proc) -> str:
    """``'name'`` with where it was written and the rewrites since, e.g.
    ``'fir' (written at f.py:3, then split, reorder)``."""
    chain = proc.derivation()
    si = chain[0][1].ir().srcinfo
    where = (f"written at {si}"
             if si is not None and si.lineno else "written in Python")
    ops = [op for op, _ in chain[1:]]
    if len(ops) > 4:
        ops = ops[:2] + [f"... ({len(ops) - 4} more)"] + ops[-2:]
    then = f", then {', '.join(ops)}" if ops else ""
    return f"'{proc.name()}' ({where}{then})"


def _to_cursor(proc, loc):
    if loc[0] == "stmt":
        return StmtCursor(proc, loc[1])
    if loc[0] == "expr":
        return ExprCursor(proc, loc[1], loc[2])
    return ArgCursor(proc, loc[1])


_WHAT = {None: "code", "loop": "loop", "stmt": "statement",
         "expr": "expression", "buffer": "buffer"}


def _what_there_is(ir, want):
    """For a failed loop search, the loops the procedure has (as patterns
    that find them), so the user can pick one."""
    if want != "loop":
        return ""
    from .core_ir.traversal import walk_stmts
    pats, seen = [], {}
    for s in walk_stmts(ir.body):
        if isinstance(s, IR.For):
            name = s.iter.name
            k = seen.get(name, 0)
            seen[name] = k + 1
            pats.append(repr(name if k == 0 else f"{name} #{k}"))
    if not pats:
        return " (it has no loops)"
    more = f", ... ({len(pats)} in all)" if len(pats) > 12 else ""
    return f" (its loops: {', '.join(pats[:12])}{more})"


def _find(proc, pattern, many, want, within=None):
    from . import patterns as P
    if not isinstance(pattern, str):
        raise TypeError(f"expected a pattern string, got {pattern!r}")
    pat = P.parse(pattern)
    locs = P.match(pat, proc.ir(), want, within)
    if within is not None:
        n = len(within)
        locs = [l for l in locs if l[0] != "arg" and l[1][:n] == within]
    _refuse_mixed_count(proc, pattern, pat, locs)
    locs = P.select(pat, locs)
    if not locs:
        ir = proc.ir()
        raise SchedulingError(located(
            f"no {_WHAT[want]} matches the pattern {pattern!r} in procedure "
            f"'{proc.name()}'{_what_there_is(ir, want)}", ir.srcinfo, None))
    cursors = [_to_cursor(proc, l) for l in locs]
    return cursors if many else cursors[0]


def _refuse_mixed_count(proc, pattern, pat, locs):
    """``'i #k'`` among loops *and* buffers named ``i`` is refused: the
    loop-taking methods count loops only (``find_loop``, ``unroll``), the
    statement-taking ones counted both, so ``'i #1'`` was the second ``i``
    loop to ``unroll`` and the first to ``stage_mem`` when an allocation
    ``i`` of another nest came first."""
    if pat.kind != "name" or pat.k is None:
        return
    ir = proc.ir()
    loops = {isinstance(get_stmt(ir, l[1]), IR.For)
             for l in locs if l[0] == "stmt"}
    if len(loops) > 1:
        name = pat.name
        raise SchedulingError(located(
            f"the pattern {pattern!r} is ambiguous in procedure "
            f"'{proc.name()}': both loops and buffers are named {name!r}, "
            f"and '#{pat.k}' would count them together; write "
            f"'for {name} in _: _ #{pat.k}' (or find_loop({pattern!r})) "
            f"for a loop, '{name} : _ #{pat.k}' for an allocation",
            ir.srcinfo, None))


def find(proc, pattern, many=False):
    """The first (or, ``many=True``, every) match of a pattern."""
    return _find(proc, pattern, many, None)


def find_loop(proc, name, many=False):
    """A loop by iterator name (``'i'``, ``'i #1'``) or loop pattern."""
    return _find(proc, name, many, "loop")


def find_want(proc, pattern, want, many=False):
    """``find`` restricted to ``'loop' | 'stmt' | 'expr' | 'buffer'``."""
    return _find(proc, pattern, many, want)


def proc_body(proc) -> BlockCursor:
    return BlockCursor(proc, (), "body", 0, len(proc.ir().body))


def proc_args(proc) -> list:
    return [ArgCursor(proc, i) for i in range(len(proc.ir().args))]


__all__ = ["Cursor", "StmtCursor", "BlockCursor", "GapCursor", "ExprCursor",
           "ArgCursor", "InvalidCursorError", "forward", "find", "find_loop",
           "find_want", "proc_body", "proc_args", "get_stmt", "get_list",
           "get_expr"]
