"""Memories (docs/api.md §2): user classes that say how buffers live in C.

A memory is a *class* deriving from ``Memory``; its classmethods return C
text. The compiler never instantiates memories.

The hooks receive sizes, indices and strides as ``CExpr`` values: C
expression strings (so text-pasting memories work unchanged) that also
carry ``value``, the integer when the compiler knows it as a constant. A
memory that needs constant sizes reads ``shape[d].value`` instead of
parsing the C text back.
"""
from __future__ import annotations

from ..errors import MemGenError


class CExpr(str):
    """A C expression handed to a ``Memory`` hook: the text, plus ``value``
    (its integer value when it is a compile-time constant, else None).

    >>> n = CExpr("16", 16); m = CExpr("n_1 / 4")
    >>> f"float t[{n}];", n.value, m.value
    ('float t[16];', 16, None)
    """

    def __new__(cls, text, value=None):
        self = super().__new__(cls, text)
        self.value = value
        return self

    @classmethod
    def constant(cls, v: int) -> "CExpr":
        """The literal ``v``.

        >>> CExpr.constant(4).value
        4
        """
        return cls(str(v), int(v))


def const_value(e):
    """The integer value of a hook argument when it is a known constant,
    else None: ``e.value`` for a ``CExpr``; an ``int`` itself; for plain
    text (a hook called directly with strings), a decimal literal.

    >>> const_value(CExpr("8", 8)), const_value("(16)"), const_value("n")
    (8, 16, None)
    """
    if isinstance(e, CExpr):
        return e.value
    if isinstance(e, int) and not isinstance(e, bool):
        return e
    t = str(e).strip()
    while t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    return int(t) if t.isdigit() else None


class Memory:
    """Base class of all memories. Override the classmethods below.

    ``cpu_features``: the CPU features (GCC names) code using this memory
    needs, e.g. ``frozenset({"avx512f"})`` for ``__m512`` registers.

    A memory of stack arrays that needs constant sizes:

    >>> class STACK(Memory):
    ...     @classmethod
    ...     def alloc(cls, new_name, prim_type, shape, srcinfo):
    ...         if any(s.value is None for s in shape):
    ...             raise MemGenError(f"{srcinfo}: STACK needs constant sizes")
    ...         return f"{prim_type} {new_name}[{' * '.join(shape)}];"
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

    @classmethod
    def exclusive(cls) -> bool:
        """True when the memory is one register (its buffers share it): C
        generation refuses a buffer in it allocated, or by a called
        procedure, while another is live (``codegen_c/memory_rules.py``)."""
        return False

    @classmethod
    def clobbered_by(cls) -> tuple:
        """The ``@config`` classes whose change destroys what this memory's
        buffers hold (the IR does not model it): C generation refuses a
        write that may change one of them while such a buffer is live."""
        return ()


class DRAM(Memory):
    """Heap memory: ``malloc``/``free``; scalars live on the stack.

    >>> @proc
    ... def f(n: size, x: f32[n] @ DRAM):  # the default memory of arguments
    ...     t: f32[n] @ DRAM                 # malloc'd in the generated C
    ...     for i in seq(0, n):
    ...         t[i] = x[i]
    """

    @classmethod
    def global_(cls):
        return "#include <stdio.h>\n#include <stdlib.h>\n"

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        # exo_hl_malloc (emitted by the backend) multiplies the sizes with
        # an overflow check; on overflow or a NULL from malloc it sets the
        # function's exo_hl_status, which the backend tests next and
        # returns (compile() raises it as ValueError / MemoryError)
        if not shape:
            return f"{prim_type} {new_name};"
        dims = ", ".join(f"(size_t)({s})" for s in shape)
        return (f"{prim_type} *{new_name} = ({prim_type}*) exo_hl_malloc("
                f"&exo_hl_status, sizeof({prim_type}), {len(shape)}, "
                f"(const size_t[]){{{dims}}});")

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo):
        return f"free({new_name});" if shape else ""


#: bytes: the largest DRAM_STATIC array. A thread's stack is a few MiB
#: (8 on Linux's main thread, less on OpenMP's workers by default), and an
#: array past it kills the process with no message
STACK_BUDGET = 1 << 20

#: bytes: all DRAM_STATIC arrays live at once in one call of a procedure,
#: the procedures it calls included (C generation checks it,
#: ``codegen_c/stack.py``); nine live 1 MiB arrays overflowed the 8 MiB
#: main thread's stack
STACK_TOTAL_BUDGET = 2 << 20

_C_SIZES = {"float": 4, "double": 8, "_Float16": 2, "int8_t": 1,
            "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4}


class DRAM_STATIC(DRAM):
    """C stack arrays (sizes must be compile-time constants, at most
    ``STACK_BUDGET`` = 1 MiB per array and ``STACK_TOTAL_BUDGET`` = 2 MiB
    for all those live at once in one call: use DRAM beyond).

    >>> p = p.set_memory('C_reg', DRAM_STATIC)  # float C_reg[64]; on the stack
    """

    @classmethod
    def global_(cls):
        return ""

    @classmethod
    def alloc(cls, new_name, prim_type, shape, srcinfo):
        if not shape:
            return f"{prim_type} {new_name};"
        sizes = [const_value(s) for s in shape]
        if None in sizes:
            raise MemGenError(
                f"{srcinfo}: DRAM_STATIC buffer '{new_name}' needs constant "
                f"sizes, got {', '.join(map(str, shape))}")
        total = 1
        for s in sizes:
            total *= s
        nbytes = total * _C_SIZES.get(prim_type, 8)
        if nbytes > STACK_BUDGET:
            raise MemGenError(
                f"{srcinfo}: DRAM_STATIC buffer '{new_name}' takes {nbytes} "
                f"bytes of stack, more than the {STACK_BUDGET} a "
                f"DRAM_STATIC array may (a thread's stack is a few MiB, and "
                f"overflowing it kills the process): use DRAM")
        return f"{prim_type} {new_name}[{total}];"

    @classmethod
    def free(cls, new_name, prim_type, shape, srcinfo):
        return ""
