"""A standard library of scheduling compositions.

Ordinary Python functions over ``Procedure``s, written with the public API
only (``Procedure`` methods, cursors, patterns): every step they take is a
checked primitive, so a composition is exactly as safe as its steps, and a
refused step raises ``SchedulingError``.
"""
from .halide import compute_at, compute_root, inline_producer, store_at
from .loops import parallel_outer, repeat, tile, unroll_and_jam
from .pack import pack
from .scalars import bind_const, hoist
from .reduction import vectorize_reduction, vectorize_reduction_rows
from .vectorize import replace_all, vectorize

from ..feedback import user_function as _user_function

__all__ = ["tile", "vectorize", "replace_all", "repeat", "unroll_and_jam",
           "parallel_outer", "compute_at", "store_at", "compute_root",
           "inline_producer", "pack", "hoist", "bind_const",
           "vectorize_reduction", "vectorize_reduction_rows"]

# a refused step inside a composition reaches the user at their call of it
# (exo_hl.feedback): rebind each public function to its wrapped form
for _name in __all__:
    globals()[_name] = _user_function(globals()[_name])
del _name
