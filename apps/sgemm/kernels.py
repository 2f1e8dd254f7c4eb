"""The SGEMM kernels, for the CLI: every public procedure here becomes a C
function.

    exo-hl compile apps/sgemm/kernels.py -o build --stem sgemm_kernels

writes ``build/sgemm_kernels.{c,h}`` with ``sgemm_avx2``,
``sgemm_avx512`` (``C += A @ B``) and ``sgemm_alpha_beta_avx2``,
``sgemm_alpha_beta_avx512`` (``C = alpha * A @ B + beta * C``), each with
the C ABI of docs/api.md (``ctxt`` may be NULL). ``c/sgemm.c`` adds the
entry points a C program calls, ``sgemm`` and ``sgemm_alpha_beta``
(``c/sgemm.h``), which pick the AVX-512 or the AVX2 kernel at run time.
Building this module schedules both instruction sets (about half a
minute).
"""
from __future__ import annotations

import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

from apps.sgemm.schedule import AVX2, AVX512, alpha_beta, schedule  # noqa

sgemm_avx2 = schedule(AVX2)
sgemm_avx512 = schedule(AVX512)
sgemm_alpha_beta_avx2 = alpha_beta(AVX2, sgemm_avx2)
sgemm_alpha_beta_avx512 = alpha_beta(AVX512, sgemm_avx512)
