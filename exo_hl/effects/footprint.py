"""Footprints: a call's effect coarsened to whole argument windows.

The effect of a call is its callee's body effect with the arguments
substituted (``effects.eff_call``). For a big callee (a fully unrolled,
scheduled kernel) that is thousands of accesses, and proving two
iterations of a ``par`` loop around such a call disjoint pairs them all:
replacing the algorithm by its scheduled kernel inside a parallel loop
(``call_eqv``, whose result is re-checked like every rewrite) took
minutes.

The *footprint* of a callee ``f`` is a procedure with ``f``'s signature
whose body writes every location of each tensor/window parameter ``f``
may write or reduce (``written_buffers``, through its callees too), and
reads every location of each other tensor/window parameter. Data scalar
parameters (``a: f32``) count as one-location buffers: they are passed by
reference, so a callee that writes ``a`` writes the caller's scalar. Its effect,
substituted at a call, over-approximates the call's: every access ``f``
makes through a parameter lies inside that parameter's declared extents
(``f`` passed the bounds check: ``@proc``, ``@instr`` and every rewrite
result do; the bounds check of a call relies on the same invariant, since
it proves the callee's preconditions and argument shapes, not its body,
at each call), and the caller's argument has those extents (the caller's
shape obligation, proven by the same check; a race verdict is used only
for a procedure that passes it). A write covers a reduction and a
read for every check of Commutes / race freedom (``Wr ∩ All = ∅`` is
the strongest of their conditions), so a check proven with footprints
holds for the calls themselves. Callees that read or write configuration
state have no footprint (their config effects, and the values they write,
would have to be kept exactly): callers then use the precise effect.
"""
from __future__ import annotations

from ..caches import memo
from ..core_ir import build as B
from ..core_ir import types as T
from ..core_ir.buffers import written_buffers
from ..core_ir.memory import DRAM
from ..core_ir.nodes import IR
from ..core_ir.state import config_reads, config_writes
from ..core_ir.syms import Sym
from ..core_ir.traversal import walk_stmts

__all__ = ["footprint_proc", "with_footprints"]


@memo(maxsize=1024)
def _touches_config(proc) -> bool:
    """Does ``proc`` (or a procedure it calls) read or write config?"""
    if config_reads(tuple(proc.preds) + tuple(proc.body)) or \
            config_writes(proc.body):
        return True
    return any(_touches_config(s.f) for s in walk_stmts(proc.body)
               if isinstance(s, IR.Call))


@memo(maxsize=1024)
def footprint_proc(proc):
    """The footprint of ``proc`` (see the module docstring), or None when
    ``proc`` touches configuration state."""
    if _touches_config(proc):
        return None
    written = written_buffers(proc)
    body = []
    for fa in proc.args:
        t = fa.type
        # a data scalar parameter is passed by reference: the callee may
        # write the caller's scalar (or read it while another iteration of
        # a par loop writes it), so it has a footprint too, of one location
        if isinstance(t, IR.Tensor):
            elem, his = t.type, tuple(t.hi)
        elif T.is_real_scalar(t):
            elem, his = t, ()
        else:
            continue
        ks = [Sym(f"k{d}") for d in range(len(his))]
        idx = tuple(B.index_read(k) for k in ks)
        if fa.name in written:
            zero = IR.Const(0.0, type=elem, srcinfo=None)
            s = IR.Assign(fa.name, elem, idx, zero, srcinfo=None)
        else:
            tmp = Sym("t")
            body.append(IR.Alloc(tmp, elem, DRAM, srcinfo=None))
            rd = IR.Read(fa.name, idx, type=elem, srcinfo=None)
            s = IR.Assign(tmp, elem, (), rd, srcinfo=None)
        for k, h in reversed(list(zip(ks, his))):
            s = IR.For(k, B.const(0), h, (s, ), IR.Seq, srcinfo=None)
        body.append(s)
    return proc.update(name=proc.name + "_footprint", preds=(),
                       body=tuple(body), instr=None)


def with_footprints(stmts):
    """``stmts`` with every call of a procedure that is not an ``@instr``
    (an instruction's body is as small as its footprint) calling its
    footprint instead; the same tuple when no call changed."""
    out, changed = [], False
    for s in stmts:
        n = s
        if isinstance(s, IR.Call):
            fp = None if s.f.instr is not None else footprint_proc(s.f)
            if fp is not None:
                n = s.update(f=fp)
        elif isinstance(s, IR.For):
            body = with_footprints(s.body)
            if body is not s.body:
                n = s.update(body=body)
        elif isinstance(s, IR.If):
            body, orelse = with_footprints(s.body), with_footprints(s.orelse)
            if body is not s.body or orelse is not s.orelse:
                n = s.update(body=body, orelse=orelse)
        changed = changed or n is not s
        out.append(n)
    return tuple(out) if changed else stmts
