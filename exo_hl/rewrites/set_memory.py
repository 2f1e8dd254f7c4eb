"""``set_memory(buffer, MEM)``: ``a @ MEM0`` becomes ``a @ MEM``.

Memory is not part of a program's meaning, so the only check is that the
program stays well-typed: every call that receives the buffer (whole, as a
window expression, or through a window statement naming it) must accept a
buffer in ``MEM``: the callee parameter's memory must be ``MEM``'s class or
a base of it (docs/api.md §1). ``MEM`` is also asked, through its
``alloc()``, whether it can hold the buffer at all (e.g. ``DRAM_STATIC``
needs constant sizes), so that refusal comes now, not at compile time.
Direct accesses to an unreadable memory stay the backend's ``MemGenError``:
the schedule is expected to replace them with instructions afterwards.
"""
from __future__ import annotations

import bisect

from ..core_ir.blockinfo import summary
from ..core_ir.memory import Memory
from ..core_ir.nodes import IR
from ..core_ir.traversal import walk_stmts
from ..core_ir.typerules import mem_compatible
from ..provenance import derive
from . import _common as C
from ._check import check_allocatable


def _calls_and_windows_after(block, i):
    """The statements of ``block[i + 1:]`` containing a call or a window
    statement, in order (what ``_aliases`` and ``check_calls_with`` look
    at), found from the block's summary instead of a walk."""
    summ = summary(block)
    pos = set(summ.calls[bisect.bisect_right(summ.calls, i):])
    pos.update(summ.wins[bisect.bisect_right(summ.wins, i):])
    return tuple(block[j] for j in sorted(pos))


def _aliases(body, sym):
    """``sym`` plus every window-statement name that views it (transitively)."""
    names = {sym}
    for s in walk_stmts(body):
        if isinstance(s, IR.WindowStmt) and s.rhs.name in names:
            names.add(s.name)
    return names


def check_calls_with(proc, body, names, mem, op):
    """Raise unless every call passing one of ``names`` accepts ``mem``."""
    for s in walk_stmts(body):
        if not isinstance(s, IR.Call):
            continue
        for param, a in zip(s.f.args, s.args):
            if not isinstance(a, (IR.Read, IR.WindowExpr)) or \
                    a.name not in names or param.mem is None:
                continue
            if not mem_compatible(param.mem, mem):
                raise C.scheduling_error(
                    proc, s,
                    f"{op}: call to '{s.f.name}' passes '{a.name}' for "
                    f"parameter '{param.name}' in memory "
                    f"{param.mem.__name__}; a buffer in {mem.__name__} is not "
                    f"accepted there ({mem.__name__} is not {param.mem.__name__}"
                    f" or a subclass of it)")


def set_memory(proc, buffer, mem):
    op = "set_memory"
    buf = C.resolve_buffer(proc, buffer, op)
    if not (isinstance(mem, type) and issubclass(mem, Memory)):
        raise C.scheduling_error(proc, buf.node if buf.kind != "arg" else None,
                                 f"{op}: expected a Memory subclass, got "
                                 f"{mem!r}")
    if buf.kind != "alloc":
        what = "an argument" if buf.kind == "arg" else "a window"
        raise C.scheduling_error(
            proc, buf.node if buf.kind != "arg" else None,
            f"{op}: '{buf.sym}' is {what}; only an allocation's memory can be "
            f"changed")
    # the buffer's scope is the rest of the block holding the allocation;
    # only statements containing calls or window statements can matter
    ir = proc.ir()
    *parent, (field, i) = buf.loc
    scope = _calls_and_windows_after(C.get_list(ir, tuple(parent), field), i)
    check_calls_with(proc, scope, _aliases(scope, buf.sym), mem, op)
    check_allocatable(proc, buf.node, mem, op)
    new_ir = C.replace_stmts_at(ir, buf.loc, buf.node.update(mem=mem))
    return derive(proc, new_ir, op)

