"""Vectorize a reduction with one partial sum per lane in a register.

Public API only, through the steps ``vectorize`` uses (staging each
operand window, selecting instructions); kept apart from it so that each
module stays one composition.
"""
from __future__ import annotations

from exo_hl import DRAM_STATIC, SchedulingError

from ._util import (at_path, fresh_name, loop_cursor, mentions,
                    sibling_path, text)
from .vectorize import _instr_list, _select, _stage


def vectorize_reduction(p, loop, width, memory, instrs):
    """Vectorize the reduction ``for j: s += e`` (``s`` does not vary with
    ``j``; a dot product, a matvec's row) with ``width`` partial sums in a
    register: split ``j`` (``tail='perfect'``: the trip count must be
    proven divisible), give each lane its own sum (``reorder``,
    ``stage_mem(accum=True)``, ``expand_dim``, ``lift_alloc``,
    ``fission_after``), keep them in ``memory``, load each operand per
    register and select ``instrs`` (zeroing, loads, an FMA or add), then
    store the lanes to a stack buffer and add them into ``s`` in lane
    order. Every step is a checked primitive; what changes is the order
    of the additions, which the semantics allows for ``+=`` into one
    location (docs/semantics.md, Reductions: floats may differ in the
    last bits, as between two BLAS blockings).

    >>> p = vectorize_reduction(matvec, 'j', 16, AVX512, INSTRS)
    """
    instrs = _instr_list(instrs)
    c = loop_cursor(p, loop)
    body = list(c.body())
    if len(body) != 1 or not body[0].is_write() or any(
            mentions(text(i), c.name()) for i in body[0].idx()):
        raise SchedulingError(
            f"vectorize_reduction: the body of loop {c.name()!r} must be "
            f"one accumulation 's += e' into a location that does not vary "
            f"with {c.name()!r}, found: {text(c)}")
    target = body[0]
    idx = ", ".join(text(i) for i in target.idx())
    loc = f"{target.name()}[{idx}]" if idx else target.name()
    i = c.name()
    o, inner = f"{i}o", f"{i}i"
    where = c.path()

    def nxt(k):
        return sibling_path(where, k)
    p = p.split(c, width, o, inner, tail="perfect")
    p = p.reorder(at_path(p, where), at_path(p, where).body()[0])
    acc = fresh_name(p, "acc")
    p = p.stage_mem(at_path(p, where).body()[0], loc, acc, accum=True)
    p = p.expand_dim(at_path(p, where).find(f"{acc} : _"), width, inner)
    p = p.lift_alloc(at_path(p, where).find(f"{acc} : _"))
    # now: acc alloc at where; the lane loop at where + 1
    p = p.fission_after(at_path(p, nxt(1)).find(f"{acc}[_] = _"))
    p = p.fission_after(at_path(p, nxt(2)).body()[0])
    p = p.reorder(at_path(p, nxt(2)), at_path(p, nxt(2)).body()[0])
    p = p.set_memory(at_path(p, where), memory)
    p, staged, _ = _stage(p, at_path(p, nxt(2)).body()[0], inner, width,
                          memory, "_vec", skip=(acc,))
    total = fresh_name(p, f"{acc}_lanes")
    p = p.stage_mem(at_path(p, nxt(3)), f"{acc}[0:{width}]", total)
    p = p.set_memory(at_path(p, nxt(3)), DRAM_STATIC)
    roots = [where[:-1]] if len(where) > 1 else None
    return _select(p, instrs, staged + [acc], roots)
