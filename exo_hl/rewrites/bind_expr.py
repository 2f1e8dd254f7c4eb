"""``bind_expr(expr, new_name, cse=False, precision=None)``: name a data
expression.

    s   ~>   new_name : T
             new_name = e
             s[e -> new_name]

``T`` holds the expression's exact value as the statements that use it
see it (``rewrites/_precision.py``): a floating-point expression keeps its
own precision, an integer one gets the narrowest integer type that provably
holds it (``i8 + i8`` read in an ``i32`` statement: ``i32``, never the
wrapping ``i8``), an expression of literals only a type in which it
computes, bit for bit, what the statements computed with it where it stood
(a literal takes its context's type: ``2.5 + 2.5`` is 4 stored into an
``i32``, 5 into an ``f32``, so one temporary cannot serve both).
When no type can be proven to hold it, the binding is rejected. With
``precision`` given, ``T`` is that type, checked by the same rule (so
``bind_const``'s ``f32`` scalar for a literal stored into an ``f64`` or
an ``i8`` is refused: a set_precision afterwards would change what the
statements compute, silently). Within ``s``
every occurrence of ``e`` is replaced: a statement evaluates its right-hand
side before it writes, so all occurrences there see the same value.

With ``cse=True`` the following statements of the same block are rewritten
too, as long as ``e`` keeps its value: a statement that may write a location
``e`` reads (decided by the effect analysis: ``new_name = e`` must commute
with it) ends the region. Its own right-hand side is still rewritten when it
is an assignment or reduction (read before the write), but nothing after.

Rejected: control expressions (they are not data and may not be stored in a
data buffer), whole buffers/windows, and data scalars passed to a call (the
callee receives them by reference and may write them).
"""
from __future__ import annotations

from ..core_ir import types as T
from ..core_ir.memory import DRAM
from ..core_ir.nodes import IR
from ..core_ir.syms import Sym
from ..effects.api import commutes, context
from ..provenance import derive
from . import _common as C
from ._precision import (choose_holder, holder_problem,
                         mixed_precision_problem, replace_expr)

OP = "bind_expr"


def _replace(node, e, new_read):
    return replace_expr(node, e, new_read)


def bind_expr(proc, expr, new_name, cse=False, precision=None):
    spath, epath, e = C.resolve_expr(proc, expr, OP)
    C.check_identifier(proc, new_name, OP, "buffer name")
    ir = proc.ir()
    s = C.get_stmt(ir, spath)

    def fail(msg):
        return C.scheduling_error(proc, s, f"{OP}: {msg}")

    if T.is_control(e.type):
        raise fail(f"'{_txt(e)}' is a control "
                   f"expression; only data expressions can be bound to a "
                   f"data buffer")
    if not T.is_real_scalar(e.type):
        raise fail(f"'{_txt(e)}' is not a data scalar expression")
    if isinstance(s, IR.Call):
        raise fail(f"'{_txt(e)}' is passed by reference to '{s.f.name}', "
                   f"which may write it; it cannot be replaced by a copy")
    if not isinstance(s, (IR.Assign, IR.Reduce, IR.WriteConfig)):
        raise fail(f"'{_txt(e)}' is not inside an assignment")
    *parent, (field, index) = spath
    parent = tuple(parent)
    if new_name in C.names_at(ir, parent, field, index):
        raise fail(f"the name '{new_name}' is already in use here")

    si = s.srcinfo
    new = Sym(new_name)
    probe = IR.Assign(Sym(new_name), e.type, (), e, srcinfo=si)

    # the region: s, then (cse) the following statements while e keeps its
    # value; the last one only has its right-hand side rewritten
    siblings = C.get_list(ir, parent, field)
    region = [s]
    j, checked = index, False
    while cse:
        here = context(ir, parent + ((field, j), ))
        if not checked and not commutes((probe, ), (siblings[j], ), here):
            break  # siblings[j] may change a location e reads
        j += 1
        if j >= len(siblings):
            break
        nxt = siblings[j]
        if isinstance(nxt, (IR.Assign, IR.Reduce, IR.WriteConfig)):
            region.append(nxt)
            checked = False
            continue
        if not commutes((probe, ), (nxt, ),
                        context(ir, parent + ((field, j), ))):
            break
        region.append(nxt)
        checked = True

    # the new scalar must hold e's exact value as the region uses it
    if precision is not None:
        typ = _parse_precision(precision, fail)
        why = holder_problem(e, typ, region)
        if why:
            raise fail(f"a {T.TYPE_NAMES[typ]} scalar cannot hold the value "
                       f"of '{_txt(e)}' here: {why}")
    else:
        typ, why = choose_holder(e, region)
    if typ is None:
        raise fail(f"no precision can hold the value of '{_txt(e)}' here: "
                   f"{why}")
    new_read = IR.Read(new, (), type=typ, srcinfo=e.srcinfo)
    alloc = IR.Alloc(new, typ, DRAM, srcinfo=si)
    assign = IR.Assign(new, typ, (), e, srcinfo=si)
    out = [x.update(rhs=_replace(x.rhs, e, new_read))
           if isinstance(x, (IR.Assign, IR.Reduce, IR.WriteConfig))
           else _replace(x, e, new_read) for x in region]
    _check_c_precision(region, out, typ, fail)
    new_stmts = (alloc, assign) + tuple(out)
    new_ir = C.replace_block_at(ir, parent, field, index, index + len(out),
                                new_stmts)
    return derive(proc, new_ir, OP,
                  forward=C.forward_insert(parent, field, index, 2))


def _check_c_precision(old, new, typ, fail):
    """A read of the new scalar may not mix precisions where the
    expression did not (``_precision.mixed_precision_problem``)."""
    why = mixed_precision_problem(old, new)
    if why:
        raise fail(f"a {T.TYPE_NAMES[typ]} scalar in its place would "
                   f"mix precisions in one expression, which C does "
                   f"not compute ({why})")


def _parse_precision(precision, fail):
    """The data type ``precision`` names (``'f32'`` or the ``f32``
    marker)."""
    t = precision
    if isinstance(precision, str):
        t = T.TYPE_BY_NAME.get(precision)
    elif hasattr(precision, "ir_type"):
        t = precision.ir_type
    if t not in T.DATA_TYPES or not T.is_real_scalar(t):
        raise fail(f"expected a data type ('f32', f64, ...) for precision, "
                   f"got {precision!r}")
    return t


def _txt(e):
    try:
        from ..core_ir.printer import expr_to_str
        return expr_to_str(e)
    except Exception:  # never let the printer hide the real error
        return repr(e)
