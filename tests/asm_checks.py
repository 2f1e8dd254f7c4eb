"""Looking at what the C compiler made of a generated kernel.

A register tile whose registers spill makes every FMA of the inner loop
read the stack: the kernel still computes the right thing, at a fraction
of the speed. That happened with GCC 12 when the C backend gave outlined
``par`` functions ``restrict`` pointers (``apps/conv/README.md``), in the
SGEMM app's AVX2 kernels under ``-march=native`` on Zen 5
(``apps/common/kernel_flags.py``), and in conv's AVX-512 7x4 tile, which
fills all 32 registers (``exo_hl/hw_libs/avx512/fma_mem.py``). So the
apps' kernels are compiled to assembly and their multiply-accumulates
(FMAs and the int8 / bf16 dot products) checked for a stack operand.
Import it (``from asm_checks import fma_stack_operands``); ``tests/`` is
on ``sys.path`` because the suite's ``conftest.py`` lives there.
"""
from __future__ import annotations

import re
import subprocess

from exo_hl import compile_procs

#: the inner loops' multiply-accumulates: FMAs (any form), the int8 and
#: int16 dot products (VNNI) and the bf16 one
MAC = re.compile(r"^\s*(vf(n?)m(add|sub)\w*|vpdpbusds?|vpdpwssds?|"
                 r"vdpbf16ps)\s")

#: ... and the products of AMX kernels' vector tails, which multiply and
#: add bf16 products apart (``hw_libs/avx512/bf16_mul.py``); tile
#: products (``tdp*``) have no memory operand
MAC_AND_TAILS = re.compile(MAC.pattern[:-3] + r"|vmulps|vaddps)\s")

#: an operand addressed off the stack or frame pointer (``64(%rsp)``,
#: ``(%rbp,%rax,4)``): a spilled register
STACK = re.compile(r"\(%r[sb]p[,)]")


def native_flags() -> tuple:
    """What ``compile()`` builds an app's kernel with when neither
    ``cflags=`` nor ``$CFLAGS`` is given (``-O3 -march=native``; the tests
    unset ``$CFLAGS``)."""
    from exo_hl.codegen_c.runner import DEFAULT_CFLAGS
    return tuple(DEFAULT_CFLAGS.split())


def fma_stack_operands(proc, tmp_path, flags=("-O3", "-mtune=znver3"),
                       mac=MAC):
    """(multiply-accumulates with an operand on the stack, all of them) in
    ``gcc -S`` of the procedure's C, built as ``compile()`` builds it
    (position-independent, OpenMP). ``-mtune=znver3`` is the tuning that
    GCC 12's ``-march=native`` picks on Zen 3 to Zen 5, where the spills
    were seen; it gives the same code on any machine. ``mac``: the
    instructions counted."""
    name = proc.name()
    compile_procs([proc], str(tmp_path), name)
    asm = tmp_path / f"{name}.s"
    subprocess.run(["gcc", *flags, "-fPIC", "-fopenmp", "-S", "-o",
                    str(asm), str(tmp_path / f"{name}.c"), f"-I{tmp_path}"],
                   check=True, capture_output=True)
    macs = [line for line in asm.read_text().splitlines() if mac.match(line)]
    return sum(bool(STACK.search(line)) for line in macs), len(macs)
