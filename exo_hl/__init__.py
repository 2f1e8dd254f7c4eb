"""exo_hl: user-scheduled kernels in Python, compiled to readable C.

``from exo_hl import *`` brings in the public API that docs/api.md describes.
"""
from __future__ import annotations

import sys

from .api import Procedure
from .codegen_c.emit import compile_procs
from .core_ir.memory import DRAM, DRAM_STATIC, Memory
from .errors import (BoundsError, ExoTypeError, MemGenError, SchedulingError,
                     ExoSyntaxError, SanitizerError)
from .frontend.config_decl import config
from .frontend.decorators import extern, instr, proc
from .frontend.surface import (R, bf16, f16, f32, f64, i8, i16, i32, index,
                               par, par_dynamic, seq, size, stride, ui8,
                               ui16)
from .validate import validate  # noqa: E402  (the function; the package
#   stays importable as ``exo_hl.validate`` through sys.modules)

__all__ = [
    "proc", "instr", "config", "extern", "Procedure", "Memory", "DRAM",
    "DRAM_STATIC", "MemGenError", "SchedulingError", "ExoTypeError",
    "BoundsError", "compile_procs", "seq", "par", "stride", "R", "f16", "f32",
    "f64", "i8", "ui8", "i16", "ui16", "i32", "size", "index", "bf16",
    "validate", "par_dynamic",
]
__version__ = "0.1.0"


class _Package(type(sys)):
    """The ``exo_hl`` module object: fetching ``proc`` or ``instr`` from it
    first checks that the fetching module can define procedures (see
    ``frontend/annotations_check.py``)."""

    def __getattribute__(self, name):
        if name in ("proc", "instr"):
            from .frontend.annotations_check import check_importer
            check_importer(sys._getframe(1), __all__)
        return super().__getattribute__(name)


sys.modules[__name__].__class__ = _Package
