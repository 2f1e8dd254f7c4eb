"""``reuse_buffer(buf, other)``: let ``buf`` live in ``other``'s storage.

    other: f32[16]                    other: f32[16]
    ... other ...                     ... other ...
    buf: f32[16]            ~>        ... other (was buf) ...
    ... buf ...

``buf``'s allocation is removed and every use of ``buf`` names ``other``.
Checked:

- both are allocations with the same element type, memory and rank, and
  their sizes are proven equal where ``buf`` is allocated;
- ``other`` is in scope wherever ``buf`` is: ``buf``'s allocation lies
  after ``other``'s, in its block or nested in a statement of it;
- their lifetimes are disjoint: once ``buf`` is allocated, ``other`` (or a
  window of it) is never touched again. That region is everything that may
  run after ``buf``'s allocation while ``other`` exists: the rest of each
  enclosing block up to ``other``'s, and the *whole* body of each loop
  enclosing ``buf`` inside ``other``'s scope (its next iteration runs that
  body again, before ``buf``'s allocation too: a value ``other`` kept
  across iterations would be overwritten by ``buf``'s);
- no ``par`` loop lies between the two allocations (its iterations each had
  a private ``buf`` and would share ``other``);
- a local scalar ``buf`` starts at zero (docs/semantics.md), so every
  path after its allocation must overwrite it before reading it
  (``zero_start_read``: ``buf = e`` with ``e`` not reading ``buf``, or a
  call whose callee overwrites it first): in ``other`` it would start
  with ``other``'s last value.
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.traversal import subst, used_syms
from ..core_ir.buffers import zero_start_read, zero_start_refusal
from ..effects.api import prove_at
from . import _common as C
from ._buffer_uses import aliases
from ._expr_at import reads_config

OP = "reuse_buffer"


def reuse_buffer(proc, buf, other):
    b = C.resolve_buffer(proc, buf, OP)
    o = C.resolve_buffer(proc, other, OP)
    ir = proc.ir()

    def fail(msg, st=None):
        st = st if st is not None else (b.node if b.kind != "arg" else None)
        return C.scheduling_error(proc, st, f"{OP}: {msg}")

    for x in (b, o):
        if x.kind != "alloc":
            raise fail(f"'{x.sym.name}' is not an allocation")
    if b.sym == o.sym:
        raise fail("a buffer cannot reuse itself")
    ab, ao = b.node, o.node
    if T.basetype(ab.type) != T.basetype(ao.type) or ab.mem is not ao.mem:
        raise fail(f"'{ab.name.name}' and '{ao.name.name}' differ in element "
                   f"type or memory")
    sb, so = T.shape(ab.type), T.shape(ao.type)
    if len(sb) != len(so):
        raise fail(f"'{ab.name.name}' and '{ao.name.name}' differ in rank")
    if any(reads_config(h) for h in sb + so):
        raise fail("buffer sizes read configuration state")
    if sb:
        pred = None
        for x, y in zip(sb, so):
            eq = IR.BinOp("==", x, y, type=IR.Bool)
            pred = eq if pred is None else IR.BinOp("and", pred, eq,
                                                    type=IR.Bool)
        if not prove_at(ir, b.loc, pred):
            raise fail(f"cannot prove '{ab.name.name}' and '{ao.name.name}' "
                       f"have the same shape")

    pb, po = tuple(b.loc), tuple(o.loc)
    if T.is_real_scalar(ab.type):
        *bp, (bf, bk) = pb
        first = zero_start_read(C.get_list(ir, tuple(bp), bf)[bk + 1:],
                                b.sym)
        if first is not None:
            raise fail(zero_start_refusal(
                ab.name.name, f"in '{ao.name.name}''s storage it would "
                f"start with the value '{ao.name.name}' last held"), first)
    n = len(po) - 1
    if not (len(pb) > n and pb[:n] == po[:n] and pb[n][0] == po[n][0]
            and pb[n][1] > po[n][1]):
        raise fail(f"'{ab.name.name}' must be allocated after "
                   f"'{ao.name.name}', in its scope (its block, or nested "
                   f"in a later statement of that block)")

    # everything that may run after buf's allocation while other lives
    region = []
    for d in range(len(pb) - 1, n - 1, -1):
        f, i = pb[d]
        region.extend(C.get_list(ir, pb[:d], f)[i + 1:])
        if d > n:
            enclosing = C.get_stmt(ir, pb[:d])
            if isinstance(enclosing, IR.For):
                if is_parallel(enclosing.mode):
                    raise fail(f"'{ab.name.name}' is private to each "
                               f"iteration of the parallel loop "
                               f"'{enclosing.iter.name}'; sharing "
                               f"'{ao.name.name}' would race", enclosing)
                region.extend(enclosing.body)
    names = aliases(ir, o.sym)
    for s in region:
        hit = names & used_syms(s)
        if hit:
            raise fail(f"the lifetimes overlap: '{sorted(x.name for x in hit)[0]}' "
                       f"is still used after '{ab.name.name}' is allocated "
                       f"(here)", s)

    *parent, (field, k) = pb
    parent = tuple(parent)
    block = C.get_list(ir, parent, field)
    rest = tuple(subst(s, {b.sym: o.sym}) for s in block[k + 1:])
    new = rest if rest or len(block) > 1 else (IR.Pass(srcinfo=ab.srcinfo), )
    new_ir = C.replace_block_at(ir, parent, field, k, len(block), new)
    fwd = (C.forward_delete(parent, field, k, k + 1) if len(new) == len(rest)
           else C.forward_replace(pb, 1))
    return proc._derive(new_ir, OP, forward=fwd)
