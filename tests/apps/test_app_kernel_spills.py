"""The other apps' x86 kernels built with ``compile()``'s default flags
(``-O3 -march=native``): no FMA reads an operand from the stack.

The SGEMM app's dispatched kernels, conv's model kernels and the int8 /
bf16 kernels are checked next to their apps (``test_sgemm.py``,
``test_conv.py``, ``test_gemm_lowp.py``); these are the rest that run
FMAs on this CPU: the quickstart's tutorial kernel, the worked examples'
GEMV, and SGEMM's base descriptions, which ``apps/sgemm/run.py`` and
``side_by_side.py`` compile without ``kernel_flags`` (GCC 12 spilled a B
register of two of the app's AVX2 kernels under these flags, see
``apps/common/kernel_flags.py``). Both instruction-set libraries, so the
check does not depend on what the host has. The blur and unsharp kernels
have no FMA. The AMX kernels (``apps/gemm_amx``) multiply in tile
instructions, which have no memory operand, and in AVX-512 tails for the
rows and columns the tiles leave: those are checked, the bf16 ones'
separate multiplies and adds too (the kernels carry their target
attributes, so they build for the assembly on any x86).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from exo_hl.hw_libs import avx2, avx512  # noqa: E402

LIBS = {"avx512": (avx512.AVX512, 16, avx512.INSTRS),
        "avx2": (avx2.AVX2, 8, avx2.INSTRS)}


def _kernels(isa_name):
    """(what, procedure) of each app kernel for ``isa_name``."""
    # as a package module: a bare 'schedule'/'kernel' would stay in
    # sys.modules and be another app's (apps.saxpy_rvv took it for its own)
    from apps.sgemm_quickstart.schedule import schedule as quickstart
    from apps.sgemm.schedule import ISAS, schedule as sgemm
    from apps.worked_examples import kernels as worked
    lib = LIBS[isa_name]
    return [("quickstart", quickstart(lib=lib)),
            ("gemv", worked.schedule_gemv(lib=lib)),
            ("gemv_row", worked.schedule_gemv_row(lib=lib)),
            ("sgemm base", sgemm(ISAS[isa_name]))]


@pytest.mark.slow
@pytest.mark.parametrize("isa_name", ["avx512", "avx2"])
def test_app_kernels_do_not_spill_with_native_flags(tmp_path, monkeypatch,
                                                    isa_name):
    from asm_checks import fma_stack_operands, native_flags
    monkeypatch.delenv("CFLAGS", raising=False)
    for what, p in _kernels(isa_name):
        spilled, fmas = fma_stack_operands(p, tmp_path, flags=native_flags())
        assert fmas > 0 and spilled == 0, (what, spilled, fmas)


@pytest.mark.slow
@pytest.mark.parametrize("alg_name", ["gemm_bf16_mtail", "gemm_bf16_ntail",
                                      "gemm_u8s8_mtail", "gemm_u8s8_ntail"])
def test_amx_kernels_vector_tails_do_not_spill(tmp_path, monkeypatch,
                                               alg_name):
    """The AMX GEMMs with tail rows or columns (the bench's
    ``--m-extra``/``--n-extra``), one and two threads: no product of
    their AVX-512 tails (``vpdpbusd``; bf16: ``vmulps``/``vaddps``) reads
    the stack."""
    from asm_checks import MAC_AND_TAILS, fma_stack_operands, native_flags
    from apps.gemm_amx import schedule as amx
    monkeypatch.delenv("CFLAGS", raising=False)
    for threads in (False, True):
        spilled, macs = fma_stack_operands(
            amx.schedule(getattr(amx, alg_name), threads=threads), tmp_path,
            flags=native_flags(), mac=MAC_AND_TAILS)
        assert macs > 0 and spilled == 0, (threads, spilled, macs)
