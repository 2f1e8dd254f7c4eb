"""The type lattice: data types, control types, tensors and windows.

Types are IR nodes (``IR.F32``, ``IR.Tensor(...)``...); this module holds the
small questions every pass asks of them.
"""
from __future__ import annotations

from .nodes import IR

#: data (numeric) scalar types; ``Num`` is the generic real ``R``
DATA_TYPES = (IR.Num, IR.F16, IR.BF16, IR.F32, IR.F64, IR.I8, IR.UI8, IR.I16,
              IR.UI16, IR.I32)
#: control scalar types
CONTROL_TYPES = (IR.Bool, IR.Int, IR.Index, IR.Size, IR.Stride)
INT_CONTROL = (IR.Int, IR.Index, IR.Size)

#: surface names, as written in procedures and printed back
TYPE_NAMES = {
    IR.Num: "R", IR.F16: "f16", IR.BF16: "bf16", IR.F32: "f32",
    IR.F64: "f64", IR.I8: "i8", IR.UI8: "ui8", IR.I16: "i16",
    IR.UI16: "ui16", IR.I32: "i32",
    IR.Bool: "bool", IR.Int: "int", IR.Index: "index", IR.Size: "size",
    IR.Stride: "stride",
}
TYPE_BY_NAME = {v: k for k, v in TYPE_NAMES.items()}

#: C spellings of element types (docs/api.md §5); a bf16 is stored as the
#: top 16 bits of an f32, in a uint16_t (C has no portable bf16 type)
C_TYPES = {
    IR.Num: "float", IR.F16: "_Float16", IR.BF16: "uint16_t",
    IR.F32: "float", IR.F64: "double",
    IR.I8: "int8_t", IR.UI8: "uint8_t", IR.I16: "int16_t",
    IR.UI16: "uint16_t", IR.I32: "int32_t", IR.Bool: "bool",
    IR.Int: "int_fast32_t", IR.Index: "int_fast32_t",
    IR.Size: "int_fast32_t", IR.Stride: "int_fast32_t",
}

#: numpy dtype names of element types (numpy has no bf16: its bits, uint16)
NUMPY_DTYPES = {
    IR.Num: "float32", IR.F16: "float16", IR.BF16: "uint16",
    IR.F32: "float32", IR.F64: "float64", IR.I8: "int8", IR.UI8: "uint8", IR.I16: "int16",
    IR.UI16: "uint16", IR.I32: "int32",
}


def is_data(t) -> bool:
    """A numeric scalar, tensor or window of numbers."""
    return basetype(t) in DATA_TYPES


def is_real_scalar(t) -> bool:
    return t in DATA_TYPES


def is_control(t) -> bool:
    return t in CONTROL_TYPES


def is_int_control(t) -> bool:
    return t in INT_CONTROL


def is_indexable(t) -> bool:
    """A stride is an integer too, but only usable in comparisons/asserts."""
    return t in INT_CONTROL or t is IR.Stride


def is_tensor_or_window(t) -> bool:
    return isinstance(t, (IR.Tensor, IR.WindowType))


def is_window(t) -> bool:
    return (isinstance(t, IR.WindowType)
            or (isinstance(t, IR.Tensor) and t.is_window))


def as_tensor(t):
    """The tensor type a value of type ``t`` behaves as."""
    return t.as_tensor if isinstance(t, IR.WindowType) else t


def basetype(t):
    """The element type of a tensor/window, or the type itself."""
    if isinstance(t, IR.WindowType):
        t = t.as_tensor
    if isinstance(t, IR.Tensor):
        return t.type
    return t


def shape(t) -> tuple:
    """The size expressions of a tensor/window type; () for scalars."""
    t = as_tensor(t)
    return t.hi if isinstance(t, IR.Tensor) else ()


def type_name(t) -> str:
    return TYPE_NAMES.get(basetype(t), type(t).__name__)
