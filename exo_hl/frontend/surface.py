"""The Python-level names users write inside procedures.

These objects are markers: the frontend reads the *source* of a procedure,
and when it resolves a name in the defining scope it recognises these objects
by identity. They are never evaluated as real Python computations (the
annotations stay strings thanks to ``from __future__ import annotations``).
"""
from __future__ import annotations

from ..core_ir.nodes import IR
from ..core_ir.operators import LOOP_KINDS


class TypeMarker:
    """A type name usable in annotations: ``f32``, ``size``, ``R``...

    Data types: ``R`` (any real, compiled as ``float``), ``f16``, ``bf16``
    (stored as the top half of an f32, computed as f32), ``f32``, ``f64``,
    ``i8``, ``ui8``, ``i16``, ``ui16``, ``i32``. Control types:
    ``size`` (a positive integer argument), ``index`` (any integer),
    ``stride`` (a buffer's stride). ``T[n, m]`` is a tensor, ``[T][n]`` a
    window (a view with strides), ``@ MEM`` names its memory.

    >>> @proc
    ... def axpy(n: size, a: f32, x: f32[n], y: [f32][n] @ DRAM):
    ...     for i in seq(0, n):
    ...         y[i] += a * x[i]
    """

    __slots__ = ("ir_type", "_name")

    def __init__(self, name, ir_type):
        self._name = name
        self.ir_type = ir_type

    def __repr__(self):
        return self._name

    def __getitem__(self, item):  # so f32[n] is harmless if ever evaluated
        return self


class LoopMarker:
    """``seq`` / ``par`` / ``par_dynamic``: the loop constructors of ``for
    i in seq(lo, hi)``.

    ``seq`` runs the iterations in order; ``par`` lets them run in parallel
    (OpenMP) and is accepted only when they provably do not race;
    ``par_dynamic`` is ``par`` whose threads take the iterations one at a
    time in C instead of fixed blocks (docs/api.md, section 6).

    >>> @proc
    ... def scale(n: size, x: f32[n]):
    ...     for i in par(0, n):             # or seq(0, n)
    ...         x[i] = 2.0 * x[i]
    """

    __slots__ = ("mode", "_name")

    def __init__(self, name, mode):
        self._name = name
        self.mode = mode

    def __repr__(self):
        return self._name

    def __call__(self, *args):
        raise TypeError(f"{self._name}() is only meaningful inside a @proc")


class StrideMarker(TypeMarker):
    """``stride`` is a control type and the ``stride(A, d)`` expression.

    >>> @instr("{dst_data} = _mm256_loadu_ps(&{src_data});")
    ... def load8(dst: [f32][8] @ AVX2, src: [f32][8] @ DRAM):
    ...     assert stride(src, 0) == 1      # the elements are contiguous
    ...     for i in seq(0, 8):
    ...         dst[i] = src[i]
    """

    __slots__ = ()

    def __call__(self, *args):
        raise TypeError("stride() is only meaningful inside a @proc")


R = TypeMarker("R", IR.Num)
f16 = TypeMarker("f16", IR.F16)
bf16 = TypeMarker("bf16", IR.BF16)
f32 = TypeMarker("f32", IR.F32)
f64 = TypeMarker("f64", IR.F64)
i8 = TypeMarker("i8", IR.I8)
ui8 = TypeMarker("ui8", IR.UI8)
i16 = TypeMarker("i16", IR.I16)
ui16 = TypeMarker("ui16", IR.UI16)
i32 = TypeMarker("i32", IR.I32)
size = TypeMarker("size", IR.Size)
index = TypeMarker("index", IR.Index)
stride = StrideMarker("stride", IR.Stride)
seq = LoopMarker("seq", LOOP_KINDS["seq"])
par = LoopMarker("par", LOOP_KINDS["par"])
par_dynamic = LoopMarker("par_dynamic", LOOP_KINDS["par_dynamic"])

#: markers by their canonical spelling; ``bool`` and ``int`` are read by name
TYPE_MARKERS = {m._name: m for m in (R, f16, bf16, f32, f64, i8, ui8, i16,
                                     ui16, i32, size, index, stride)}
