"""Checking the Python arguments of a procedure call (docs/api.md §5).

``p.interpret(...)`` and the callable returned by ``p.compile()`` accept
exactly the same argument forms and reject everything else with the same
message, because both go through ``check_call_args``:

- control arguments (``size index int stride``): a Python or numpy integer
  (not a bool) that fits the C ``int_fast32_t``; ``size`` must be positive;
  ``bool``: a Python or numpy bool;
- tensors and windows: a numpy array of the element's dtype and of the shape
  the signature gives (tensors dense row-major; windows any non-negative
  whole-element strides); written arguments must be writeable;
- data scalars (``x: f32``): a 0-d or 1-element numpy array of the dtype
  (updated in place), or, when the procedure never writes it, a Python or
  numpy number converted to the dtype;
- every precondition must hold, and two pointer arguments one of which is
  written must not overlap in memory.
"""
from __future__ import annotations

import math
import numbers
from typing import Callable, Dict, Optional

import numpy as np

from .buffers import written_buffers
from .nodes import IR
from .operators import CONTROL_EVAL
from .types import (NUMPY_DTYPES, TYPE_NAMES, basetype, is_control,
                    is_window)


class CheckedArgs:
    """The arguments of one call, validated and converted.

    ``values[i]`` is the value of the i-th parameter: an ``int``/``bool``
    for control parameters, a numpy array for buffers and data scalars
    (a 0-d or 1-element array for the latter). ``env`` maps control
    parameter symbols to their values, ``strides`` buffer symbols to their
    element strides.
    """

    __slots__ = ("values", "env", "strides")

    def __init__(self, values, env, strides):
        self.values = values
        self.env = env
        self.strides = strides


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


def check_call_args(proc_ir, args, kwargs, *, int_bits: int = 64,
                    read_config: Optional[Callable] = None) -> CheckedArgs:
    """Bind and validate the arguments of a call of ``proc_ir``.

    ``int_bits``: the width of ``int_fast32_t`` where the call runs (control
    values must fit it). ``read_config(config, field)`` gives config values
    for preconditions that read config state. Raises ``TypeError`` (wrong
    kind or dtype of value, wrong arguments) or ``ValueError`` (wrong shape,
    layout or value, violated precondition, overlapping arguments).
    """
    from .printer import expr_to_str
    pname = proc_ir.name
    values = bind_call_args(proc_ir, args, kwargs)
    written = written_buffers(proc_ir)
    env: Dict[object, object] = {}
    out = list(values)
    # control arguments first: shapes and preconditions are expressions
    # over them
    for i, (a, v) in enumerate(zip(proc_ir.args, values)):
        if is_control(a.type):
            out[i] = env[a.name] = _check_control(pname, a, v, int_bits)
    read_config = read_config or _no_config
    strides = {}
    for i, (a, v) in enumerate(zip(proc_ir.args, values)):
        if not is_control(a.type):
            arr = _check_data(pname, a, v, a.name in written, env,
                              read_config)
            out[i] = arr
            strides[a.name] = tuple(s // arr.itemsize for s in arr.strides)
    for pred in proc_ir.preds:
        if not eval_control(pred, env, strides, read_config):
            raise _fail(pname, f"precondition 'assert {expr_to_str(pred)}' "
                        f"does not hold for these arguments", ValueError)
    _check_overlap(pname, proc_ir, out, written)
    return CheckedArgs(out, env, strides)


def _check_control(pname, a, v, int_bits):
    n, t = a.name.name, a.type
    if t is IR.Bool:
        if not isinstance(v, (bool, np.bool_)):
            raise _fail(pname, f"argument '{n}' must be a bool, got "
                        f"{type(v).__name__}")
        return bool(v)
    tname = TYPE_NAMES[t]
    if isinstance(v, (bool, np.bool_)) or not isinstance(v,
                                                         numbers.Integral):
        raise _fail(pname, f"argument '{n}' ({tname}) must be an int, got "
                    f"{type(v).__name__}")
    v = int(v)
    lim = 1 << (int_bits - 1)
    if not -lim <= v < lim:
        raise _fail(pname, f"argument '{n}' ({tname}) = {v} does not fit "
                    f"int_fast32_t ({int_bits} bits)", ValueError)
    if t is IR.Size and v <= 0:
        raise _fail(pname, f"argument '{n}' (size) must be positive, got {v}",
                    ValueError)
    return v


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


def _check_data(pname, a, v, written, env, read_config=_no_config):
    n, t = a.name.name, a.type
    elem = basetype(t)
    want = np.dtype(NUMPY_DTYPES[elem])
    tname = TYPE_NAMES[elem]
    scalar = not isinstance(t, (IR.Tensor, IR.WindowType))
    if not isinstance(v, np.ndarray):
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
        raise _fail(pname, f"argument '{n}' ({tname}) must have dtype {want},"
                    f" got {v.dtype}")
    if written and not v.flags.writeable:
        raise _fail(pname, f"argument '{n}' is written by the procedure but "
                    f"the array is read-only", ValueError)
    if scalar:
        if v.size != 1:
            raise _fail(pname, f"argument '{n}' is a scalar: pass a 0-d or "
                        f"1-element array, got shape {v.shape}", ValueError)
        return v
    dims = tuple(eval_control(h, env, {}, read_config) for h in t.hi)
    if v.shape != dims:
        from .printer import expr_to_str
        text = ", ".join(expr_to_str(h) for h in t.hi)
        raise _fail(pname, f"argument '{n}' must have shape {dims} "
                    f"([{text}]), got {v.shape}", ValueError)
    if not is_window(t):
        if not v.flags.c_contiguous:
            raise _fail(pname, f"argument '{n}' is a dense tensor: pass a "
                        f"C-contiguous (row-major) array, e.g. "
                        f"np.ascontiguousarray(...), or declare a window "
                        f"parameter", ValueError)
    elif any(s % v.itemsize or s < 0 for s in v.strides):
        raise _fail(pname, f"argument '{n}' (a window) has strides "
                    f"{v.strides}: they must be non-negative multiples of "
                    f"the element size", ValueError)
    return v


def _check_overlap(pname, proc_ir, values, written):
    """Buffers one of which is written must not share memory: the
    procedure was checked (and is compiled, with ``restrict``) assuming its
    arguments do not alias."""
    bufs = [(a, v) for a, v in zip(proc_ir.args, values)
            if not is_control(a.type)]
    for i, (a, x) in enumerate(bufs):
        for b, y in bufs[i + 1:]:
            if a.name not in written and b.name not in written:
                continue
            try:
                overlap = np.shares_memory(x, y, max_work=10**5)
            except RuntimeError:  # numpy gave up (TooHardError)
                overlap = False
            if overlap:
                raise _fail(pname, f"arguments '{a.name.name}' and "
                            f"'{b.name.name}' overlap in memory, but one of "
                            f"them is written (pass distinct arrays)",
                            ValueError)
