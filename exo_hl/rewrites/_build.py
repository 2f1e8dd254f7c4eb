"""Building the rewritten procedure: replacing or inserting statements at
a path, sharing every unchanged subtree (the IR is immutable).
"""
from __future__ import annotations

from ..core_ir.blockinfo import note_splice
from ..core_ir.nodes import IR
from ..core_ir.paths import Path, get_list, get_stmt
from ..core_ir.simplify import env_at, simplify_expr
from ..core_ir.visitors import map_accesses


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


def retype_window_reads(stmts, wtypes) -> tuple:
    """``stmts`` with every whole read of a window name in ``wtypes`` (window
    name -> window type) taking that type: a rewrite that changes what a
    window statement views must change the type its uses carry (call
    arguments) with it."""
    if not wtypes:
        return tuple(stmts)
    return tuple(map_accesses(s, set(wtypes), read=lambda n: None if n.idx
                              else n.update(type=wtypes[n.name]))
                 for s in stmts)
