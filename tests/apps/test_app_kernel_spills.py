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
have no FMA; the AMX kernels' products are tile instructions, without a
memory operand.
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
    sys.path.insert(0, str(REPO / "apps" / "sgemm_quickstart"))
    try:                                  # (as tests/test_notebook.py)
        from schedule import schedule as quickstart
    finally:
        sys.path.remove(str(REPO / "apps" / "sgemm_quickstart"))
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
