"""Checks shared by rewrites: configuration state read across a moved
evaluation point, plain argument checks, and whether a memory can hold an
allocation.
"""
from __future__ import annotations

from typing import NamedTuple

from ..core_ir.memory import CExpr
from ..core_ir.nodes import IR
from ..core_ir.printer import expr_to_str
from ..core_ir.state import config_writes, reads_written_state
from ..core_ir.types import C_TYPES, basetype, shape
from ..errors import MemGenError
from ._reject import scheduling_error


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


class Moved(NamedTuple):
    """Control expressions a rewrite evaluates at another point than the
    original program: ``kind`` (one of ``KINDS``) at ``stmt``, the
    expressions, the statements ``region`` that may run between the old
    and the new point of evaluation, and texts naming both in a refusal."""
    kind: str
    stmt: object
    exprs: tuple
    region: tuple
    what: str
    where: str


#: what a control expression evaluated once, where it stands, can be
KINDS = ("loop bounds", "if conditions", "allocation sizes",
         "window offsets", "call arguments", "indices")

#: Every rewrite that moves the evaluation point of control expressions
#: and checks it syntactically (``check_moved``), with the kinds it moves.
#: docs/semantics.md lists the same (tests/rewrites/test_moved_exprs.py
#: checks both ways). Rewrites that move whole statements (``reorder``,
#: ``reorder_stmts``, ``fission_after``, ``fuse_loop``'s bodies,
#: ``configwrite_at``...) prove it with the effect analysis instead, in
#: which every statement reads what its expressions read (an allocation
#: its sizes, a loop its bounds, an ``if`` its condition, a call or a
#: window statement its arguments and offsets).
MOVES = {
    "split": ("loop bounds", ),
    "partition_loop": ("loop bounds", ),
    "shift_loop": ("loop bounds", ),
    "mult_loops": ("loop bounds", ),
    "join_loops": ("loop bounds", ),
    "fuse_loop": ("loop bounds", ),
    "divide_with_recompute": ("loop bounds", ),
    "lift_if": ("if conditions", ),
    "lift_scope": ("if conditions", ),
    "inline": ("call arguments", ),
    "expand_dim": ("indices", ),
    "lift_alloc": ("allocation sizes", ),
    "sink_alloc": ("allocation sizes", ),
    "stage_mem": ("window offsets", ),
}


def check_moved(proc, op: str, moved) -> None:
    """The one check of the ``Moved`` list a rewrite declares: raise
    ``SchedulingError`` unless each entry's expressions read no state its
    region may write (``check_unchanged_by``). ``op`` must be listed in
    ``MOVES`` with each entry's kind (a programming error otherwise)."""
    for m in moved:
        assert m.kind in MOVES.get(op, ()), (op, m.kind)
        check_unchanged_by(proc, m.stmt, m.exprs, m.region, op, m.what,
                           m.where)


def bounds_depend_on(exprs, stmts) -> bool:
    """True when ``exprs`` (loop bounds) read a config field ``stmts`` may
    write (see ``check_unchanged_by``)."""
    return bool(reads_written_state(tuple(exprs), tuple(stmts)))


def is_count(value, least: int = 1) -> bool:
    """A plain int (not a bool) of at least ``least``: factors, n_lifts..."""
    return isinstance(value, int) and not isinstance(value, bool) \
        and value >= least


def names_in_use(proc, path, node, body) -> set:
    """The names a new loop iterator at ``path`` must not spell, so that the
    printed program reads back unambiguously: the arguments, the globals
    the procedure uses (called procedures, configs...), the names
    ``node`` uses freely, every iterator and buffer bound in ``body``, and
    the iterators of the loops enclosing ``path``."""
    from ..core_ir.nodes import IR
    from ..core_ir.traversal import bound_syms, free_vars
    from ..core_ir.names import globals_used
    taken = {a.name.name for a in proc.ir().args} | globals_used(proc.ir())
    taken |= {x.name for x in free_vars(node)}
    taken |= {x.name for x in bound_syms(body)}
    enclosing = proc.ir()
    for field, i in tuple(path)[:-1]:
        enclosing = getattr(enclosing, field)[i]
        if isinstance(enclosing, IR.For):
            taken.add(enclosing.iter.name)
    return taken


def check_allocatable(proc, alloc, mem, op: str) -> None:
    """Raise ``SchedulingError`` unless memory ``mem`` can hold the
    allocation ``alloc`` (its ``alloc`` hook accepts the shape: e.g.
    ``DRAM_STATIC`` takes constant sizes only), so a rewrite that puts a
    buffer in a memory or changes its shape refuses what ``compile()``
    would refuse."""
    dims = [CExpr.constant(e.val) if isinstance(e, IR.Const)
            else CExpr(expr_to_str(e)) for e in shape(alloc.type)]
    try:
        mem.alloc(alloc.name.name, C_TYPES[basetype(alloc.type)], dims,
                  alloc.srcinfo)
    except MemGenError as e:
        # the error shows the allocation already: drop a memory's own
        # "file:line: " prefix naming the same place
        why = str(e)
        where = f"{alloc.srcinfo}: "
        if alloc.srcinfo is not None and why.startswith(where):
            why = why[len(where):]
        raise scheduling_error(
            proc, alloc, f"{op}: {mem.__name__} cannot hold this buffer: "
            f"{why}") from None
