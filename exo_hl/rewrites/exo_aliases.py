"""Exo's spellings of scheduling operations, mapped onto our primitives.

Exo code ports unchanged when its method names and argument conventions are
accepted as they are. Each function here only translates arguments and
calls one primitive (or, for ``autolift_alloc``, a short fixed sequence of
primitives); every safety check is the primitive's own. What Exo can say
but our primitives cannot express is rejected with ``SchedulingError``
rather than approximated.
"""
from __future__ import annotations

import re

from ..core_ir.nodes import IR
from ..core_ir.printer import expr_to_str
from ..cursors import BlockCursor, StmtCursor, forward
from . import _common as C

_TAILS = {"guard": "guard", "cut": "cut"}


def divide_loop(proc, loop, c, new_iters, tail="guard", perfect=False):
    """Exo's ``divide_loop`` → ``split``."""
    op = "divide_loop"
    if not isinstance(new_iters, (list, tuple)) or len(new_iters) != 2:
        raise C._proc_error(proc, f"{op}: new_iters must be a list of two "
                            f"names [outer, inner], got {new_iters!r}")
    if not isinstance(perfect, bool):
        raise C._proc_error(proc, f"{op}: perfect must be True or False, "
                            f"got {perfect!r}")
    if perfect:
        mode = "perfect"
    elif tail in _TAILS:
        mode = _TAILS[tail]
    elif tail == "cut_and_guard":
        raise C._proc_error(proc, f"{op}: tail='cut_and_guard' (a remainder "
                            "loop under an if) is not supported; use "
                            "tail='cut' or tail='guard'")
    else:
        raise C._proc_error(proc, f"{op}: tail must be 'guard', 'cut' or "
                            f"'cut_and_guard', got {tail!r}")
    from .split import split
    outer, inner = new_iters
    return split(proc, loop, c, outer, inner, tail=mode)


_TWO_NAMES = re.compile(r"^\s*([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*$")


def split_nest(proc, nest, op):
    """``'a b'`` → ``('a', 'b')``; anything else is rejected."""
    m = _TWO_NAMES.match(nest) if isinstance(nest, str) else None
    if not m:
        raise C._proc_error(proc, f"{op}: expected two loop names 'outer "
                            f"inner' (or outer, inner, new_name), got "
                            f"{nest!r}")
    return m.group(1), m.group(2)


def block_pair(proc, s1, s2):
    """Exo passes two adjacent statements as one block: ``(first, second)``
    of a two-statement block cursor; other targets are returned as given."""
    if s2 is None and isinstance(s1, BlockCursor):
        b = C.to_cursor(proc, s1, "reorder_stmts")
        if len(b) != 2:
            raise C._proc_error(proc, "reorder_stmts: a block must hold "
                                f"exactly two statements, got {len(b)}")
        return b[0], b[1]
    return s1, s2


def reorder_loops(proc, loop):
    """Exo's ``reorder_loops`` → ``reorder``: ``'a b'`` names the outer
    loop and the loop directly inside it; a loop cursor or a single name
    reorders that loop with the loop directly inside it."""
    from .reorder import reorder
    if isinstance(loop, str):
        m = _TWO_NAMES.match(loop)
        if m:
            return reorder(proc, m.group(1), m.group(2))
    return reorder(proc, loop, None)


def fission(proc, gap, n_lifts=1):
    """Exo's ``fission`` → ``fission_after``: cut at a gap cursor (a
    statement stands for the gap after it)."""
    from .fission_after import fission_after
    return fission_after(proc, gap, n_lifts=n_lifts)


def autolift_alloc(proc, alloc, n_lifts=1, keep_dims=True):
    """Exo's ``autolift_alloc`` → ``expand_dim`` then ``lift_alloc`` per
    level: each enclosing loop left behind adds a leading dimension of its
    trip count, indexed by its iteration (so every iteration keeps its own
    copy); an enclosing ``if`` is crossed without a new dimension."""
    op = "autolift_alloc"
    if keep_dims is not True:
        raise C._proc_error(proc, f"{op}: only keep_dims=True (one new "
                            "dimension per loop left) is supported; "
                            "lift_alloc lifts without adding dimensions")
    if not C.is_count(n_lifts):
        raise C._proc_error(proc, f"{op}: n_lifts must be a positive int, "
                            f"got {n_lifts!r}")
    from .expand_dim import expand_dim
    from .lift_alloc import lift_alloc
    buf = C.resolve_alloc(proc, alloc, op)
    cur = StmtCursor(proc, buf.loc)
    for level in range(n_lifts):
        path = cur.path()
        if len(path) < 2:
            raise C.scheduling_error(
                proc, cur.node(), f"{op}: cannot lift {n_lifts} level(s): "
                f"the allocation is only inside {level} loop(s)/if(s)")
        parent = C.get_stmt(proc.ir(), path[:-1])
        if isinstance(parent, IR.For):
            lo, hi = expr_to_str(parent.lo), expr_to_str(parent.hi)
            it = parent.iter.name
            lo_zero = isinstance(parent.lo, IR.Const) and parent.lo.val == 0
            size = hi if lo_zero else f"({hi}) - ({lo})"
            index = it if lo_zero else f"{it} - ({lo})"
            proc = expand_dim(proc, cur, size, index)
            cur = forward(proc, cur)
        proc = lift_alloc(proc, cur, n_lifts=1)
        cur = forward(proc, cur)
    return proc


def write_config(proc, gap, config, field, rhs):
    """Exo's ``write_config`` → ``configwrite_at`` at a gap cursor (a
    statement stands for the gap after it)."""
    from .configwrite_at import configwrite_at
    return configwrite_at(proc, gap, config, field, rhs)
