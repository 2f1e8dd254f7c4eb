"""``insert_noop_call(gap, callee, args)``: a call that changes no value.

For instructions with no meaning for the program's values, such as a
cache prefetch (``mm_prefetch_t0`` in ``exo_hl.hw_libs.avx2/avx512``):
the callee's body may only read its arguments (it may write its own local
buffers, which nothing outside sees: directly, through a window of one, or
by passing one to a callee that writes it), so adding the call is
equivalent whatever it reads. What must hold is what holds for any call written by
hand, and the result is re-checked like fresh code (``derive``): the
arguments type-check against the callee's, every window the call passes
is in bounds (``effects.bounds``: so a schedule cannot make the C compute
a pointer outside a buffer, which is UB in C even where the hardware
would not fault), and the callee's preconditions are proven at the call.
"""
from __future__ import annotations

from ..core_ir.buffers import buffer_root, window_aliases, written_buffers
from ..core_ir.nodes import IR
from ..core_ir.state import config_writes
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


def _check_no_effect(proc, s, cir):
    """Every write in ``cir`` (and the procedures it calls) goes to one of
    its own allocations, directly, through a window of one or through a
    callee passed one (a write to the callee's own buffer is no effect on
    the caller: ``core_ir.buffers.written_buffers`` follows windows and
    calls to the buffer written), and no configuration field is written
    (``core_ir.state.config_writes``, through calls too)."""
    if config_writes(cir.body):
        f, st = _config_writer(cir)
        raise C.reject(proc, s, f"{OP}: '{f.name}' writes the configuration "
                       f"field '{st.config.name()}.{st.field}'")
    written = written_buffers(cir)
    for param in (a.name for a in cir.args if a.name in written):
        via = _window_written(cir, param)
        how = f" (through the window '{via.name}')" if via else ""
        raise C.reject(proc, s, f"{OP}: '{cir.name}' writes its argument "
                       f"'{param.name}'{how}: the call would change values")


def _window_written(cir, param):
    """A window of ``param`` that ``cir`` writes through (itself, or by
    passing it to a callee that writes it), for the message; None when it
    writes ``param`` by its name."""
    alias = window_aliases(cir.body)
    for st in walk_stmts(cir.body):
        if isinstance(st, (IR.Assign, IR.Reduce)):
            names = [st.name]
        elif isinstance(st, IR.Call):
            w = written_buffers(st.f)
            names = [a.name for fa, a in zip(st.f.args, st.args)
                     if fa.name in w and isinstance(a, (IR.Read,
                                                        IR.WindowExpr))]
        else:
            continue
        for n in names:
            if n is not param and buffer_root(alias, n) is param:
                return n
    return None


def _config_writer(cir):
    """(procedure, statement): the first config write of ``cir``, in it or
    in the callee that makes it (for the message)."""
    for st in walk_stmts(cir.body):
        if isinstance(st, IR.WriteConfig):
            return cir, st
        if isinstance(st, IR.Call) and config_writes(st.f.body):
            return _config_writer(st.f)
    return None
