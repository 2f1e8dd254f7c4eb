"""Type rules shared by the frontend and by rewrites that re-check calls.

The parser types every expression as it builds it (see ``parser.py``); the
rules that are also needed *after* parsing live here, on plain IR, so that a
rewrite changing a buffer's precision or memory (``set_precision``,
``set_memory``) can re-check the calls it affects with ``check_calls``.

Decisions (docs/api.md leaves them open):
- A window parameter ``[T][...]`` accepts a whole tensor, a window
  expression or a window name. A dense tensor parameter ``T[...]`` accepts
  only a whole dense tensor (a tensor argument or allocation): a window may
  have non-unit strides, so passing it where dense data is expected is an
  ``ExoTypeError``.
- Element types must be equal, except that ``R`` on either side matches any
  data type.
- An argument's memory must be the parameter's memory class or a subclass.
- Data arithmetic on two different precisions yields the wider one (floats
  above integers, then by bit width); ``R`` adopts the other side; a
  ``bf16`` operand counts as ``f32`` (bf16 is a storage type). Whether a
  mix is acceptable in C is the backend's precision check.
"""
from __future__ import annotations

from typing import Optional

from . import types as T
from .nodes import IR
from .traversal import walk_stmts
from ..errors import ExoTypeError, located

_RANK = {IR.I8: 1, IR.UI8: 1, IR.I16: 2, IR.UI16: 2, IR.I32: 3,
         IR.F16: 10, IR.F32: 11, IR.F64: 12}


def data_join(a, b):
    """The type of a data binary operation on types ``a`` and ``b``
    (arithmetic on a bf16 is computed, and typed, as f32)."""
    a = IR.F32 if a is IR.BF16 else a
    b = IR.F32 if b is IR.BF16 else b
    if a is IR.Num:
        return b
    if b is IR.Num or a == b:
        return a
    return a if _RANK[a] >= _RANK[b] else b


def control_arith_type(lhs, rhs):
    """The type of integer control arithmetic ``lhs op rhs``, as the
    frontend gives it and rewrites must keep it (the printed procedure
    parses back to the same types): stride arithmetic is a stride, literal
    on literal an int, anything else an index."""
    if IR.Stride in (lhs.type, rhs.type):
        return IR.Stride
    if isinstance(lhs, IR.Const) and isinstance(rhs, IR.Const):
        return IR.Int
    return IR.Index


def control_neg_type(arg):
    """The type of ``-arg`` for a control ``arg`` (frontend rule)."""
    return IR.Index if T.is_int_control(arg.type) and \
        not isinstance(arg, IR.Const) else arg.type


def elem_compatible(param_t, arg_t) -> bool:
    return param_t is IR.Num or arg_t is IR.Num or param_t == arg_t


def mem_compatible(param_mem, arg_mem) -> bool:
    if param_mem is None or arg_mem is None:
        return param_mem is arg_mem
    return isinstance(arg_mem, type) and issubclass(arg_mem, param_mem)


def describe_type(t) -> str:
    """Surface spelling of a type for messages (``f32[2 dims]``, ``[i8][..]``)."""
    if isinstance(t, IR.WindowType):
        return f"[{T.type_name(t)}] window of {len(T.shape(t))} dims"
    if isinstance(t, IR.Tensor):
        kind = "window" if t.is_window else "tensor"
        return f"{T.type_name(t)} {kind} of {len(t.hi)} dims"
    return T.TYPE_NAMES.get(t, type(t).__name__)


def _mem_name(m):
    return getattr(m, "__name__", str(m))


def c_precision_problem(callee, param, arg) -> Optional[str]:
    """Why C cannot pass ``arg`` for the data parameter ``param`` of the
    procedure ``callee`` (an ``IR.proc``, not an instruction); None if it
    can.

    C has one body per callee and ``R`` is ``float`` there; passing e.g.
    an ``i8`` or ``f64`` buffer would reinterpret its memory, and the
    interpreter refuses the same calls (run at another precision, the
    callee's ``R`` locals would still be f32). (An instruction's C is its
    template, and its body in the interpreter, generic: they take any
    element type.)"""
    if not (T.is_tensor_or_window(param.type)
            or T.is_real_scalar(param.type)):
        return None
    want, got = T.basetype(param.type), T.basetype(arg.type)
    if T.is_data(got) and T.C_TYPES[want] != T.C_TYPES[got]:
        return (f"argument '{param.name.name}' of '{callee.name}' is "
                f"{T.TYPE_NAMES[got]} but the parameter compiles as "
                f"{T.C_TYPES[want]} ({T.TYPE_NAMES[want]}); call a copy of "
                f"'{callee.name}' made with set_precision for "
                f"{T.TYPE_NAMES[got]} data")
    return None


def call_arg_problem(param, arg, arg_mem) -> Optional[str]:
    """Why ``arg`` (an IR expr, held in memory ``arg_mem``) cannot be passed
    for the callee parameter ``param`` (an ``IR.FnArg``); None if it can."""
    pt, at = param.type, arg.type
    pname = param.name.name
    if T.is_control(pt):
        if not T.is_control(at):
            return (f"argument '{pname}' is a control value ({describe_type(pt)})"
                    f" but a data value ({describe_type(at)}) was passed")
        if pt is IR.Bool:
            ok = at is IR.Bool
        elif pt is IR.Stride:
            ok = at is IR.Stride or T.is_int_control(at)
        else:
            ok = T.is_int_control(at)
        if not ok:
            return (f"argument '{pname}' expects {describe_type(pt)}, "
                    f"got {describe_type(at)}")
        return None
    if T.is_real_scalar(pt):
        if not (isinstance(arg, IR.Read) and not arg.idx
                and T.is_real_scalar(at)):
            return (f"argument '{pname}' is a data scalar ({describe_type(pt)}):"
                    f" pass the name of a scalar buffer")
        if not elem_compatible(pt, at):
            return (f"argument '{pname}' expects element type "
                    f"{T.type_name(pt)}, got {T.type_name(at)}")
    else:  # tensor or window parameter
        if not T.is_tensor_or_window(at):
            return (f"argument '{pname}' expects a {describe_type(pt)}, "
                    f"got {describe_type(at)}")
        if not pt.is_window and T.is_window(at):
            return (f"argument '{pname}' is a dense tensor parameter; a window"
                    f" can only be passed to a window parameter [T][...]")
        if len(T.shape(at)) != len(pt.hi):
            return (f"argument '{pname}' expects {len(pt.hi)} dimensions, "
                    f"got {len(T.shape(at))}")
        if not elem_compatible(pt.type, T.basetype(at)):
            return (f"argument '{pname}' expects element type "
                    f"{T.type_name(pt)}, got {T.type_name(at)}")
        for d, (ph, ah) in enumerate(zip(pt.hi, T.shape(at))):
            if (isinstance(ph, IR.Const) and isinstance(ah, IR.Const)
                    and ph.val != ah.val):
                return (f"argument '{pname}' dimension {d} has size {ph.val},"
                        f" got {ah.val}")
    if not mem_compatible(param.mem, arg_mem):
        return (f"argument '{pname}' must be in memory "
                f"{_mem_name(param.mem)} (or a subclass), but it is in "
                f"{_mem_name(arg_mem)}")
    return None


def buffer_memories(proc) -> dict:
    """Sym -> Memory class for every buffer/window name of ``proc``."""
    mems = {a.name: a.mem for a in proc.args}
    for s in walk_stmts(proc.body):
        if isinstance(s, IR.Alloc):
            mems[s.name] = s.mem
        elif isinstance(s, IR.WindowStmt):
            mems[s.name] = mems.get(s.rhs.name)
    return mems


def arg_memory(arg, mems):
    if isinstance(arg, (IR.Read, IR.WindowExpr)) and not T.is_control(arg.type):
        return mems.get(arg.name)
    return None


def bind_memory(s, mems) -> dict:
    """Buffer memories after statement ``s``: an allocation's name is in
    its memory, a window statement's name in the memory of what it views
    (a new dict when ``s`` binds a name, else ``mems`` itself)."""
    if isinstance(s, IR.Alloc):
        mems = dict(mems)
        mems[s.name] = s.mem
    elif isinstance(s, IR.WindowStmt):
        mems = dict(mems)
        mems[s.name] = mems.get(s.rhs.name)
    return mems


def check_calls(proc) -> None:
    """Re-check every call of ``proc`` (an ``IR.Proc``) against its callee's
    signature; raise ``ExoTypeError`` at the first mismatch. A buffer's
    memory is the one of the binding in scope at the call (arguments,
    earlier allocations and window statements of enclosing blocks)."""
    check_calls_in(proc.body, {a.name: a.mem for a in proc.args}, proc.name)


def check_calls_in(stmts, mems, proc_name) -> None:
    """``check_calls`` for the calls among the block ``stmts`` (nested ones
    included), with ``mems`` (Sym -> Memory class) the buffer memories in
    scope before it."""
    for s in stmts:
        if isinstance(s, IR.Call):
            _check_call(s, mems, proc_name)
        elif isinstance(s, IR.For):
            check_calls_in(s.body, mems, proc_name)
        elif isinstance(s, IR.If):
            check_calls_in(s.body, mems, proc_name)
            check_calls_in(s.orelse, mems, proc_name)
        else:
            mems = bind_memory(s, mems)


def _check_call(s, mems, proc_name):
    callee = s.f
    if len(s.args) != len(callee.args):
        raise ExoTypeError(located(
            f"call to '{callee.name}' passes {len(s.args)} arguments, "
            f"expected {len(callee.args)}", s.srcinfo, proc_name))
    for p, a in zip(callee.args, s.args):
        why = call_arg_problem(p, a, arg_memory(a, mems))
        if why:
            raise ExoTypeError(located(
                f"in call to '{callee.name}': {why}",
                a.srcinfo or s.srcinfo, proc_name))
