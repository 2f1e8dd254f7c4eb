"""``call_eqv(call, new_proc)``: call a procedure derived from the callee.

Equivalence is known by provenance only (``exo_hl.provenance``): every
scheduled procedure records its parent and the config fields modulo which it
is equivalent to it. ``equivalence_modulo`` and ``is_eq`` are re-exported
here from there.

``call_eqv`` swaps the callee of one call for ``new_proc``. The callee (an
``IR.Proc`` inside the call) is found in ``new_proc``'s derivation chain, so
``new_proc`` must have been derived from the procedure the call calls
(through rename, split, ... any rewrite). When the two are only equivalent
modulo some config fields ``L``, the context extension of §3.6.2 decides:
code after the call may not read those fields before overwriting them
(``D(Rd_G(PostEff) ∩ L = ∅)``), and the calling procedure is then equivalent
to its parent modulo ``M(L - Wr_G(PostEff))``. The new call is re-checked
(argument types and memories, callee preconditions and bounds) by
``derive``, like every rewrite result.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..effects import api as EA
from ..provenance import Derived, derive, derived_from, meaning_change
from ..provenance import equivalence_modulo, is_eq  # noqa: F401 (re-export)
from . import _common as C

OP = "call_eqv"


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


def call_eqv(proc, call, new_proc):
    """Call ``new_proc`` instead of the callee of the call ``call``."""
    path, s = C.resolve_stmt(proc, call, OP)

    def fail(msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    if not isinstance(s, IR.Call):
        raise fail("expected a call statement")
    if not isinstance(new_proc, Derived):
        raise fail(f"expected a Procedure to call, got {new_proc!r}")
    old_f, new_f = s.f, new_proc.ir()
    mod = derived_from(old_f, new_proc)
    changed = meaning_change(old_f, new_proc) if mod is None else None
    if changed:
        raise fail(f"'{new_f.name}' is derived from '{old_f.name}', but "
                   f"through {changed}, which changes what it computes: "
                   f"the two are not equivalent")
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
    return derive(proc, new_ir, OP, equiv_mod=equiv_mod,
                  forward=C.forward_replace(path, 1))
