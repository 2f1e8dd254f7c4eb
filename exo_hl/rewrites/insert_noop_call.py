"""``insert_noop_call(gap, callee, args)``: a call that changes no value.

For instructions with no meaning for the program's values, such as a
cache prefetch (``mm_prefetch_t0`` in ``exo_hl.hw_libs.avx2/avx512``):
the callee's body may only read its arguments (it may write its own local
buffers, which nothing outside sees), so adding the call is equivalent
whatever it reads. What must hold is what holds for any call written by
hand, and the result is re-checked like fresh code (``derive``): the
arguments type-check against the callee's, every window the call passes
is in bounds (``effects.bounds``: so a schedule cannot make the C compute
a pointer outside a buffer, which is UB in C even where the hardware
would not fault), and the callee's preconditions are proven at the call.
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.traversal import walk_stmts
from ..provenance import derive
from . import _common as C

OP = "insert_noop_call"


def insert_noop_call(proc, gap, callee, args):
    # 1. locate: the position, the callee, the arguments parsed there
    target, before = C.resolve_position(proc, gap, OP)
    path, s = C.resolve_stmt(proc, target, OP)
    *parent, (field, k) = path
    parent = tuple(parent)
    index = k if before else k + 1
    cir = _callee_ir(proc, s, callee)
    if isinstance(args, str) or not isinstance(args, (list, tuple)):
        raise C.reject(proc, s, f"{OP}: args must be a list of expression "
                       f"strings, got {args!r}")
    if len(args) != len(cir.args):
        raise C.reject(proc, s, f"{OP}: '{cir.name}' takes {len(cir.args)} "
                       f"argument(s), got {len(args)}")
    exprs = tuple(C.parse_expr_at(proc, a, parent, field, index, OP,
                                  allow_window=True) for a in args)
    # 2. check: the callee changes nothing its caller can see
    _check_no_effect(proc, s, cir)
    # 3. build (types, bounds and preconditions: re-checked by derive)
    call = IR.Call(cir, exprs, srcinfo=s.srcinfo)
    new_ir = C.insert_stmts_at(proc.ir(), parent, field, index, (call, ))
    # 4. record
    return derive(proc, new_ir, OP,
                  forward=C.forward_insert(parent, field, index, 1))


def _callee_ir(proc, s, callee):
    ir = getattr(callee, "ir", None)
    if not callable(ir):
        raise C.reject(proc, s, f"{OP}: the callee must be a procedure or "
                       f"an @instr, got {callee!r}")
    return ir()


def _check_no_effect(proc, s, cir, seen=()):
    """Every write in ``cir`` (and the procedures it calls) goes to one of
    its own allocations, and no configuration field is written."""
    local = {a.name for a in walk_stmts(cir.body) if isinstance(a, IR.Alloc)}
    for st in walk_stmts(cir.body):
        if isinstance(st, (IR.Assign, IR.Reduce)) and st.name not in local:
            raise C.reject(proc, s, f"{OP}: '{cir.name}' writes its argument "
                           f"'{st.name.name}': the call would change values")
        if isinstance(st, IR.WriteConfig):
            raise C.reject(proc, s, f"{OP}: '{cir.name}' writes the "
                           f"configuration field '{st.field}'")
        if isinstance(st, IR.Call) and st.f not in seen:
            _check_no_effect(proc, s, st.f, seen + (cir, ))
