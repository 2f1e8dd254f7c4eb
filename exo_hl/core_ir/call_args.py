"""Checking the Python arguments of a procedure call (docs/api.md §5).

``p.interpret(...)`` and the callable returned by ``p.compile()`` accept
exactly the same argument forms and reject everything else with the same
message, because both go through ``check_call_args``:

- control arguments (``size index int stride``): a Python or numpy integer
  (not a bool) of 32 bits; ``size`` must be positive;
  ``bool``: a Python or numpy bool;
- tensors and windows: a numpy array of the element's dtype and of the shape
  the signature gives (tensors dense row-major, seen with their dense
  strides even where numpy's differ, in size-1 dimensions; windows any
  positive whole-element strides); written arguments must be writeable;
  every array (data scalars too) must start at an address that is a
  multiple of its element size (``misalignment``);
- data scalars (``x: f32``): a 0-d or 1-element numpy array of the dtype
  (updated in place), or, when the procedure never writes it, a Python or
  numpy number converted to the dtype;
- every precondition must hold, and two pointer arguments one of which is
  written must not overlap in memory, nor may two indices of one written
  window name one element (``as_strided(base, (n, 2), (4, 4))``);
- in a call of a procedure that reads strides (``stride(A, d)``, also in
  a callee), every array's element strides are below 2**31, as control
  values are (``reads_strides``).
"""
from __future__ import annotations

import math
import numbers
from typing import Callable, Dict, Optional

import numpy as np

from .array_layout import (byte_span, dense_strides, misalignment,
                           self_overlaps)
from .buffers import written_buffers
from .nodes import IR, Node
from .operators import CONTROL_EVAL
from .types import (NUMPY_DTYPES, TYPE_NAMES, basetype, is_control,
                    is_window)


class CheckedArgs:
    """The arguments of one call, validated and converted.

    ``values[i]`` is the value of the i-th parameter: an ``int``/``bool``
    for control parameters, a numpy array for buffers and data scalars
    (a 0-d or 1-element array for the latter). ``env`` maps control
    parameter symbols to their values, ``strides`` buffer symbols to their
    element strides, ``addresses[i]`` the data address of a buffer
    parameter's array (None for control parameters).
    """

    __slots__ = ("values", "env", "strides", "addresses")

    def __init__(self, values, env, strides, addresses=None):
        self.values = values
        self.env = env
        self.strides = strides
        self.addresses = addresses


def _fail(pname, msg, exc=TypeError):
    return exc(f"procedure '{pname}': {msg}")


def bind_call_args(proc_ir, args, kwargs) -> list:
    """Positional and keyword arguments -> one value per parameter."""
    pname = proc_ir.name
    names = [a.name.name for a in proc_ir.args]
    if len(args) > len(names):
        raise _fail(pname, f"takes {len(names)} argument"
                    f"{'s' if len(names) != 1 else ''}, {len(args)} given")
    values = list(args) + [_MISSING] * (len(names) - len(args))
    for k, v in kwargs.items():
        if k not in names:
            raise _fail(pname, f"unexpected argument '{k}' (arguments: "
                        f"{', '.join(names) or 'none'})")
        i = names.index(k)
        if values[i] is not _MISSING:
            raise _fail(pname, f"argument '{k}' given twice")
        values[i] = v
    missing = [n for n, v in zip(names, values) if v is _MISSING]
    if missing:
        raise _fail(pname, "missing argument"
                    f"{'s' if len(missing) > 1 else ''} "
                    + ", ".join(f"'{m}'" for m in missing))
    return values


_MISSING = object()


def eval_control(e, env, strides, read_config):
    """The value of a control expression given argument values.

    ``env``: {Sym: value}; ``strides``: {buffer Sym: element strides};
    ``read_config(config, field)``: the current value of a config field.
    Integer ``/`` and ``%`` floor, as everywhere in control code.
    """
    if isinstance(e, IR.Const):
        return e.val
    if isinstance(e, IR.Read):
        return env[e.name]
    if isinstance(e, IR.USub):
        return -eval_control(e.arg, env, strides, read_config)
    if isinstance(e, IR.Not):
        return not eval_control(e.arg, env, strides, read_config)
    if isinstance(e, IR.StrideExpr):
        return strides[e.name][e.dim]
    if isinstance(e, IR.ReadConfig):
        return read_config(e.config, e.field)
    if isinstance(e, IR.BinOp):
        a = eval_control(e.lhs, env, strides, read_config)
        if e.op == "and":
            return a and eval_control(e.rhs, env, strides, read_config)
        if e.op == "or":
            return a or eval_control(e.rhs, env, strides, read_config)
        b = eval_control(e.rhs, env, strides, read_config)
        return _CONTROL_OPS[e.op](a, b)
    raise TypeError(f"cannot evaluate {type(e).__name__} as a control value")


_CONTROL_OPS = CONTROL_EVAL  # core_ir.operators


def _no_config(config, field):
    return 0


def compile_control(e):
    """``e`` as a Python function of ``(env, strides, read_config)`` with
    the value ``eval_control`` gives: built once per procedure, so a call
    evaluates its shapes and preconditions without walking the IR."""
    if isinstance(e, IR.Const):
        val = e.val
        return lambda env, strides, rc: val
    if isinstance(e, IR.Read):
        name = e.name
        return lambda env, strides, rc: env[name]
    if isinstance(e, IR.USub):
        f = compile_control(e.arg)
        return lambda env, strides, rc: -f(env, strides, rc)
    if isinstance(e, IR.Not):
        f = compile_control(e.arg)
        return lambda env, strides, rc: not f(env, strides, rc)
    if isinstance(e, IR.StrideExpr):
        name, dim = e.name, e.dim
        return lambda env, strides, rc: strides[name][dim]
    if isinstance(e, IR.ReadConfig):
        cfg, field = e.config, e.field
        return lambda env, strides, rc: rc(cfg, field)
    if isinstance(e, IR.BinOp):
        f, g = compile_control(e.lhs), compile_control(e.rhs)
        if e.op == "and":
            return lambda env, st, rc: f(env, st, rc) and g(env, st, rc)
        if e.op == "or":
            return lambda env, st, rc: f(env, st, rc) or g(env, st, rc)
        op = _CONTROL_OPS[e.op]
        return lambda env, st, rc: op(f(env, st, rc), g(env, st, rc))
    raise TypeError(f"cannot evaluate {type(e).__name__} as a control value")


def _reads_config(e) -> bool:
    if isinstance(e, IR.ReadConfig):
        return True
    if isinstance(e, IR.BinOp):
        return _reads_config(e.lhs) or _reads_config(e.rhs)
    if isinstance(e, (IR.USub, IR.Not)):
        return _reads_config(e.arg)
    return False


def reads_strides(proc_ir, _seen=None) -> bool:
    """Whether the C of ``proc_ir`` reads a stride (``stride(A, d)`` in
    its statements or types, or in those of a procedure it calls; not
    in preconditions, which Python evaluates exactly, nor in an
    instruction's body, which is not C). The control arithmetic on such
    a value was bounded assuming a 32-bit stride (``core_ir/control_ranges.py``),
    so the arrays of a call of it must have element strides below 2**31
    (``CallPlan.check``)."""
    seen = set() if _seen is None else _seen
    if id(proc_ir) in seen or proc_ir.instr is not None:
        return False
    seen.add(id(proc_ir))
    stack = [a.type for a in proc_ir.args] + list(proc_ir.body)
    while stack:
        n = stack.pop()
        if isinstance(n, IR.StrideExpr):
            return True
        if isinstance(n, IR.Call) and reads_strides(n.f, seen):
            return True
        for name in n._fields:
            if name == "f" and isinstance(n, IR.Call):
                continue
            v = getattr(n, name)
            stack.extend(x for x in (v if isinstance(v, tuple) else (v,))
                         if isinstance(x, Node))
    return False


class _Param:
    """What a call needs to know about one parameter, worked out once."""

    __slots__ = ("arg", "name", "sym", "control", "written", "scalar",
                 "window", "dtype", "tname", "dims")

    def __init__(self, a, written):
        self.arg, t = a, a.type
        self.name, self.sym = a.name.name, a.name
        self.control = is_control(t)
        self.written = a.name in written
        self.scalar = not isinstance(t, (IR.Tensor, IR.WindowType))
        self.window = is_window(t)
        if self.control:
            return
        elem = basetype(t)
        self.dtype = np.dtype(NUMPY_DTYPES[elem])
        self.tname = TYPE_NAMES[elem]
        self.dims = (() if self.scalar else
                     tuple(compile_control(h) for h in t.hi))


class CallPlan:
    """How to check the arguments of calls of one procedure.

    Built once per compiled (or interpreted) procedure: the parameters'
    kinds, dtypes, shapes and preconditions become plain Python data and
    functions, so checking a call costs microseconds, not a walk of the
    IR (a kernel of a fraction of a millisecond would otherwise spend a
    good part of its time here).
    """

    def __init__(self, proc_ir):
        self.proc = proc_ir
        self.pname = proc_ir.name
        self.names = [a.name.name for a in proc_ir.args]
        written = written_buffers(proc_ir)
        self.params = [_Param(a, written) for a in proc_ir.args]
        self.preds = [(compile_control(p), p) for p in proc_ir.preds]
        self.reads_config = any(
            _reads_config(e) for e in list(proc_ir.preds) + [
                h for a in proc_ir.args if not is_control(a.type)
                and isinstance(a.type, (IR.Tensor, IR.WindowType))
                for h in a.type.hi])
        self.reads_strides = reads_strides(proc_ir)

    def check(self, args, kwargs, *, int_bits: int = 64,
              read_config: Optional[Callable] = None) -> CheckedArgs:
        """See ``check_call_args``."""
        pname = self.pname
        if kwargs or len(args) != len(self.params):
            values = bind_call_args(self.proc, args, kwargs)
        else:
            values = args
        env: Dict[object, object] = {}
        out = list(values)
        # control arguments first: shapes and preconditions are expressions
        # over them
        for i, (p, v) in enumerate(zip(self.params, values)):
            if p.control:
                out[i] = env[p.sym] = _check_control(pname, p.arg, v,
                                                     int_bits)
        read_config = read_config or _no_config
        strides = {}
        addresses = [None] * len(out)
        for i, (p, v) in enumerate(zip(self.params, values)):
            if not p.control:
                arr = _check_data(pname, p, v, env, read_config)
                out[i] = arr
                addresses[i] = addr = arr.ctypes.data
                if addr % arr.itemsize:
                    raise _fail(pname, f"argument '{p.name}' "
                                f"{misalignment(arr, addr)}", ValueError)
                strides[p.sym] = st = tuple(s // arr.itemsize
                                            for s in arr.strides)
                if self.reads_strides and st and max(st) >= 1 << 31:
                    # a stride is a control value: 32 bits, as arguments
                    raise _fail(pname, f"argument '{p.name}' has element "
                                f"strides {st}: the procedure reads "
                                f"strides (stride(...)), which are 32-bit "
                                f"control values (at most {(1 << 31) - 1};"
                                f" its control arithmetic was checked "
                                f"assuming so)", ValueError)
        for fn, pred in self.preds:
            if not fn(env, strides, read_config):
                from .printer import expr_to_str
                raise _fail(pname, f"precondition 'assert "
                            f"{expr_to_str(pred)}' does not hold for these "
                            f"arguments", ValueError)
        _check_overlap(pname, self.params, out, addresses)
        return CheckedArgs(out, env, strides, addresses)


def check_call_args(proc_ir, args, kwargs, *, int_bits: int = 64,
                    read_config: Optional[Callable] = None) -> CheckedArgs:
    """Bind and validate the arguments of a call of ``proc_ir``.

    ``int_bits``: the width of ``int_fast32_t`` where the call runs (control
    values must fit it). ``read_config(config, field)`` gives config values
    for preconditions that read config state. Raises ``TypeError`` (wrong
    kind or dtype of value, wrong arguments) or ``ValueError`` (wrong shape,
    layout or value, violated precondition, overlapping arguments). A
    caller that checks many calls of one procedure keeps a ``CallPlan``.
    """
    return CallPlan(proc_ir).check(args, kwargs, int_bits=int_bits,
                                   read_config=read_config)


def _check_control(pname, a, v, int_bits):
    n, t = a.name.name, a.type
    if t is IR.Bool:
        if not isinstance(v, (bool, np.bool_)):
            raise _fail(pname, f"argument '{n}' must be a bool, got "
                        f"{type(v).__name__}")
        return bool(v)
    if type(v) is not int:      # (the common case skips the ABC checks)
        v = _control_int(pname, n, t, v)
    # control values are 32-bit whatever the width of int_fast32_t: where
    # it has 64 bits (x86-64 Linux), the control arithmetic of the C on
    # such values (sums, constant multiples) cannot overflow, as the
    # interpreter's exact integers do not
    bits = min(int_bits, 32)
    lim = 1 << (bits - 1)
    if not -lim <= v < lim:
        raise _fail(pname, f"argument '{n}' ({TYPE_NAMES[t]}) = {v} does "
                    f"not fit int_fast32_t (control values are {bits}-bit: "
                    f"{-lim} .. {lim - 1})", ValueError)
    if t is IR.Size and v <= 0:
        raise _fail(pname, f"argument '{n}' (size) must be positive, got {v}",
                    ValueError)
    return v


def _control_int(pname, n, t, v):
    """An integer control value given as another type (numpy integers), or
    the error for a value that is no integer."""
    tname = TYPE_NAMES[t]
    if isinstance(v, (bool, np.bool_)) or not isinstance(v,
                                                         numbers.Integral):
        raise _fail(pname, f"argument '{n}' ({tname}) must be an int, got "
                    f"{type(v).__name__}")
    return int(v)


def _scalar_from_number(pname, n, v, want):
    """A read-only data scalar given as a number: a 0-d array of ``want``."""
    if want.kind in "iu":
        if isinstance(v, (bool, np.bool_)) or \
                not isinstance(v, numbers.Integral):
            raise _fail(pname, f"argument '{n}' must be an integer or a 0-d "
                        f"or 1-element numpy array of {want}, got "
                        f"{type(v).__name__}")
        info = np.iinfo(want)
        if not info.min <= int(v) <= info.max:
            raise _fail(pname, f"argument '{n}' = {int(v)} does not fit "
                        f"{want}", ValueError)
        return np.array(int(v), dtype=want)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise _fail(pname, f"argument '{n}' must be a number or a 0-d or "
                    f"1-element numpy array of {want}, got "
                    f"{type(v).__name__}")
    # a finite number the dtype cannot hold would silently become infinity
    # (infinities and NaN themselves are values of every float type)
    try:
        x = float(v)
    except OverflowError:
        x = None
    finite_max = float(np.finfo(want).max)
    if x is None or (math.isfinite(x) and abs(x) > finite_max):
        raise _fail(pname, f"argument '{n}' = {v!r} is out of the range of "
                    f"{want} (largest finite value {finite_max:g})",
                    ValueError)
    with np.errstate(over="ignore"):  # (rounding up to the largest finite)
        return np.array(x, dtype=want)


def _check_data(pname, p, v, env, read_config=_no_config):
    n, want, tname, scalar = p.name, p.dtype, p.tname, p.scalar
    written = p.written
    if not isinstance(v, np.ndarray):
        if scalar and not written and tname == "bf16":
            # a number for a bf16: its f32, rounded to bf16 (the bits)
            from .datasem import f32_to_bf16_bits
            x = _scalar_from_number(pname, n, v, np.dtype(np.float32))
            return f32_to_bf16_bits(x)
        if scalar and not written:
            return _scalar_from_number(pname, n, v, want)
        if scalar:
            raise _fail(pname, f"argument '{n}' must be a 0-d or 1-element "
                        f"numpy array of {want}: the procedure writes it, "
                        f"and the array is updated in place (got "
                        f"{type(v).__name__})")
        raise _fail(pname, f"argument '{n}' must be a numpy array of {want}, "
                    f"got {type(v).__name__}")
    if v.dtype != want:
        hint = (" (numpy has no bf16: an array of the bits, e.g. "
                "exo_hl.core_ir.datasem.f32_to_bf16_bits(x))"
                if tname == "bf16" else "")
        raise _fail(pname, f"argument '{n}' ({tname}) must have dtype {want},"
                    f" got {v.dtype}{hint}")
    if written and not v.flags.writeable:
        raise _fail(pname, f"argument '{n}' is written by the procedure but "
                    f"the array is read-only", ValueError)
    if scalar:
        if v.size != 1:
            raise _fail(pname, f"argument '{n}' is a scalar: pass a 0-d or "
                        f"1-element array, got shape {v.shape}", ValueError)
        return v
    dims = tuple(h(env, {}, read_config) for h in p.dims)
    if v.shape != dims:
        from .printer import expr_to_str
        text = ", ".join(expr_to_str(h) for h in p.arg.type.hi)
        raise _fail(pname, f"argument '{n}' must have shape {dims} "
                    f"([{text}]), got {v.shape}", ValueError)
    if not p.window:
        if not v.flags.c_contiguous:
            raise _fail(pname, f"argument '{n}' is a dense tensor: pass a "
                        f"C-contiguous (row-major) array, e.g. "
                        f"np.ascontiguousarray(...), or declare a window "
                        f"parameter", ValueError)
        dense = dense_strides(v)
        if v.strides != dense:
            # numpy calls an array with a size-1 dimension of any stride
            # (x[None, :] has 0) C-contiguous; the procedure sees the dense
            # row-major strides, as the C does
            v = np.lib.stride_tricks.as_strided(
                v, v.shape, dense, writeable=v.flags.writeable)
    elif any(s % v.itemsize or s <= 0 for s in v.strides):
        raise _fail(pname, f"argument '{n}' (a window) has strides "
                    f"{v.strides}: they must be positive multiples of the "
                    f"element size (the procedure was checked assuming "
                    f"so; a broadcast or np.newaxis view has stride 0: pass "
                    f"np.ascontiguousarray(...))", ValueError)
    elif written and self_overlaps(v):
        raise _fail(pname, f"argument '{n}' (a written window) has strides "
                    f"{v.strides} for shape {v.shape}: two of its indices "
                    f"name one element (the procedure, its rewrites and "
                    f"its parallel loops were checked assuming distinct "
                    f"indices are distinct locations; pass "
                    f"np.ascontiguousarray(...) or a view of distinct "
                    f"elements)", ValueError)
    return v


def _check_overlap(pname, params, values, addresses):
    """Buffers one of which is written must not share memory: the
    procedure was checked (and is compiled, with ``restrict``) assuming its
    arguments do not alias. Disjoint address ranges settle most pairs
    without numpy's exact (and slower) test."""
    bufs = [(p, v, byte_span(v, lo))
            for p, v, lo in zip(params, values, addresses) if not p.control]
    for i, (a, x, sx) in enumerate(bufs):
        for b, y, sy in bufs[i + 1:]:
            if not (a.written or b.written):
                continue
            if sx is None or sy is None or sx[1] < sy[0] or sy[1] < sx[0]:
                continue
            try:
                overlap = np.shares_memory(x, y, max_work=10**5)
            except RuntimeError:  # numpy gave up (TooHardError): not
                overlap = True    # proven apart, so refused
            if overlap:
                raise _fail(pname, f"arguments '{a.name}' and "
                            f"'{b.name}' overlap in memory (or could not "
                            f"be proven apart), but one of them is written "
                            f"(pass distinct arrays)", ValueError)
