"""Compiler options for the apps' micro-kernels (``compile(**opts)``).

Why: GCC allocates registers region by region (``-fira-region=mixed``,
its default at ``-O3``), and in some of the SGEMM kernels it kept one of
the two B registers of the 6x16 AVX2 tile on the stack inside the k loop
(every other FMA read it from memory): GCC 12 with ``-march=native`` on
Zen 5 (its znver3 tuning plus AVX-512), the one-thread narrow kernel at
full k blocks at 82 GFLOP/s instead of 128, the static-row kernel at
KC = 128 at 61% of the peak. Which kernel it hits moves with the code
around the loop (a loop header, a clone for constant arguments), so it
is not fixable in the schedule. ``-fira-region=one`` allocates each
function as one region: no FMA of any kernel the app dispatches reads the
stack (``tests/apps/test_sgemm.py``). Only for the AVX2 kernels
(``NEEDS_WHOLE_FUNCTION_RA``): the AVX-512 ones did not spill, and their
square kernel ran 0.2-2% slower with it (side by side, one thread, 512^3
to 2048^3). Clang has no such option (and did not spill), and a user's
``$CFLAGS`` are kept as they are.

Not a default anywhere else: the drop-in library's AVX2 block function
(``exo-hl compile apps/sgemm/kernels.py``) spilled *with* the flag at
``-O2`` and ``-O3`` and not without it (apps/sgemm/README.md, session
13), and a tile that fills every register spills whatever the flag
(conv's 7x4: the schedule reads a weight register from memory instead,
``hw_libs/avx512/fma_mem.py``). The apps' kernels are checked for stack
operands by ``tests/asm_checks.py`` users in each app's tests.
"""
from __future__ import annotations

import functools
import os
import subprocess

#: what GCC gets on top of ``compile()``'s default flags
GCC_KERNEL_FLAGS = "-fira-region=one"

#: the instruction sets whose kernels get ``GCC_KERNEL_FLAGS``
NEEDS_WHOLE_FUNCTION_RA = frozenset({"avx2"})


def is_gcc(cc: str) -> bool:
    """Whether ``cc`` is GCC (``cc --version`` names the FSF, not clang)."""
    try:
        out = subprocess.run([cc, "--version"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "Free Software Foundation" in out and "clang" not in out.lower()


@functools.lru_cache(maxsize=None)
def _opts(cc: str, cflags) -> tuple:
    if cflags is not None or not is_gcc(cc):
        return ()
    from exo_hl.codegen_c.runner import DEFAULT_CFLAGS
    return (("cflags", f"{DEFAULT_CFLAGS} {GCC_KERNEL_FLAGS}"),)


def kernel_compile_opts(isa_name: str) -> dict:
    """``compile()`` options for a micro-kernel of ``isa_name``: with GCC,
    no ``$CFLAGS`` and an ISA in ``NEEDS_WHOLE_FUNCTION_RA``, the default
    flags plus ``GCC_KERNEL_FLAGS``; else none (``compile()``'s own
    choice)."""
    if isa_name not in NEEDS_WHOLE_FUNCTION_RA:
        return {}
    return dict(_opts(os.environ.get("CC") or "cc",
                      os.environ.get("CFLAGS")))
