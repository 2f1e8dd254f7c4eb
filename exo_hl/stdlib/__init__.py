"""A standard library of scheduling compositions.

Ordinary Python functions over ``Procedure``s, written with the public API
only (``Procedure`` methods, cursors, patterns): every step they take is a
checked primitive, so a composition is exactly as safe as its steps, and a
refused step raises ``SchedulingError``.
"""
from .loops import parallel_outer, repeat, tile, unroll_and_jam
from .vectorize import replace_all, vectorize

__all__ = ["tile", "vectorize", "replace_all", "repeat", "unroll_and_jam",
           "parallel_outer"]
