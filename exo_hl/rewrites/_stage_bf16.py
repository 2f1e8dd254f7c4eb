"""``stage_mem`` of a ``bf16`` buffer: where the load copy shows.

Storing into a ``bf16`` quiets a signaling NaN (docs/semantics.md, bf16),
also a ``bf16`` copied into a ``bf16``, so the staged copy of an element
that held a signaling NaN holds the quiet one. Arithmetic on a NaN gives a
NaN whose payload is not specified, so a block that only computes with the
staged values computes the same; two uses would not (audit 15a):

* the store writes back an element the block did not write: the original
  kept the signaling NaN's bits there, the staged program stores the quiet
  NaN;
* the block copies a staged value, without arithmetic, into a location of
  another type (``y[i] = x[i]`` with ``y: f32``; also in a callee given a
  window of it; into a config field): reading a ``bf16`` is exact, NaNs
  included, so the original copied the signaling NaN.

``bf16_refusal`` finds either, for ``stage_mem`` to refuse it.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import walk_stmts
from ._window_cover import overwrites_window


def bf16_refusal(proc, blk, w, survey, store):
    """(statement, reason) when staging the ``bf16`` window ``w`` with a
    load copy would show that copy (module docstring), else None.
    ``store``: the rewrite writes the staged copy back."""
    if store and not any(
            overwrites_window(proc, blk.parent + ((blk.field, blk.lo + k), ),
                              s, blk.stmts, w)
            for k, s in enumerate(blk.stmts)):
        return (blk.stmts[0], "the store would write back elements the "
                "block may not write, and the load copy quiets a signaling "
                "NaN there (bf16 copies do; the original keeps its bits)")
    names = {w.buf} | set(survey.derived)
    hit = _plain_copy_out(blk.stmts, names, survey.outside, w.buf, set())
    if hit is not None:
        return (hit, "a staged value is copied without arithmetic into a "
                "location of another type (or a config field), and the load "
                "copy quiets a "
                "signaling NaN (bf16 copies do; the original copied its "
                "bits)")
    return None


def _plain_copy_out(stmts, names, outside, buf, seen):
    """The first statement assigning a plain read of ``names`` (a covered
    access: not one of ``outside``, kept on ``buf``) into a non-``bf16``
    location, here or in a callee given one of them."""
    names = set(names)
    for s in walk_stmts(stmts):
        if isinstance(s, IR.WindowStmt) and s.rhs.name in names and not (
                s.rhs.name == buf and ("w", s.rhs.idx) in outside):
            names.add(s.name)
    for s in walk_stmts(stmts):
        if (isinstance(s, IR.Assign) and s.type is not IR.BF16
                or isinstance(s, IR.WriteConfig)) and \
                isinstance(s.rhs, IR.Read) and s.rhs.name in names and \
                not (s.rhs.name == buf and ("p", s.rhs.idx) in outside):
            return s      # (a config field: refused whatever its type)
        if isinstance(s, IR.Call):
            for param, a in zip(s.f.args, s.args):
                if not isinstance(a, (IR.Read, IR.WindowExpr)) or \
                        a.name not in names:
                    continue
                if isinstance(a, IR.WindowExpr) and a.name == buf and \
                        ("w", a.idx) in outside:
                    continue
                key = (id(s.f), param.name)
                if key in seen:
                    continue
                seen.add(key)
                if _plain_copy_out(s.f.body, {param.name}, frozenset(),
                                   None, seen) is not None:
                    return s
    return None
