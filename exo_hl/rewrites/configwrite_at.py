"""``configwrite_at(stmt, Config, 'field', expr, before=False)``.

Insert ``Config.field = expr`` after ``stmt`` (or before it). ``expr`` is
source text (or an int) read at the insertion point, with the frontend's
typing rule for config writes.

A new config write is always locally safe but only equivalent modulo the
field (§3.5.7). Checked in context (§3.6.2):
  * when the field provably already holds that value at the insertion point
    (its PreValG equals the new value under CtrlPred), the write changes
    nothing and the procedure stays fully equivalent;
  * otherwise code after the write may not read the field before it is
    overwritten (callee bodies and preconditions count), and the procedure
    is recorded as equivalent to its parent modulo the field (unless later
    code definitely overwrites it).
The result is re-checked (bounds, callee preconditions, call typing).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..effects import api as EA
from ..effects import checks as CK
from ..effects import eexpr as E
from ..provenance import derive
from . import _common as C
from .bind_config import check_config_field, value_fits_field

OP = "configwrite_at"


def configwrite_at(proc, stmt, config, field, expr, before=False):
    ftype = check_config_field(proc, config, field, OP)
    if isinstance(stmt, C.GapCursor):
        if before is not False:
            raise C._proc_error(proc, f"{OP}: a gap cursor already says "
                                "where to write; leave before=False")
        stmt, before = C.resolve_position(proc, stmt, OP)
    path, s = C.resolve_stmt(proc, stmt, OP)
    ir = proc.ir()

    def fail(msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    if not isinstance(before, bool):
        raise fail(f"before must be True or False, got {before!r}")
    *parent, (fld, idx) = path
    parent = tuple(parent)
    at = idx if before else idx + 1
    from ..frontend.surface import stride
    e = C.parse_expr_at(proc, expr, parent, fld, at, OP,
                        scope={"stride": stride, config.name(): config})
    if not value_fits_field(e.type, ftype):
        raise fail(f"'{expr}' cannot be written to {config.name()}.{field}"
                   f" (type mismatch)")
    write = IR.WriteConfig(config, field, e, srcinfo=s.srcinfo)
    new_ir = C.insert_stmts_at(ir, parent, fld, at, (write, ))
    new_path = parent + ((fld, at), )

    if _same_value(new_ir, new_path, config, field, e):
        equiv_mod = frozenset()
    else:
        r, mod = EA.equiv_modulo(new_ir, new_path, {(config, field)})
        if not r:
            raise fail(f"{config.name()}.{field} is read later, before it "
                       f"is overwritten, and the new value may differ from "
                       f"the one it would read ({r.reason})")
        equiv_mod = frozenset((g.config, g.field) for g in mod)
    return derive(proc, new_ir, OP, equiv_mod=equiv_mod,
                  forward=C.forward_insert(parent, fld, at, 1))


def _same_value(new_ir, path, config, field, e) -> bool:
    """Does the field provably already hold ``e``'s value right before the
    new write (then the write is the identity)?"""
    ctx = EA.context(new_ir, path)
    g = E.GVar(config, field)
    sort = E.BOOL if config.lookup_type(field) is IR.Bool else E.INT
    cur = ctx.env.get(g, E.var(g, sort))
    new = ctx.lift(e)
    # both sides are already in entry-state terms: prove directly
    return bool(CK.prove(E.eq(cur, new), ctx.hyps))
