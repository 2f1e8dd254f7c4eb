"""Shared helpers for rewrites: the common skeleton every primitive follows.

Every rewrite module reads the same way::

    def my_rewrite(proc, target, ...):
        # 1. locate: turn the user's target (cursor or pattern) into a path
        path, stmt = C.resolve_loop(proc, target, "my_rewrite")
        # 2. check: the safety condition (effects/), else
        #    raise C.scheduling_error(proc, stmt, "my_rewrite: why not")
        # 3. build: the new IR, sharing unchanged subtrees
        new_ir = C.replace_stmts_at(proc.ir(), path, new_stmts)
        # 4. record: provenance, and how old cursors map onto the result
        return proc._derive(new_ir, "my_rewrite",
                            forward=C.forward_replace(path, len(new_stmts)))

Paths follow ``exo_hl.cursors``: a statement path is a tuple of
``(field, index)`` steps starting with ``('body', i)``.

Forward functions map a statement path of the old procedure to the new
one, and raise ``InvalidCursorError`` for statements that no longer exist.
The ``forward_*`` helpers below cover the usual shapes (insert, delete,
replace, wrap, unwrap, move) and compose with ``forward_compose``. A
rewrite that keeps every statement where it was passes ``forward=None``.
"""
from __future__ import annotations

import keyword
from typing import Callable, NamedTuple, Optional, Tuple

from ..core_ir.blockinfo import note_splice, sc_prefix
from ..core_ir.nodes import IR
from ..core_ir.simplify import env_at, simplify_expr
from ..core_ir.state import config_writes, reads_written_state
from ..cursors import (ArgCursor, BlockCursor, Cursor, ExprCursor,
                       GapCursor, InvalidCursorError, StmtCursor, find_want,
                       forward, get_expr, get_list, get_stmt)
from ..errors import SchedulingError, located

Path = Tuple[Tuple[str, int], ...]


# ----------------------------------------------------------------------
# errors
def stmt_text(stmt) -> str:
    """A statement as it now reads (printer), falling back to repr."""
    try:
        from ..core_ir.printer import stmt_to_str
        return stmt_to_str(stmt)
    except Exception:  # never let the printer hide the real error
        return repr(stmt)


def _short(text: str, max_lines: int = 8) -> str:
    lines = text.rstrip().splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["..."]
    return "\n".join(lines)


def scheduling_error(proc, stmt, msg: str) -> SchedulingError:
    """A ``SchedulingError`` naming the procedure, the statement as it now
    reads and its original source line. Use as ``raise
    scheduling_error(...)``."""
    name = proc.name() if hasattr(proc, "name") and callable(proc.name) \
        else getattr(proc, "name", None)
    srcinfo = getattr(stmt, "srcinfo", None) if stmt is not None else None
    text = _short(stmt_text(stmt)) if stmt is not None else None
    return SchedulingError(located(msg, srcinfo, name, text))


def _proc_error(proc, msg: str) -> SchedulingError:
    return SchedulingError(located(msg, proc.ir().srcinfo, proc.name()))


def _prefix(op: str) -> str:
    return f"{op}: " if op else ""


# ----------------------------------------------------------------------
# locate
def to_cursor(proc, target, op: str = ""):
    """A cursor of ``proc``: cursors of ancestors are forwarded."""
    if not isinstance(target, Cursor):
        raise _proc_error(proc, f"{_prefix(op)}expected a cursor or a pattern "
                          f"string, got {target!r}")
    if target.proc() is proc:
        return target
    return forward(proc, target)


def resolve_stmt(proc, target, op: str = "") -> Tuple[Path, object]:
    """``(path, stmt)`` of a statement given as a cursor or pattern."""
    if isinstance(target, str):
        c = find_want(proc, target, "stmt")
    else:
        c = to_cursor(proc, target, op)
    if isinstance(c, BlockCursor) and len(c) == 1:
        c = c.first()
    if not isinstance(c, StmtCursor):
        raise _proc_error(proc, f"{_prefix(op)}expected a statement, got {c!r}")
    return c.path(), c.node()


def resolve_loop(proc, target, op: str = "") -> Tuple[Path, object]:
    """``(path, for_stmt)``: a loop by cursor, name (``'i'``, ``'i #1'``) or
    loop pattern."""
    if isinstance(target, str):
        c = find_want(proc, target, "loop")
        return c.path(), c.node()
    path, s = resolve_stmt(proc, target, op)
    if not isinstance(s, IR.For):
        raise scheduling_error(proc, s, f"{_prefix(op)}expected a loop")
    return path, s


def _candidates(proc, target, want: str, op: str):
    """Every ``(path, stmt)`` a target may denote: all matches of a pattern
    (one when it picks ``#k``), the one statement of a cursor."""
    if isinstance(target, str):
        return [(tuple(c.path()), c.node())
                for c in find_want(proc, target, want, many=True)]
    if want == "loop":
        path, s = resolve_loop(proc, target, op)
    else:
        path, s = resolve_stmt(proc, target, op)
    return [(tuple(path), s)]


def resolve_pair(proc, first, second, want: str, related, op: str = ""):
    """Two targets that must relate to each other (a loop and the loop
    directly inside it, two adjacent statements...): ``(path1, s1, path2,
    s2, ok)`` for the first pair, in program order of ``first`` then of
    ``second``, with ``related(path1, s1, path2, s2)``. A pattern stands for
    any of its matches, so ``('ni', 'ic')`` finds the ``ni`` loop that holds
    an ``ic`` loop wherever the first ``ni`` is. When no pair relates,
    ``ok`` is False and the first candidates are returned (for the
    message)."""
    c1 = _candidates(proc, first, want, op)
    c2 = _candidates(proc, second, want, op)
    for p1, s1 in c1:
        for p2, s2 in c2:
            if related(p1, s1, p2, s2):
                return p1, s1, p2, s2, True
    return c1[0] + c2[0] + (False, )


def directly_inside(p1, s1, p2, s2) -> bool:
    """``s2`` is the first statement of the loop body ``s1``."""
    return isinstance(s1, IR.For) and p2 == p1 + (("body", 0), )


def directly_after(p1, s1, p2, s2) -> bool:
    """``s2`` is the statement right after ``s1`` in the same block."""
    return (p1[:-1] == p2[:-1] and p1[-1][0] == p2[-1][0]
            and p2[-1][1] == p1[-1][1] + 1)


def _sibling_at_or_after(p1, s1, p2, s2) -> bool:
    return (p1[:-1] == p2[:-1] and p1[-1][0] == p2[-1][0]
            and p2[-1][1] >= p1[-1][1])


class Block(NamedTuple):
    parent: Path      # path of the owning statement (() for the proc body)
    field: str        # 'body' or 'orelse'
    lo: int           # the block is get_list(...)[lo:hi]
    hi: int
    stmts: tuple

    def paths(self):
        return [self.parent + ((self.field, i), )
                for i in range(self.lo, self.hi)]


def resolve_block(proc, target, op: str = "") -> Block:
    """A block: block cursor, statement (cursor or pattern), or a pair
    ``(first, last)`` of sibling statements."""
    if isinstance(target, (tuple, list)):
        if len(target) != 2:
            raise _proc_error(proc, f"{_prefix(op)}a block is a pair "
                              "(first_stmt, last_stmt)")
        p1, s1, p2, s2, _ = resolve_pair(proc, target[0], target[1], "stmt",
                                         _sibling_at_or_after, op)
        if p1[:-1] != p2[:-1] or p1[-1][0] != p2[-1][0]:
            raise scheduling_error(proc, s2, f"{_prefix(op)}the last statement "
                                   "of a block must be a sibling of the first")
        lo, hi = p1[-1][1], p2[-1][1] + 1
        if hi <= lo:
            raise scheduling_error(proc, s2, f"{_prefix(op)}the last statement "
                                   "of a block must not precede the first")
        parent, field = p1[:-1], p1[-1][0]
    elif isinstance(target, str) or isinstance(target, StmtCursor):
        p, _ = resolve_stmt(proc, target, op)
        parent, field, lo, hi = p[:-1], p[-1][0], p[-1][1], p[-1][1] + 1
    else:
        c = to_cursor(proc, target, op)
        if isinstance(c, StmtCursor):
            c = c.as_block()
        if not isinstance(c, BlockCursor):
            raise _proc_error(proc, f"{_prefix(op)}expected a block, got {c!r}")
        parent, field = c.parent_path(), c.field()
        lo, hi = c.range()
    stmts = get_list(proc.ir(), parent, field)[lo:hi]
    return Block(parent, field, lo, hi, stmts)


def resolve_expr(proc, target, op: str = ""):
    """``(stmt_path, expr_path, expr)`` of an expression cursor or pattern."""
    if isinstance(target, str):
        c = find_want(proc, target, "expr")
    else:
        c = to_cursor(proc, target, op)
    if not isinstance(c, ExprCursor):
        raise _proc_error(proc, f"{_prefix(op)}expected an expression, "
                          f"got {c!r}")
    return c.stmt_path(), c.expr_path(), c.node()


class Buffer(NamedTuple):
    kind: str         # 'alloc' | 'window' | 'arg'
    loc: object       # statement path, or argument index for 'arg'
    node: object      # the Alloc / WindowStmt / FnArg
    sym: object       # the buffer's Sym


def resolve_buffer(proc, target, op: str = "") -> Buffer:
    """A buffer (allocation, window statement or argument) by name,
    ``'t : _'`` pattern, or cursor."""
    if isinstance(target, str):
        c = find_want(proc, target, "buffer")
    else:
        c = to_cursor(proc, target, op)
    if isinstance(c, ArgCursor):
        return Buffer("arg", c.index(), c.node(), c.node().name)
    if isinstance(c, StmtCursor):
        s = c.node()
        if isinstance(s, IR.Alloc):
            return Buffer("alloc", c.path(), s, s.name)
        if isinstance(s, IR.WindowStmt):
            return Buffer("window", c.path(), s, s.name)
        raise scheduling_error(proc, s, f"{_prefix(op)}expected a buffer "
                               "(an allocation or an argument)")
    raise _proc_error(proc, f"{_prefix(op)}expected a buffer, got {c!r}")


def check_identifier(proc, name, op: str = "", what: str = "name") -> str:
    """Validate a user-supplied identifier (new loop/buffer/proc names)."""
    if not isinstance(name, str) or not name.isidentifier() \
            or keyword.iskeyword(name):
        raise _proc_error(proc, f"{_prefix(op)}{name!r} is not a valid "
                          f"{what} (expected a Python identifier)")
    return name


# ----------------------------------------------------------------------
# build
def _rebuild(node, steps, fn):
    """Rebuild ``node`` with the list at ``steps`` replaced by fn(list)."""
    (field, i), rest = steps[0], steps[1:]
    lst = getattr(node, field)
    if not rest:
        return node.update(**{field: fn(lst, i)})
    child = _rebuild(lst[i], rest, fn)
    return node.update(**{field: _splice(lst, i, i + 1, (child, ))})


def _splice(lst, lo, hi, new_stmts):
    """``lst[:lo] + new_stmts + lst[hi:]``, telling ``blockinfo.diff`` how
    the result was made (so that re-checking it need not compare the rest
    of a long block)."""
    out = lst[:lo] + new_stmts + lst[hi:]
    note_splice(lst, out, lo, hi, len(new_stmts))
    return out


def replace_block_at(proc_ir, parent: Path, field: str, lo: int, hi: int,
                     new_stmts) -> object:
    """``proc_ir`` with ``get_list(parent, field)[lo:hi]`` replaced."""
    new_stmts = tuple(new_stmts)
    get_list(proc_ir, parent, field)  # validate
    return _rebuild(proc_ir, tuple(parent) + ((field, lo), ),
                    lambda lst, i: _splice(lst, lo, hi, new_stmts))


def replace_stmts_at(proc_ir, path: Path, new_stmts) -> object:
    """``proc_ir`` with the statement at ``path`` replaced by a sequence of
    statements (empty: deleted; a bare statement is accepted too)."""
    if isinstance(new_stmts, IR.stmt):
        new_stmts = (new_stmts, )
    get_stmt(proc_ir, path)  # validate
    *parent, (field, i) = path
    return replace_block_at(proc_ir, tuple(parent), field, i, i + 1,
                            new_stmts)


def insert_stmts_at(proc_ir, parent: Path, field: str, index: int,
                    new_stmts) -> object:
    """``proc_ir`` with statements inserted before ``list[index]``."""
    return replace_block_at(proc_ir, parent, field, index, index, new_stmts)


def ranges_at(proc_ir, path: Path):
    """Known ranges of variables at a statement (for the simplifier)."""
    return env_at(proc_ir, path)


def simplify_at(proc_ir, path: Path, expr):
    """Normalize an index expression built for the statement at ``path``."""
    return simplify_expr(expr, env_at(proc_ir, path))


# ----------------------------------------------------------------------
# record: forward functions (old path -> new path)
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
    replacement; ``keep_inside=True`` also keeps cursors into its body
    (for rewrites that only change the statement's own fields)."""
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


def forward_compose(*fns) -> Forward:
    """Apply forward functions in order (None entries are skipped)."""
    fns = [f for f in fns if f is not None]

    def fwd(p):
        for f in fns:
            p = f(p)
        return p
    return fwd


__all__ = [
    "stmt_text", "scheduling_error", "to_cursor", "resolve_stmt",
    "resolve_loop", "resolve_block", "resolve_expr", "resolve_buffer",
    "check_identifier", "Block", "Buffer", "replace_block_at",
    "replace_stmts_at", "insert_stmts_at", "ranges_at", "simplify_at",
    "forward_replace_block", "forward_replace", "forward_insert",
    "forward_delete", "forward_wrap", "forward_unwrap", "forward_move",
    "forward_table", "forward_compose", "InvalidCursorError", "get_stmt",
    "get_list", "get_expr", "GapCursor", "check_unchanged_by",
]


# ----------------------------------------------------------------------
# parsing user-written expressions (added for stage_mem / expand_dim)
def names_at(proc_ir, parent: Path, field: str, index: int) -> dict:
    """Surface name -> (Sym, type, mem) of everything visible before
    ``get_list(parent, field)[index]``: arguments, enclosing loop
    iterators, and allocations / window statements earlier in enclosing
    blocks. Later bindings of a spelling shadow earlier ones."""
    names = {a.name.name: (a.name, a.type, a.mem) for a in proc_ir.args}
    node = proc_ir
    steps = tuple(parent) + ((field, index), )
    for k, (f, i) in enumerate(steps):
        lst = getattr(node, f)
        for s in sc_prefix(lst, i):   # binders are state changers
            if isinstance(s, IR.Alloc):
                names[s.name.name] = (s.name, s.type, s.mem)
            elif isinstance(s, IR.WindowStmt):
                names[s.name.name] = (s.name, s.rhs.type, None)
        if k == len(steps) - 1:
            break
        node = lst[i]
        if isinstance(node, IR.For):
            names[node.iter.name] = (node.iter, IR.Index, None)
    return names


def parse_expr_at(proc, text, parent: Path, field: str, index: int,
                  op: str = "", allow_window: bool = False, scope=None):
    """Parse ``text`` (Python syntax, e.g. ``'i0 + 4'`` or
    ``'C[i, j0:j0+16]'``) as an expression of ``proc`` at the given
    position, with the frontend's typing rules. Ints become constants.
    ``scope``: extra global names (e.g. ``{'stride': stride, 'Cfg': Cfg}``).
    Raises ``SchedulingError`` for anything the frontend would reject."""
    import ast as _ast
    from ..frontend.parser import ProcParser, SourceMap, _Var
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str):
        raise _proc_error(proc, f"{_prefix(op)}expected an expression "
                          f"string, got {text!r}")
    try:
        node = _ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise _proc_error(proc, f"{_prefix(op)}cannot parse {text!r}") \
            from None
    ir = proc.ir()
    env = {n: _Var(sym, typ, mem)
           for n, (sym, typ, mem) in names_at(ir, parent, field, index).items()}
    fdef = _ast.parse(f"def {ir.name}(): pass").body[0]
    parser = ProcParser(fdef, dict(scope or {}), SourceMap(f"<{op or 'argument'}>",
                                            [text.strip()]))
    try:
        if allow_window and isinstance(node, _ast.Subscript) \
                and parser.is_window_expr(node):
            return parser.window_expr(node, env)
        return parser.expr(node, env)
    except (SyntaxError, TypeError, ValueError) as e:
        raise _proc_error(proc, f"{_prefix(op)}cannot use {text!r} here: "
                          f"{e}") from None


def config_fields_written(stmts) -> set:
    """``(config, field)`` pairs a block may write, through calls too."""
    return set(config_writes(stmts))


def check_unchanged_by(proc, stmt, exprs, region, op: str, what: str,
                       where: str) -> None:
    """The one check of every rewrite that evaluates control expressions
    (loop bounds, conditions, call arguments, indices) at another point than
    the original program did: raise ``SchedulingError`` unless ``exprs``
    read no state that the statements ``region`` -- everything that may run
    between the original and the new point of evaluation -- may write.

    Control expressions read only immutable values and config fields, so
    this asks whether ``region`` (through calls too) may write a config
    field ``exprs`` read (``core_ir.state``; any write counts, so the check
    is conservative). ``what`` names the expressions and ``where`` the
    region in the message."""
    bad = reads_written_state(tuple(exprs), tuple(region))
    if bad:
        fields = ", ".join(sorted(f"{c.name()}.{f}" for c, f in bad))
        raise scheduling_error(
            proc, stmt, f"{op}: configuration state read by {what} "
            f"({fields}) may be written by {where}, so evaluated where the "
            f"rewrite would evaluate it, it could have another value")


def bounds_depend_on(exprs, stmts) -> bool:
    """True when ``exprs`` (loop bounds) read a config field ``stmts`` may
    write (see ``check_unchanged_by``)."""
    return bool(reads_written_state(tuple(exprs), tuple(stmts)))


def is_count(value, least: int = 1) -> bool:
    """A plain int (not a bool) of at least ``least``: factors, n_lifts..."""
    return isinstance(value, int) and not isinstance(value, bool) \
        and value >= least


def resolve_alloc_dim(proc, buffer, dim, op: str, verb: str):
    """The allocation ``buffer`` and the constant size of its dimension
    ``dim``, for rewrites that reshape one dimension (``verb`` says how)."""
    from ..core_ir.types import shape as shape_of
    buf = resolve_buffer(proc, buffer, op)
    if buf.kind != "alloc":
        raise scheduling_error(proc, buf.node if buf.kind != "arg" else None,
                               f"{op}: '{buf.sym}' is not an allocation")
    a = buf.node
    shape = shape_of(a.type)
    if not is_count(dim, 0) or dim >= len(shape):
        raise scheduling_error(
            proc, a, f"{op}: dim must be a dimension index of '{a.name}' "
            f"(0..{len(shape) - 1}), got {dim!r}")
    from ..core_ir.simplify import const_value
    n = const_value(shape[dim], env_at(proc.ir(), buf.loc))
    if not isinstance(n, int):
        raise scheduling_error(
            proc, a, f"{op}: dimension {dim} of '{a.name}' must have a "
            f"constant size to be {verb}")
    return buf, n
