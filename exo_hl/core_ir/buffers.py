"""Which buffer a name really designates, and which arguments a proc writes.

Windows (``w = A[i, 0:n]``) are names for parts of other buffers; several
passes (call checking, C ``const``/``restrict``, effects) need to see through
them to the underlying buffer.
"""
from __future__ import annotations


from ..caches import memo
from .nodes import IR
from .traversal import walk_stmts
from .types import is_real_scalar, is_tensor_or_window


def window_aliases(stmts) -> dict:
    """{window Sym: the Sym it views} for every window statement in a block."""
    return {s.name: s.rhs.name for s in walk_stmts(stmts)
            if isinstance(s, IR.WindowStmt)}


def buffer_root(alias: dict, sym):
    """Follow window statements back to the underlying buffer's symbol."""
    while sym in alias:
        sym = alias[sym]
    return sym


def arg_root(alias: dict, e):
    """The buffer a call argument designates, or None for control values."""
    if isinstance(e, IR.Read) and not e.idx and (
            is_tensor_or_window(e.type) or is_real_scalar(e.type)):
        return buffer_root(alias, e.name)
    if isinstance(e, IR.WindowExpr):
        return buffer_root(alias, e.name)
    return None


@memo(maxsize=4096)
def written_buffers(proc) -> frozenset:
    """Symbols (arguments and allocations) that ``proc`` writes or reduces
    into, directly, through windows, or through the procedures it calls."""
    alias, out = window_aliases(proc.body), set()
    for s in walk_stmts(proc.body):
        if isinstance(s, (IR.Assign, IR.Reduce)):
            out.add(buffer_root(alias, s.name))
        elif isinstance(s, IR.Call):
            w = written_buffers(s.f)
            for fa, a in zip(s.f.args, s.args):
                if fa.name in w:
                    r = arg_root(alias, a)
                    if r is not None:
                        out.add(r)
    return frozenset(out)


def aliasing_call_args(call, alias: dict):
    """Pairs of parameter names of ``call`` that receive the same buffer while
    the callee writes at least one of them (the callee was analysed assuming
    its arguments do not alias). A cheap syntactic pre-filter: the bounds
    checker (effects/bounds.py) then accepts the call only if the two views
    are provably disjoint regions of that buffer."""
    written = written_buffers(call.f)
    roots = {}
    for fa, a in zip(call.f.args, call.args):
        r = arg_root(alias, a)
        if r is not None:
            roots.setdefault(r, []).append(fa)
    bad = []
    for root, params in roots.items():
        if len(params) > 1 and any(p.name in written for p in params):
            bad.append((root, params))
    return bad
