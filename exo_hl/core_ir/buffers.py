"""Which buffer a name really designates, which arguments a proc writes,
and whether the zero a local scalar starts with may be read.

Windows (``w = A[i, 0:n]``) are names for parts of other buffers; several
passes (call checking, C ``const``/``restrict``, effects) need to see through
them to the underlying buffer.
"""
from __future__ import annotations


from ..caches import memo
from .nodes import IR
from .traversal import used_syms, walk_stmts
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


def zero_start_refusal(name, consequence, when="") -> str:
    """The message of a refusal because the zero a local scalar starts with
    (``when``: e.g. in each iteration) may be read (``zero_start_read``),
    ending in what the refused change would make of it."""
    return (f"'{name}' is a local scalar, which starts at zero{when}, and "
            f"may be read before it is written (here); {consequence}")


def zero_start_read(stmts, sym):
    """The statement of ``stmts`` (the rest of the block after ``sym``'s
    allocation) that may read the zero a local scalar starts with
    (docs/semantics.md), or ``None`` when every path overwrites ``sym``
    (``sym = e``, ``e`` not reading it) before reading it: then no rewrite
    that moves or shares the storage changes what ``sym`` is read as.
    A loop or ``if`` is looked into; one whose body overwrites ``sym`` first
    counts as not overwriting it for what follows (it may run zero times,
    the branch may not be taken), which is conservative. A call passing
    ``sym`` to one data scalar parameter (and nowhere else) overwrites it
    when the callee's body overwrites that parameter before reading it (an
    instruction loading a register); otherwise it may read it."""
    return _zero_read(stmts, sym)[1]


def _zero_read(stmts, sym):
    """``(overwritten, reader)`` for ``zero_start_read``: whether every
    path through ``stmts`` overwrites ``sym`` before reading it, and the
    first statement that may read it before (``None``)."""
    for s in stmts:
        if sym not in used_syms(s):
            continue
        if _overwrites(s, sym):
            return True, None
        if isinstance(s, IR.For) and sym not in used_syms((s.lo, s.hi)):
            _, reader = _zero_read(s.body, sym)
            if reader is not None:
                return False, reader
            continue
        if isinstance(s, IR.If) and sym not in used_syms(s.cond):
            set1, r1 = _zero_read(s.body, sym)
            set2, r2 = _zero_read(s.orelse, sym)
            if r1 is not None or r2 is not None:
                return False, r1 if r1 is not None else r2
            if set1 and set2:
                return True, None
            continue
        return False, s
    return False, None


def _overwrites(s, sym) -> bool:
    """Whether ``s`` sets ``sym`` without reading it: ``sym = e`` with ``e``
    not reading it, or a call passing it to exactly one parameter, a data
    scalar, that the callee's body overwrites before reading it."""
    if isinstance(s, IR.Assign):
        return s.name == sym and sym not in used_syms(s.rhs)
    if not isinstance(s, IR.Call):
        return False
    at = [k for k, a in enumerate(s.args) if sym in used_syms(a)]
    if len(at) != 1:
        return False
    a, fa = s.args[at[0]], s.f.args[at[0]]
    if not (isinstance(a, IR.Read) and a.name == sym and not a.idx
            and is_real_scalar(fa.type)):
        return False
    overwritten, reader = _zero_read(s.f.body, fa.name)
    return overwritten and reader is None
