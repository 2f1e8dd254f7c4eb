"""Extern functions on data (``select``, ``relu``, ``sqrt``...).

An extern bundles three things a user may define for a new function: its type
rule, its C emission, and its interpreter semantics.
"""
from __future__ import annotations

import math

import numpy as np


class Extern:
    def __init__(self, name, nargs, c_emit, interpret, typecheck=None,
                 c_global=""):
        self._name = name
        self.nargs = nargs
        self._c_emit = c_emit          # (list of C arg strings, C type) -> str
        self._interpret = interpret    # python values -> python value
        self._typecheck = typecheck    # list of arg types -> result type
        self._c_global = c_global

    def name(self):
        return self._name

    def typecheck(self, arg_types):
        """The result type, or raise TypeError with a user-facing reason."""
        if len(arg_types) != self.nargs:
            raise TypeError(f"{self._name} expects {self.nargs} arguments, "
                            f"got {len(arg_types)}")
        if self._typecheck is not None:
            return self._typecheck(arg_types)
        from .types import is_real_scalar
        for t in arg_types:
            if not is_real_scalar(t):
                raise TypeError(f"{self._name} takes data scalars")
        return arg_types[0]

    @property
    def own_arg_types(self) -> bool:
        """True when a user type rule governs the arguments: each argument
        is then its own expression for precision purposes (it may differ
        from the result's precision); otherwise arguments share it."""
        return self._typecheck is not None

    def compile(self, args, c_type):
        return self._c_emit(args, c_type)

    def interpret(self, args):
        return self._interpret(*args)

    def c_global(self, c_type=None):
        """C text emitted once per file before the code using the extern:
        ``c_global`` itself, or, when it is a function, its text for the
        C type the extern computes in (a helper per type)."""
        if callable(self._c_global):
            return self._c_global(c_type)
        return self._c_global

    def __repr__(self):
        return f"<extern {self._name}>"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def _is_float(c_type):
    return c_type in ("float", "double", "_Float16")


def _fmath(fn, exact=False):
    """C text of a libm function. ``exact`` (``sqrt``, ``fabs``): IEEE
    rounds the result correctly in every precision, so ``sqrtf`` is used on
    floats. The others (``sin``, ``cos``, ``exp``) are not correctly rounded
    by every libm, and ``sinf`` need not round like ``sin``: they compute in
    ``double`` (C's ``sin``, the function ``math.sin`` calls in the
    interpreter) and round once to the result type, so C and ``interpret()``
    agree bit for bit."""
    def emit(args, c_type):
        if c_type == "double":
            return f"{fn}({args[0]})"
        if c_type == "float":
            return (f"{fn}f({args[0]})" if exact
                    else f"(float){fn}((double)({args[0]}))")
        if c_type == "_Float16":
            return f"(_Float16){fn}((double)({args[0]}))"
        # integer data compute in 32 bits: back with the float -> int
        # conversion of docs/semantics.md (C's cast is undefined when the
        # value is out of range)
        return f"exo_f64_to_i32({fn}((double)({args[0]})))"
    return emit


def _libm(fn):
    """The interpreter's side of a non-exact ``_fmath`` function: the C
    library's ``double`` function (``math``), then rounded to the
    expression's type by the caller; Python raises where C returns an
    infinity (overflow) or a NaN (domain error)."""
    def f(x):
        try:
            return fn(float(x))
        except OverflowError:
            return math.inf
        except ValueError:
            return math.nan
    return f


_TYPE_TAGS = {"float": "f32", "double": "f64", "_Float16": "f16",
              "int32_t": "i32", "int16_t": "i16", "uint16_t": "ui16",
              "int8_t": "i8", "uint8_t": "ui8"}


def _helper_name(base, c_type):
    tag = _TYPE_TAGS.get(c_type) or "".join(
        ch if ch.isalnum() else "_" for ch in c_type.replace("_t", ""))
    return f"exo_{base}_{tag}"


def _helper(base, nargs, body):
    """(c_emit, c_global) of an extern printed as a call of a ``static
    inline`` helper, one per C type: each argument's text appears once, so
    the C of nested calls (a max of 9 values) is linear in their size, and
    the comparisons happen on the helper's parameters (of the evaluation
    type), where C compilers see no always-true comparison of a narrow
    integer. ``body(c_type)``: the C expression of the result from the
    parameters ``a``, ``b``..."""
    params = "abcd"[:nargs]

    def emit(args, c_type):
        return f"{_helper_name(base, c_type)}({', '.join(args)})"

    def c_global(c_type):
        if c_type is None:
            return ""
        ps = ", ".join(f"{c_type} {p}" for p in params)
        return (f"static inline {c_type} {_helper_name(base, c_type)}({ps}) "
                f"{{\n    return {body(c_type)};\n}}\n")
    return emit, c_global


def _minmax(op):
    """``fmin`` (``op`` '<') or ``fmax`` ('>'). On floats a NaN argument is
    ignored (the other is the result, as C's ``fmin``) and of two zeros
    ``fmin`` gives -0 and ``fmax`` +0, in either order (C's ``fminf`` may
    return either zero, depending on the code around it): one expression,
    the same for every float type, that the interpreter follows exactly."""
    def body(c_type):
        if not _is_float(c_type):
            return f"a {op} b ? a : b"
        neg = "" if op == "<" else "!"
        return f"(b != b || a {op} b || (a == b && {neg}signbit(a))) ? a : b"
    return _helper("fmin" if op == "<" else "fmax", 2, body)


select = Extern(
    "select", 4,
    lambda a, t: f"(({a[0]}) < ({a[1]}) ? ({a[2]}) : ({a[3]}))",
    lambda x, v, y, z: y if x < v else z)
relu = Extern(
    "relu", 1, _helper("relu", 1, lambda t: "a > 0 ? a : 0")[0],
    # C's ``x > 0 ? x : 0``: -0.0 and NaN give +0 of x's type
    lambda x: x if x > 0 else type(x)(0),
    c_global=_helper("relu", 1, lambda t: "a > 0 ? a : 0")[1])
sin = Extern("sin", 1, _fmath("sin"), _libm(math.sin))
cos = Extern("cos", 1, _fmath("cos"), _libm(math.cos))
sqrt = Extern("sqrt", 1, _fmath("sqrt", exact=True),
              lambda x: np.sqrt(x))
fabs = Extern("fabs", 1, _fmath("fabs", exact=True),
              lambda x: np.fabs(x))
exp = Extern("exp", 1, _fmath("exp"), _libm(math.exp))


def _min_max(smaller):
    """The interpreter's ``fmin`` (``smaller`` True) or ``fmax``: the rule
    ``_minmax`` prints (a NaN ignored, -0 below +0), unlike Python's
    ``min``/``max``, which depend on the argument order."""
    def f(x, y):
        if y != y:
            return x
        if x != x:
            return y
        if x != y:
            return x if (x < y) == smaller else y
        return x if bool(np.signbit(x)) == smaller else y
    return f


fmin = Extern("fmin", 2, _minmax("<")[0], _min_max(True),
              c_global=_minmax("<")[1])
fmax = Extern("fmax", 2, _minmax(">")[0], _min_max(False),
              c_global=_minmax(">")[1])

BUILTIN_EXTERNS = {e.name(): e for e in
                   (select, relu, sin, cos, sqrt, fabs, exp, fmin, fmax)}
