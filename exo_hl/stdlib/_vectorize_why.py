"""Why ``vectorize`` failed, in the user's terms: the kind of body it met
(a reduction, a stencil) and what to do, or the library instruction that
came nearest to a loop no instruction matches and why it failed.

Public API only (``Procedure.replace`` and cursors), like the rest of the
stdlib.
"""
from __future__ import annotations

from exo_hl import SchedulingError

from ._util import data_leaves, mentions, text


def diagnose(p, inner_loop, inner, err):
    """``err`` restated with the kind of body ``vectorize`` met and what
    to do about it."""
    body = list(inner_loop.body())
    if len(body) == 1 and body[0].is_if():
        body = list(body[0].body())
    for b in body:
        if b.is_write() and not any(mentions(text(i), inner)
                                    for i in b.idx()):
            return SchedulingError(
                f"vectorize: the body of loop {inner!r} is a reduction "
                f"('{text(b)}' accumulates into a location that does not "
                f"vary with {inner!r}); vectorize keeps the order of a sum, "
                f"so it cannot split it into lanes. Use "
                f"vectorize_reduction(p, {inner[:-1]!r}, ...), which keeps "
                f"one partial sum per lane in a register and adds the "
                f"lanes at the end, or do that yourself (the library's "
                f"horizontal sums: mm256_reduce_add_ps, "
                f"mm512_reduce_add_ps). ({err})")
    reads = {}
    for b in body:
        if b.is_write():
            for leaf in data_leaves(b.rhs(), []):
                if type(leaf.node()).__name__ == "Read" and any(
                        mentions(text(i), inner) for i in leaf.args()):
                    reads.setdefault(leaf.name(), set()).add(text(leaf))
    for name, accs in reads.items():
        if len(accs) > 1:
            return SchedulingError(
                f"vectorize: the body of loop {inner!r} is a stencil "
                f"({name} is read at {len(accs)} offsets: "
                f"{', '.join(sorted(accs))}). vectorize loaded each offset "
                f"into a register of its own and bound each operation to "
                f"one, but the library has no instruction for the loop "
                f"below: use a library that has one (its reference page "
                f"lists them), or write that instruction. ({err})")
    return err


def nearest(p, block, instrs):
    """`` The nearest is 'ins': <why it failed, what to do>`` for the
    instruction of ``instrs`` whose ``replace`` of ``block`` got furthest
    (the body matched but an operand sits in the wrong memory beats a
    statement of another kind), or "" when none was tried."""
    best = None
    for ins in instrs:
        try:
            p.replace(block, ins)
        except SchedulingError as e:
            rank = getattr(e, "replace_progress", -1)
            if best is None or rank > best[0]:
                best = (rank, ins, e)
            continue
        return ""           # it matches: nothing to explain
    if best is None:
        return ""
    _, ins, e = best
    why = getattr(e, "replace_reason", None) or str(e).splitlines()[0]
    if why.startswith(f"'{ins.name()}' "):
        why = "it " + why[len(ins.name()) + 3:]
    return (f". The nearest instruction is '{ins.name()}'; {why}\n  If no "
            "instruction of the library computes this loop, add one "
            "(docs/hardware.md) or leave the loop scalar")


def body_kind(loop, i):
    """What in the body of ``loop`` (over ``i``; a cursor) goes beyond
    lane-wise work on operands that all vary with ``i``, as
    ``(kind, detail)``, or None: a reduction, a stencil, a literal, a
    loop-invariant scalar (the kinds the masked tail does not handle; an
    invariant element ``a[k]`` is, by the masked broadcast-FMA)."""
    body = list(loop.body())
    reads = {}
    for b in body:
        if not b.is_write():
            return None
        if not any(mentions(text(x), i) for x in b.idx()):
            return ("a reduction", f"'{text(b)}' accumulates into a location "
                    f"that does not vary with {i!r}")
        for leaf in data_leaves(b.rhs(), []):
            if type(leaf.node()).__name__ == "Const":
                return ("a literal constant",
                        f"{text(leaf)} in '{text(b)}' is the same in every "
                        "lane")
            if not leaf.args():    # (an element a[k] is a broadcast load)
                return ("a loop-invariant operand",
                        f"{text(leaf)} in '{text(b)}' does not vary with "
                        f"{i!r}")
            if any(mentions(text(x), i) for x in leaf.args()):
                reads.setdefault(leaf.name(), set()).add(text(leaf))
    for name, accs in reads.items():
        if len(accs) > 1:
            return ("a stencil", f"{name} is read at {len(accs)} offsets: "
                    f"{', '.join(sorted(accs))}")
    return None


def masked_refusal(kind, i, width):
    """The refusal of ``tail='mask'`` for a body of ``kind`` (from
    ``body_kind``): which kind, and what to do instead."""
    what, detail = kind
    if what == "a reduction":
        todo = (f"use vectorize_reduction(p, {i!r}, {width}, ...) (its "
                f"trip count must be a multiple of {width}: assert it, or "
                f"cut_loop the loop at a multiple of {width} first and "
                "leave the rest scalar)")
    else:
        todo = (f"use tail='cut' (the vector loop handles {what}; the last "
                f"iterations, fewer than {width}, stay a scalar loop), or "
                f"tail='perfect' with a precondition that the trip count "
                f"is a multiple of {width}")
    return (f"vectorize(tail='mask'): the body of loop {i!r} is {what} "
            f"({detail}); the masked last block handles only lane-wise "
            f"bodies whose operands all vary with {i!r} (each staged into "
            f"a register past the end of its buffer). Instead, {todo}")
