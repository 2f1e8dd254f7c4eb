"""Looking at what the C compiler made of a generated kernel.

A register tile whose registers spill makes every FMA of the inner loop
read the stack: the kernel still computes the right thing, at half the
speed. That happened once with GCC 12 when the C backend gave outlined
``par`` functions ``restrict`` pointers (``apps/conv/README.md``), so the
apps' kernels are compiled to assembly and their FMAs checked. Import it
(``from asm_checks import fma_stack_operands``); ``tests/`` is on
``sys.path`` because the suite's ``conftest.py`` lives there.
"""
from __future__ import annotations

import subprocess

from exo_hl import compile_procs


def fma_stack_operands(proc, tmp_path, flags=("-O3", "-mtune=znver3")):
    """(FMAs with an operand on the stack, all FMAs) in ``gcc -S`` of the
    procedure's C, built with OpenMP. ``-mtune=znver3`` is the tuning
    that GCC 12's ``-march=native`` picks on Zen 3 and Zen 4, where the
    spills were seen; it gives the same code on any machine."""
    name = proc.name()
    compile_procs([proc], str(tmp_path), name)
    asm = tmp_path / f"{name}.s"
    subprocess.run(["gcc", *flags, "-fopenmp", "-S", "-o", str(asm),
                    str(tmp_path / f"{name}.c"), f"-I{tmp_path}"],
                   check=True, capture_output=True)
    fmas = [line for line in asm.read_text().splitlines()
            if "vfmadd" in line]
    return sum("(%rsp)" in line or "(%rbp)" in line for line in fmas), \
        len(fmas)
