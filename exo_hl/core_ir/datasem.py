"""The meaning of data arithmetic (docs/semantics.md), in one place.

The interpreter evaluates data expressions with the functions below; the C
backend (``codegen_c/arith.py``) prints C that computes the same values,
choosing types with the same ``eval_type``. In short:

- Every data (sub)expression is computed in one *evaluation type*: ``I32``
  when all its typed leaves are integers (i8 ... i32 values are all
  computed as 32-bit integers, as C promotes them), else the widest float
  among them (``f16 < f32 < f64``; integer operands are converted to it).
  An expression of literals only takes the type of its context: the
  enclosing operation, or the target of the assignment.
- Integer arithmetic is 32-bit two's complement: ``+ - *`` and unary ``-``
  wrap around modulo 2**32; ``/`` truncates toward zero and ``%`` has the
  sign of the dividend (``a == (a / b) * b + a % b``); ``x / 0 == 0`` and
  ``x % 0 == x``; ``INT32_MIN / -1 == INT32_MIN`` and ``INT32_MIN % -1 == 0``.
- Float arithmetic is IEEE in the evaluation type, each operation rounded
  to it; ``%`` is ``fmod`` (exact; the sign of the dividend; ``x % 0`` is
  NaN).
- Conversions (a value stored into a location of another type, an operand
  promoted): integer -> integer wraps modulo 2**bits; integer -> float and
  float -> float round to nearest (overflow gives infinity); float ->
  integer truncates toward zero and saturates to the target's range, NaN
  giving 0. A literal in an integer evaluation type is converted from the
  real number it denotes by that same float -> integer rule.
- ``bf16`` is a storage type (the top 16 bits of an f32): its values are
  computed as ``f32`` (its evaluation type is ``f32``; reading one is
  exact), and a value stored into a ``bf16`` is first converted to
  ``f32`` (by the rules above), then to bf16: NaN stays NaN (quieted, its
  sign and top payload bits kept, as ``vcvtne2ps2bf16`` does), anything
  else rounds to nearest even (denormals too; overflowing to infinity), so
  copying a bf16 into a bf16 keeps its bits. Values of type ``bf16`` are
  numpy float32 scalars holding a bf16 value; memory holds their bits.
- ``x += e`` means ``x = x + e``: the addition is an operation like any other
  (evaluated in the join of x's type and e's), then converted to x's type.
"""
from __future__ import annotations

import math

import numpy as np

from .nodes import IR

__all__ = ["INT_TYPES", "FLOAT_TYPES", "is_int", "is_float", "int_range",
           "join", "domain", "default_leaf", "own_type", "eval_type",
           "ext_arg_context", "wrap", "float_to_int", "literal", "convert",
           "from_extern", "binop", "neg", "is_literal_only", "const_eval",
           "same_value", "holds_exactly", "f32_to_bf16_bits", "bf16_bits_to_f32",
           "round_bf16"]

INT_TYPES = (IR.I8, IR.UI8, IR.I16, IR.UI16, IR.I32)
FLOAT_TYPES = (IR.F16, IR.BF16, IR.F32, IR.F64)

_INT_RANGE = {IR.I8: (-2**7, 2**7 - 1), IR.UI8: (0, 2**8 - 1),
              IR.I16: (-2**15, 2**15 - 1), IR.UI16: (0, 2**16 - 1),
              IR.I32: (-2**31, 2**31 - 1)}
_FLOAT_RANK = {IR.F16: 0, IR.F32: 1, IR.F64: 2}   # evaluation types
_NP = {IR.F16: np.float16, IR.F32: np.float32, IR.F64: np.float64}
I32_MIN, I32_MAX = _INT_RANGE[IR.I32]


def is_int(t) -> bool:
    return t in _INT_RANGE


def is_float(t) -> bool:
    return t in _FLOAT_RANK or t is IR.BF16


def int_range(t):
    """(min, max) of an integer data type."""
    return _INT_RANGE[t]


#: significand bits of each float type: it holds every integer of at most
#: this many bits exactly
_SIGNIFICAND = {IR.F16: 11, IR.BF16: 8, IR.F32: 24, IR.F64: 53}
#: (narrower, wider) float types: every value of the first is one of the
#: second (signed zeros, infinities and NaN included, up to a NaN's payload)
_FLOAT_WIDER = ((IR.F16, IR.F32), (IR.F16, IR.F64), (IR.BF16, IR.F32),
                (IR.BF16, IR.F64), (IR.F32, IR.F64))


def holds_exactly(vt, dst) -> bool:
    """Whether every value of type ``vt`` is a value of type ``dst``, so
    that converting one to ``dst`` (and back) keeps it: an integer range
    inside another, integers inside a float's significand, a float inside
    a wider one. The validator drops such conversions (a round trip
    through a wider temporary is the identity); f16 and bf16 hold
    different values, so neither holds the other."""
    if vt is dst:
        return True
    if is_int(vt):
        lo, hi = _INT_RANGE[vt]
        if is_int(dst):
            dlo, dhi = _INT_RANGE[dst]
            return dlo <= lo and hi <= dhi
        bound = 2 ** _SIGNIFICAND[dst]
        return -bound <= lo and hi <= bound
    if is_int(dst):
        return False
    return any(vt is a and dst is b for a, b in _FLOAT_WIDER)


# ----------------------------------------------------------------------------
# evaluation types


def join(a, b):
    """The evaluation type of an operation on evaluation types a and b
    (None: no typed operand)."""
    a = IR.F32 if a is IR.BF16 else a
    b = IR.F32 if b is IR.BF16 else b
    if a is None:
        return b
    if b is None:
        return a
    if is_float(a) or is_float(b):
        fa = a if is_float(a) else None
        fb = b if is_float(b) else None
        if fa is None or fb is None:
            return fa or fb
        return fa if _FLOAT_RANK[fa] >= _FLOAT_RANK[fb] else fb
    return IR.I32


def domain(t):
    """The evaluation type of values of type ``t`` (bf16 computes in
    f32)."""
    if t is IR.BF16:
        return IR.F32
    return IR.I32 if is_int(t) else t


def default_leaf(e):
    """The data type of a leaf (``R`` compiles as f32)."""
    t = e.type
    return IR.F32 if t is IR.Num else t


def own_type(e, leaf=default_leaf):
    """The evaluation type ``e``'s typed leaves give it, or None when it is
    made of literals only. ``leaf`` maps a read (or config read) to its data
    type (the interpreter resolves ``R`` to the precision of the buffer).
    An extern with its own type rule is a leaf of its result type."""
    if isinstance(e, IR.Const):
        return None
    if isinstance(e, (IR.Read, IR.ReadConfig)):
        return domain(leaf(e))
    if isinstance(e, IR.USub):
        return own_type(e.arg, leaf)
    if isinstance(e, IR.BinOp):
        return join(own_type(e.lhs, leaf), own_type(e.rhs, leaf))
    if isinstance(e, IR.Extern):
        if e.f.own_arg_types:
            t = e.type
            return None if t is IR.Num else domain(t)
        out = None
        for a in e.args:
            out = join(out, own_type(a, leaf))
        return out
    return None


def eval_type(e, ctx, leaf=default_leaf):
    """The evaluation type of ``e`` in context ``ctx`` (the evaluation type
    of the enclosing operation, or the type of the assignment's target)."""
    t = own_type(e, leaf)
    return domain(ctx if t is None else t)


def ext_arg_context(a, leaf=default_leaf):
    """The context of an argument of an extern with its own type rule: the
    argument's own evaluation type, else its declared type (``R``: f32)."""
    t = own_type(a, leaf)
    if t is None:
        t = IR.F32 if a.type is IR.Num else a.type
    return domain(t)


# ----------------------------------------------------------------------------
# values: Python ints for integer types, numpy scalars for float types


def wrap(v: int, t) -> int:
    """An integer reduced modulo 2**bits into the range of ``t``."""
    lo, hi = _INT_RANGE[t]
    return (v - lo) % (hi - lo + 1) + lo


def float_to_int(x, t) -> int:
    """Float -> integer type ``t``: truncate toward zero, saturate, NaN
    gives 0."""
    x = float(x)
    lo, hi = _INT_RANGE[t]
    if math.isnan(x):
        return 0
    if x >= hi + 1:
        return hi
    if x <= lo - 1:
        return lo
    return int(x)


def f32_to_bf16_bits(x) -> np.ndarray:
    """The bf16 bits (uint16) of f32 value(s) ``x``: NaN -> quiet NaN
    (sign and top payload kept, as ``vcvtne2ps2bf16``), else round to
    nearest even, denormals included (overflow gives infinity). (The
    instruction also reads a denormal f32 as zero; this conversion does
    not, so that a bf16 copied into a bf16 keeps its value.)"""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    out = np.where(nan, (u >> 16) | 0x40, rounded)
    return out.astype(np.uint16)


def bf16_bits_to_f32(h) -> np.ndarray:
    """The f32 value(s) of bf16 bits ``h`` (exact: the bits on top)."""
    return (np.asarray(h, np.uint16).astype(np.uint32) << 16).view(
        np.float32)


def round_bf16(x) -> np.float32:
    """The f32 value ``x`` rounded to bf16 (an f32 holding a bf16)."""
    return bf16_bits_to_f32(f32_to_bf16_bits(np.float32(x)))[()]


def literal(v, t):
    """The value of the literal ``v`` (a real number) in evaluation type
    ``t``."""
    if is_int(t):
        if isinstance(v, (bool, int)):
            return min(max(int(v), I32_MIN), I32_MAX)
        return float_to_int(v, IR.I32)
    with np.errstate(over="ignore"):   # out of range: infinity
        return _NP[t](v)


def convert(v, src, dst):
    """The value ``v`` of evaluation type ``src`` converted to type ``dst``
    (a data type or an evaluation type). To bf16: via f32 (the value of
    a bf16 is an f32 holding a bf16 value)."""
    if dst is IR.BF16:
        return round_bf16(convert(v, src, IR.F32))
    if src is IR.BF16:
        return convert(np.float32(v), IR.F32, dst)
    if is_int(src):
        if is_int(dst):
            return wrap(int(v), dst)
        return _NP[dst](int(v))
    if is_int(dst):
        return float_to_int(v, dst)
    return v if src is dst else _NP[dst](v)


def from_extern(v, t):
    """An extern's Python result as a value of evaluation type ``t``."""
    if is_int(t):
        if isinstance(v, (bool, np.bool_)):
            return int(v)
        if isinstance(v, (int, np.integer)):
            return wrap(int(v), IR.I32)
        return float_to_int(v, IR.I32)
    return _NP[t](v)


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def binop(op, a, b, t):
    """``a op b`` for operands of evaluation type ``t``."""
    if is_int(t):
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op == "/":
            r = 0 if b == 0 else _tdiv(a, b)
        elif op == "%":
            r = a if b == 0 else a - _tdiv(a, b) * b
        else:
            raise ValueError(f"no data operator {op!r}")
        return wrap(r, IR.I32)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b
    if op == "%":
        return np.fmod(a, b)
    raise ValueError(f"no data operator {op!r}")


def neg(a, t):
    return wrap(-a, IR.I32) if is_int(t) else -a


# ----------------------------------------------------------------------------
# expressions of literals only: their value depends on their context


def is_literal_only(e, leaf=default_leaf) -> bool:
    """``e`` is a data expression made of literals (and externs of them)
    only: it has no evaluation type of its own and takes its context's."""
    return own_type(e, leaf) is None


def const_eval(e, t, leaf=default_leaf):
    """The value of the literal-only data expression ``e`` computed in
    context ``t`` (an evaluation type), exactly as ``interpret()`` computes
    it: ``2.5 + 2.5`` is 4 in ``i32`` and 5 in ``f32``, ``16777217.0 -
    1.0`` is 16777215 in ``f32`` and 16777216 in ``f64``. None when ``e``
    is not made of literals only."""
    if not is_literal_only(e, leaf):
        return None
    with np.errstate(all="ignore"):
        return _const_eval(e, t, leaf)


def _const_eval(e, ctx, leaf):
    t = eval_type(e, ctx, leaf)
    if isinstance(e, IR.Const):
        return literal(e.val, t)
    if isinstance(e, IR.USub):
        return neg(_operand(e.arg, t, leaf), t)
    if isinstance(e, IR.BinOp):
        return binop(e.op, _operand(e.lhs, t, leaf), _operand(e.rhs, t, leaf),
                     t)
    if isinstance(e, IR.Extern):
        if e.f.own_arg_types:
            args = [_const_eval(a, ext_arg_context(a, leaf), leaf)
                    for a in e.args]
        else:
            args = [_operand(a, t, leaf) for a in e.args]
        return from_extern(e.f.interpret(args), t)
    raise ValueError(f"not a literal-only data expression: {e!r}")


def _operand(e, t, leaf):
    te = eval_type(e, t, leaf)
    v = _const_eval(e, t, leaf)
    return v if te is t else convert(v, te, t)


def same_value(a, b) -> bool:
    """Two values of evaluation or data types are the same value: equal
    integers, or floats of one precision with equal bits (``-0.0`` is not
    ``0.0``; a NaN is itself, with its payload)."""
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return int(a) == int(b)
    if not (isinstance(a, np.floating) and isinstance(b, np.floating)):
        return False
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()
