"""``call_eqv(call, new_proc)`` and equivalence by provenance (``is_eq``).

Every scheduled ``Procedure`` records its parent and the set of config
fields ``equiv_mod`` modulo which it is equivalent to that parent (empty:
fully equivalent; Def. 3.2). Equivalence therefore is a question about the
derivation tree, never about what two procedures compute: ``p`` and ``q``
are related when they share an ancestor, and then ``p ≅_L q`` with ``L`` the
union of ``equiv_mod`` along the tree path between them (each edge is an
equivalence modulo its fields, and ``≅_L1 ∘ ≅_L2 ⊆ ≅_{L1 ∪ L2}``).
Unrelated procedures are never equivalent, even when they compute the same
thing: proving that would be a different (undecidable in general) question.

``call_eqv`` swaps the callee of one call for ``new_proc``. The callee (an
``IR.Proc`` inside the call) is found in ``new_proc``'s derivation chain, so
``new_proc`` must have been derived from the procedure the call calls
(through rename, split, ... any rewrite). When the two are only equivalent
modulo some config fields ``L``, the context extension of §3.6.2 decides:
code after the call may not read those fields before overwriting them
(``D(Rd_G(PostEff) ∩ L = ∅)``), and the calling procedure is then equivalent
to its parent modulo ``M(L - Wr_G(PostEff))``. The new call is re-checked
(argument types and memories, callee preconditions and bounds).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..effects import api as EA
from ..errors import BoundsError, ExoTypeError
from . import _common as C

OP = "call_eqv"


def _same(p, q) -> bool:
    return p is q or p.ir() is q.ir()


def _ancestry(p):
    """[(procedure, fields modulo which p ≅ it)] from p up to its root."""
    out = []
    acc = frozenset()
    while p is not None:
        out.append((p, acc))
        acc = acc | p._equiv_mod
        p = p._parent
    return out


def equivalence_modulo(p, q):
    """The set of (Config, field) pairs modulo which ``p`` and ``q`` are
    known equivalent by provenance, or None when they are unrelated."""
    ups = _ancestry(p)
    for anc_q, mod_q in _ancestry(q):
        for anc_p, mod_p in ups:
            if _same(anc_p, anc_q):
                return frozenset(mod_p | mod_q)
    return None


def is_eq(p, q) -> bool:
    """True when ``p`` and ``q`` are fully equivalent by provenance."""
    from ..api import Procedure
    if not isinstance(p, Procedure) or not isinstance(q, Procedure):
        return False
    return equivalence_modulo(p, q) == frozenset()


def _callee_relation(callee_ir, new_proc):
    """Fields modulo which ``new_proc`` ≅ the procedure ``callee_ir`` is the
    IR of, when that procedure is in new_proc's derivation chain; else
    None."""
    for anc, mod in _ancestry(new_proc):
        if anc.ir() is callee_ir:
            return mod
    for anc, mod in _ancestry(new_proc):
        if anc.ir() == callee_ir:  # structurally the same node
            return mod
    return None


def _field_text(fields):
    return ", ".join(sorted(f"{c.name()}.{f}" for c, f in fields))


def _sig_problem(old, new):
    """Why ``new`` cannot be called where ``old`` is, or None."""
    if len(old.args) != len(new.args):
        return (f"'{new.name}' takes {len(new.args)} arguments, "
                f"'{old.name}' takes {len(old.args)}")
    for a, b in zip(old.args, new.args):
        ta, tb = a.type, b.type
        if isinstance(ta, IR.Tensor) != isinstance(tb, IR.Tensor):
            return f"argument '{b.name.name}' changed kind"
        if isinstance(ta, IR.Tensor):
            if (ta.is_window != tb.is_window or ta.type != tb.type
                    or len(ta.hi) != len(tb.hi)):
                return f"argument '{b.name.name}' changed type"
        elif ta != tb:
            return f"argument '{b.name.name}' changed type"
        if a.mem is not b.mem:
            return f"argument '{b.name.name}' changed memory"
    return None


def recheck(proc, new_ir, stmt, op):
    """Call typing, bounds and callee preconditions of a rewritten IR."""
    from ..effects.bounds import check_proc
    from ..frontend.typecheck import check_calls
    try:
        check_calls(new_ir)
        check_proc(new_ir)
    except (BoundsError, ExoTypeError) as e:
        raise C.scheduling_error(
            proc, stmt, f"{op}: the result would not be well-formed "
            f"(a callee precondition, a bound or a call type no longer "
            f"holds): {e}") from None


def call_eqv(proc, call, new_proc):
    from ..api import Procedure
    path, s = C.resolve_stmt(proc, call, OP)

    def fail(msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    if not isinstance(s, IR.Call):
        raise fail("expected a call statement")
    if not isinstance(new_proc, Procedure):
        raise fail(f"expected a Procedure to call, got {new_proc!r}")
    old_f, new_f = s.f, new_proc.ir()
    mod = _callee_relation(old_f, new_proc)
    if mod is None:
        raise fail(f"'{new_f.name}' is not derived from '{old_f.name}' by "
                   f"scheduling, so it is not known to be equivalent (only "
                   f"provenance counts, not what the procedures compute)")
    why = _sig_problem(old_f, new_f)
    if why:
        raise fail(why)
    equiv_mod = frozenset()
    if mod:
        r, equiv_mod = EA.equiv_modulo(proc.ir(), path, mod)
        if not r:
            raise fail(f"'{new_f.name}' is only equivalent to "
                       f"'{old_f.name}' modulo {_field_text(mod)}, and code "
                       f"after the call may read it ({r.reason})")
        equiv_mod = frozenset((g.config, g.field) if hasattr(g, "config")
                              else g for g in equiv_mod)
    new_s = s.update(f=new_f)
    new_ir = C.replace_stmts_at(proc.ir(), path, new_s)
    recheck(proc, new_ir, s, OP)
    return proc._derive(new_ir, OP, equiv_mod=equiv_mod,
                        forward=C.forward_replace(path, 1))
