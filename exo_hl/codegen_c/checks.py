"""The backend's checks: which C names a program may use, and what it
refuses to compile.

Everything here either picks a C identifier or raises an exo_hl error
(``MemGenError`` / ``ExoTypeError``) naming the procedure and, where the
IR has one, the source line; the emitters only print.
"""
from __future__ import annotations

import re

from ..core_ir import operators as OPS
from ..core_ir.nodes import IR
from ..core_ir.visitors import Visitor
from ..core_ir.types import (C_TYPES, TYPE_NAMES, basetype, is_data,
                             is_real_scalar, is_tensor_or_window)
from ..errors import ExoTypeError, MemGenError, located
from .c_reserved import (is_reserved, program_names, reserved_pattern,
                         reserved_why)

#: operators whose value is a boolean whatever their operands' types
_BOOL_VALUED = OPS.CMP_OPS | OPS.BOOL_OPS

# ----------------------------------------------------------------------------
# C naming

# one reserved-name set for everything the backend prints (c_reserved.py)


def fresh_c_name(base: str, in_use) -> str:
    """A C identifier for ``base`` that is neither reserved nor in use."""
    return fresh_c_name_k(base, in_use)[0]


def fresh_c_name_k(base: str, in_use, first_k: int = 1):
    """(name, base, k): ``base`` itself (k = 0) or the first free
    ``base_k`` with k >= ``first_k`` (every ``base_j``, j < first_k, must
    be taken)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", base):
        base = "v"
    elif reserved_pattern(base):
        # a suffix would not leave the reserved pattern (``_x``, ``EPS``)
        base = "v" + base if base.startswith("_") else "v_" + base
    name, k = base, 0
    if name in in_use or is_reserved(name):
        k = first_k
        name = f"{base}_{k}"
        while name in in_use or is_reserved(name):
            k += 1
            name = f"{base}_{k}"
    return name, base, k


def param_c_names(proc, taken) -> dict:
    """{arg Sym: C parameter name}: the same names the body emitter binds,
    since it binds the arguments first, in order, avoiding ``taken``
    (the file's function names)."""
    names, in_use = {}, set(taken)
    for a in proc.args:
        names[a.name] = fresh_c_name(a.name.name, in_use)
        in_use.add(names[a.name])
    return names




# ----------------------------------------------------------------------------
# refusals


def check_basename(basename):
    """The file stem names the header, its guard and the context type."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", basename):
        raise ValueError(f"basename {basename!r} is not a valid C identifier")


def public_fn_names(publics, basename):
    """{proc: C function name} for the public procedures, which keep their
    own names (they are the C ABI), or an error naming the one that can't."""
    own = program_names(basename)
    names, by_name = {}, {}
    for p in publics:
        if p.name in by_name:
            raise MemGenError(located(
                f"two different public procedures are named '{p.name}' "
                f"(the other is from {_where(by_name[p.name])}); rename one "
                f"with p.rename(...)", p.srcinfo, p.name))
        if is_reserved(p.name, own):
            raise MemGenError(located(
                f"procedure '{p.name}' cannot be exported to C: its name "
                f"is reserved there ({reserved_why(p.name, own)}); give it "
                f"another with p.rename(...)", p.srcinfo, p.name))
        names[p] = by_name[p.name] = p
    return {p: p.name for p in names}


def _where(proc):
    s = proc.srcinfo
    if s is not None and s.lineno:
        return f"{s.filename}:{s.lineno}"
    return "an unknown location"


#: integer element types by width (all narrower than C's int, or int itself)
INT_BITS = {IR.I8: 8, IR.UI8: 8, IR.I16: 16, IR.UI16: 16, IR.I32: 32}


class _DataLeaves(Visitor):
    """The data leaves of one expression, the first of each precision.
    Indices, windows and control arithmetic hold none; comparisons and
    logic may compare data. An extern with its own argument types is a
    leaf of its result's precision, its arguments checked on their own."""

    def __init__(self, fail, stmt):
        self.found, self.fail, self.stmt = {}, fail, stmt

    def leaf(self, x):
        if is_real_scalar(x.type) and x.type is not IR.Num:
            # a bf16 is read as the f32 it is the top half of
            t = IR.F32 if x.type is IR.BF16 else x.type
            self.found.setdefault(t, x)

    def visit_Extern(self, x):
        if not x.f.own_arg_types:
            return None
        self.leaf(x)
        for a in x.args:
            check_precision(a, self.fail, self.stmt)
        return False

    def visit_Read(self, x):
        self.leaf(x)
        return False

    visit_ReadConfig = visit_Read

    def visit_WindowExpr(self, x):
        return False

    def visit_BinOp(self, x):
        return is_data(x.type) or x.op in _BOOL_VALUED

    def visit_USub(self, x):
        return is_data(x.type)


def check_precision(e, fail, stmt=None):
    """All data leaves of one expression share one precision, except
    that integers of different widths may mix (C computes them all in
    int, as the interpreter computes them exactly); returns it.
    ``fail(cls, msg, node)`` raises."""
    v = _DataLeaves(fail, stmt)
    v.visit(e)
    found = v.found
    if len(found) > 1 and all(t in INT_BITS for t in found):
        # integers of every width are computed in C's int (the usual
        # arithmetic conversions), exactly as the interpreter does
        return max(found, key=lambda t: INT_BITS[t])
    if len(found) > 1:
        names = ", ".join(TYPE_NAMES[t] for t in found)
        fail(ExoTypeError,
             f"mixed precisions ({names}) in one expression; "
             f"bind a sub-expression to a buffer of one precision "
             f"first", stmt or e)
    return next(iter(found), None)


def check_arg_precision(f, fa, a, node, fail):
    """A data buffer argument has the C element type of its parameter.

    The interpreter runs an ``R`` parameter at the caller's precision,
    but C has one body per callee and ``R`` is ``float`` there; passing
    e.g. an ``f64`` buffer would reinterpret its memory."""
    if not (is_tensor_or_window(fa.type) or is_real_scalar(fa.type)):
        return
    want, got = basetype(fa.type), basetype(a.type)
    if is_data(got) and C_TYPES[want] != C_TYPES[got]:
        fail(ExoTypeError,
             f"argument '{fa.name.name}' of '{f.name}' is "
             f"{TYPE_NAMES[got]} but the parameter compiles as "
             f"{C_TYPES[want]} ({TYPE_NAMES[want]}); call a copy of "
             f"'{f.name}' made with set_precision for "
             f"{TYPE_NAMES[got]} data", node)


def check_readable(buf, node, fail):
    """C may touch a buffer directly only if its memory allows it."""
    if not buf.mem.can_read():
        fail(MemGenError,
             f"cannot read or write '{buf.cname}' directly: memory "
             f"{buf.mem.name()} is not readable from C (use an "
             f"instruction)", node)
