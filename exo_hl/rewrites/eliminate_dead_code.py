"""``eliminate_dead_code(stmt)``: remove a branch or loop that never runs.

- ``if c: A else: B`` becomes ``A`` when ``c`` is proven true where the
  ``if`` runs, ``B`` when proven false (nothing, or ``pass`` in an
  otherwise empty block, when ``B`` is empty);
- ``for i in seq(lo, hi): s`` is removed when ``hi <= lo`` is proven (it
  runs zero times) or its body is only ``pass``.

Conditions and bounds have no effects, so not evaluating them changes
nothing; the proofs use the context of the statement (preconditions,
enclosing loops and guards, configuration values there). When neither
outcome is proven the call is refused.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..effects.api import prove_at
from . import _common as C
from ..core_ir.traversal import walk_stmts
from ._buffer_uses import uses
from ._expr_at import expr_text

OP = "eliminate_dead_code"


def _not(e):
    return IR.Not(e, type=IR.Bool, srcinfo=e.srcinfo)


def eliminate_dead_code(proc, stmt):
    path, s = C.resolve_stmt(proc, stmt, OP)
    ir = proc.ir()

    def fail(msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    if isinstance(s, IR.If):
        if prove_at(ir, path, s.cond):
            keep, fld = s.body, "body"
        elif prove_at(ir, path, _not(s.cond)):
            keep, fld = s.orelse, "orelse"
        else:
            raise fail(f"cannot prove the condition {expr_text(s.cond)} "
                       f"always true or always false here")
    elif _dead_store(ir, path, s):
        keep, fld = (), "body"
    elif isinstance(s, IR.For):
        empty = IR.BinOp("<=", s.hi, s.lo, type=IR.Bool, srcinfo=s.srcinfo)
        if not (all(isinstance(b, IR.Pass) for b in s.body)
                or prove_at(ir, path, empty)):
            raise fail(f"cannot prove that loop '{s.iter.name}' runs zero "
                       f"times ({expr_text(s.hi)} <= {expr_text(s.lo)}) and "
                       f"its body does something")
        keep, fld = (), "body"
    else:
        raise fail("expected an if or a loop, or a store to a buffer nothing "
                   "reads")
    *parent, (field, k) = path
    block = C.get_list(ir, tuple(parent), field)
    new = tuple(keep)
    if not new and len(block) == 1:
        new = (IR.Pass(srcinfo=s.srcinfo), )
    new_ir = C.replace_stmts_at(ir, path, new)
    if keep:
        fwd = C.forward_unwrap(path, len(keep), fld)
    else:
        fwd = C.forward_replace(path, len(new))
    return proc._derive(new_ir, OP, forward=fwd)


def _dead_store(ir, path, s) -> bool:
    """``s`` only assigns or reduces into allocations (under loops), and
    without it none of them is read, windowed or passed anywhere."""
    bufs = set()
    for st in walk_stmts((s, )):
        if isinstance(st, (IR.Assign, IR.Reduce)):
            bufs.add(st.name)
        elif not isinstance(st, (IR.For, IR.Pass)):
            return False
    if not bufs:
        return False
    allocs = {st.name for st in walk_stmts(ir.body)
              if isinstance(st, IR.Alloc)}
    if not bufs <= allocs:
        return False
    rest = C.replace_stmts_at(ir, path, ())
    return not any(u.kind not in ("write", "stride")
                   for u in uses(rest.body, (), "body", 0, bufs))
