"""Memories (docs/api.md §2): user classes that say how buffers live in C.

A memory is a *class* deriving from ``Memory``; its classmethods return C
text. The compiler never instantiates memories.
"""
from __future__ import annotations

from ..errors import MemGenError


class Memory:
    """Base class of all memories. Override the classmethods below.

    ``cpu_features``: the CPU features (GCC names) code using this memory
    needs, e.g. ``frozenset({"avx512f"})`` for ``__m512`` registers.
    """

    cpu_features = frozenset()

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    @classmethod
    def global_(cls) -> str:
        """C text emitted once per generated file (includes, helpers)."""
        return ""

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo) -> str:
        raise MemGenError(f"memory {cls.__name__} does not define alloc()")

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo) -> str:
        return ""

    @classmethod
    def window(cls, basetyp, baseptr, indices, strides, srcinfo) -> str:
        """A C lvalue designating the element of ``baseptr`` at ``indices``."""
        offset = " + ".join(f"({i}) * ({s})" for i, s in zip(indices, strides))
        return f"{baseptr}[{offset or '0'}]"

    @classmethod
    def can_read(cls) -> bool:
        return True


class DRAM(Memory):
    """Heap memory: ``malloc``/``free``; scalars live on the stack."""

    @classmethod
    def global_(cls):
        return "#include <stdio.h>\n#include <stdlib.h>\n"

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        if not shape:
            return f"{prim_type} {new_name};"
        size = " * ".join(f"(size_t)({s})" for s in shape)
        return (f"{prim_type} *{new_name} = "
                f"({prim_type}*) malloc({size} * sizeof({prim_type}));")

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo):
        return f"free({new_name});" if shape else ""


class DRAM_STATIC(DRAM):
    """C stack arrays (sizes must be compile-time constants)."""

    @classmethod
    def global_(cls):
        return ""

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        if not shape:
            return f"{prim_type} {new_name};"
        for s in shape:
            if not str(s).strip().isdigit():
                raise MemGenError(
                    f"{srcinfo}: DRAM_STATIC buffer '{new_name}' needs constant "
                    f"sizes, got {', '.join(map(str, shape))}")
        total = 1
        for s in shape:
            total *= int(s)
        return f"{prim_type} {new_name}[{total}];"

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo):
        return ""
