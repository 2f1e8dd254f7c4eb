"""Checks shared by rewrites: configuration state read across a moved
evaluation point, and plain argument checks.
"""
from __future__ import annotations

from ..core_ir.state import config_writes, reads_written_state
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
