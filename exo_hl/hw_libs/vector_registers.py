"""Vector registers as a memory: the part every SIMD library shares.

A buffer in a register memory is an array of whole registers: its last
dimension is exactly one register's lanes, its other sizes are constants,
and C code may not read it directly (only instructions touch it). gcc and
clang keep constant-indexed register arrays in registers once the loops
over them are unrolled. A library subclasses ``VectorRegisters`` and names
its register types per element type.
"""
from __future__ import annotations

import re

from exo_hl import Memory, MemGenError
from exo_hl.core_ir.memory import const_value


class VectorRegisters(Memory):
    """Base of register memories. Subclasses set ``registers``: C element
    type -> (C register type, lanes), and ``cpu_features``.

    A new instruction set's registers are one class:

    >>> class NEON(VectorRegisters):
    ...     registers = {"float": ("float32x4_t", 4)}
    ...     cpu_features = frozenset({"neon"})
    """

    registers: dict = {}

    @classmethod
    def global_(cls):
        return "#include <immintrin.h>\n"

    @classmethod
    def can_read(cls):
        return False

    @classmethod
    def _lanes(cls, prim_type, new_name, srcinfo):
        if prim_type not in cls.registers:
            kinds = ", ".join(sorted(cls.registers))
            raise MemGenError(f"{srcinfo}: {cls.__name__} registers hold "
                              f"{kinds} elements, '{new_name}' is {prim_type}")
        return cls.registers[prim_type]

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        reg, lanes = cls._lanes(prim_type, new_name, srcinfo)
        if not shape or const_value(shape[-1]) != lanes:
            raise MemGenError(
                f"{srcinfo}: {cls.__name__} buffers of {prim_type} need a "
                f"last dimension of {lanes} (one register), '{new_name}' has "
                f"shape [{', '.join(map(str, shape))}]")
        regs = 1
        for s in shape[:-1]:
            v = const_value(s)
            if v is None:
                raise MemGenError(f"{srcinfo}: {cls.__name__} buffer "
                                  f"'{new_name}' needs constant sizes, got {s}")
            regs *= v
        return (f"{reg} {new_name};" if len(shape) == 1
                else f"{reg} {new_name}[{regs}];")

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo):
        return ""

    @classmethod
    def window(cls, basetyp, baseptr, indices, strides, srcinfo):
        """The register holding the row at ``indices`` (lane index 0)."""
        if const_value(indices[-1]) != 0:
            raise MemGenError(f"{srcinfo}: {cls.__name__} buffer '{baseptr}' "
                              f"can only be addressed a whole register at a "
                              f"time (lane index {indices[-1]}, expected 0)")
        if len(indices) == 1:
            return baseptr
        _, lanes = cls._lanes(basetyp, baseptr, srcinfo)
        terms, fixed = [], 0
        for i, s in zip(indices[:-1], strides[:-1]):
            v = const_value(s)
            if v is None or v % lanes:
                raise MemGenError(f"{srcinfo}: {cls.__name__} buffer "
                                  f"'{baseptr}' has a non-constant stride {s}")
            regs = v // lanes
            if const_value(i) is not None:      # unrolled: fold to a constant
                fixed += const_value(i) * regs
                continue
            atom = i if re.fullmatch(r"\w+", i.strip()) else f"({i})"
            terms.append(atom if regs == 1 else f"{atom} * {regs}")
        if fixed or not terms:
            terms.append(str(fixed))
        return f"{baseptr}[{' + '.join(terms)}]"
