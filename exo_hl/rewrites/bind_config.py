"""``bind_config(expr, Config, 'field')``: pass a value through config state.

    s   ~>   Config.field = e
             s[e -> Config.field]

``e`` is a control or data expression of statement ``s`` (its right-hand
side, indices, call arguments, an ``if`` condition or loop bounds); every
occurrence of ``e`` among ``s``'s own expressions is replaced (they are all
evaluated before ``s`` changes anything, so they all see the same value).
A control field's type must match ``e``'s type; a data field must hold
``e``'s exact value as ``s`` uses it (``rewrites/_precision.py``): its own
precision for floating-point data, a type holding its range for integers,
and for literals only a field type in which they compute, bit for bit,
what ``s`` computed with them (``2.0`` fits an ``f32`` field in an ``f32``
statement; ``2.5 + 2.5`` stored into an ``i32`` is 4, so an ``f32`` field,
which holds 5, cannot stand for it there).

Locally the result is equivalent modulo ``{Config.field}`` (Def. 3.2). In
the procedure that is acceptable only if nothing observes the changed field
(context extension, §3.6.2): ``s`` and the code after it may not read the
field before overwriting it (reads inside callees and callee preconditions
count), except inside the occurrences of ``e`` being replaced (``e`` may
read the field itself: ``for i in seq(0, C.k + 1)`` becomes ``C.k = C.k +
1; for i in seq(0, C.k)``; its bounds are evaluated before the body runs,
which may then write the field). The procedure is then recorded as equivalent to its
parent modulo the field, unless later code definitely overwrites it. The
result is re-checked (bounds, callee preconditions, call typing).

Rejected: whole buffers/windows, data passed to a call (by reference).
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.config import Config
from ..core_ir.nodes import IR
from ..core_ir.syms import Sym
from ..effects import api as EA
from ..provenance import derive
from . import _common as C
from ._precision import (holder_problem, mixed_precision_problem,
                         replace_expr)

OP = "bind_config"


def check_config_field(proc, config, field, op):
    if not isinstance(config, Config):
        raise C._proc_error(proc, f"{op}: expected a @config class, got "
                            f"{config!r}")
    if not isinstance(field, str) or not config.has_field(field):
        raise C._proc_error(proc, f"{op}: config {config.name()} has no "
                            f"field {field!r}")
    return config.lookup_type(field)


def value_fits_field(etype, ftype) -> bool:
    """May a value of type ``etype`` be written to a field of ``ftype``
    (the frontend's rule for ``Cfg.field = e``)?"""
    if T.is_real_scalar(ftype):
        return T.is_real_scalar(etype)
    if not T.is_control(etype):
        return False
    if ftype is IR.Bool:
        return etype is IR.Bool
    if ftype is IR.Stride:
        return T.is_indexable(etype)
    return T.is_int_control(etype)


def _subst_own(s, e, new):
    """``s`` with ``e`` replaced by ``new`` in s's own expressions (not in
    nested statement bodies)."""
    def rep(x):
        return replace_expr(x, e, new)
    if isinstance(s, IR.If):
        return s.update(cond=rep(s.cond))
    if isinstance(s, IR.For):
        return s.update(lo=rep(s.lo), hi=rep(s.hi))
    return rep(s)


def _txt(e):
    try:
        from ..core_ir.printer import expr_to_str
        return expr_to_str(e)
    except Exception:  # never let the printer hide the real error
        return repr(e)


def bind_config(proc, expr, config, field):
    ftype = check_config_field(proc, config, field, OP)
    spath, _epath, e = C.resolve_expr(proc, expr, OP)
    ir = proc.ir()
    s = C.get_stmt(ir, spath)

    def fail(msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    if T.is_tensor_or_window(e.type) or isinstance(e, IR.WindowExpr):
        raise fail(f"'{_txt(e)}' is a buffer or window, not a value")
    def mismatch(why=""):
        return fail(f"'{_txt(e)}' has type "
                    f"{T.TYPE_NAMES.get(e.type, e.type)} but "
                    f"{config.name()}.{field} has type "
                    f"{T.TYPE_NAMES.get(ftype, ftype)}{why}")

    if T.is_control(e.type) or T.is_control(ftype):
        if e.type != ftype and not (T.is_control(e.type)
                                    and T.is_control(ftype)
                                    and value_fits_field(e.type, ftype)
                                    and value_fits_field(ftype, e.type)):
            raise mismatch()
    elif isinstance(s, IR.Call):
        raise fail(f"'{_txt(e)}' is passed by reference to '{s.f.name}', "
                   f"which may write it; it cannot be replaced by a copy")
    else:
        # a data field must hold e's exact value as s uses it
        why = holder_problem(e, ftype, (s, ))
        if why:
            raise mismatch(f", which cannot stand for it here: {why}")
    if isinstance(s, IR.WindowStmt):
        raise fail("cannot bind an expression of a window statement")

    # context extension: s and everything after it must not observe the
    # new value of the field, except through the occurrences of e it
    # replaces (they read it right after the write, before s changes
    # anything): s is checked with them as a fresh name equal to e's value
    # there, so that
    # binding ``Cf.k + 1`` of ``for i in seq(0, Cf.k + 1)`` is accepted
    # and ``for i in seq(Cf.k, n)`` binding ``n`` is not
    opaque = IR.Read(Sym("bound_value"), (), type=e.type, srcinfo=e.srcinfo)
    r, mod = EA.equiv_modulo(ir, spath, {(config, field)}, include_stmt=True,
                             stmt=_subst_own(s, e, opaque),
                             bound=((opaque, e), ))
    if not r:
        raise fail(f"{config.name()}.{field} is read later (by this "
                   f"statement or code after it) before it is overwritten, "
                   f"so writing it here would change the program "
                   f"({r.reason})")

    si = s.srcinfo
    write = IR.WriteConfig(config, field, e, srcinfo=si)
    read = IR.ReadConfig(config, field, type=ftype, srcinfo=e.srcinfo)
    new_s = _subst_own(s, e, read)
    why = mixed_precision_problem((s, ), (new_s, ))
    if why:
        raise mismatch(f": in its place the field would mix precisions in "
                       f"one expression, which C does not compute ({why})")
    new_ir = C.replace_stmts_at(ir, spath, (write, new_s))
    equiv_mod = frozenset((g.config, g.field) for g in mod)
    *parent, (fld, idx) = spath
    return derive(proc, new_ir, OP, equiv_mod=equiv_mod,
                  forward=C.forward_insert(tuple(parent), fld, idx, 1))
