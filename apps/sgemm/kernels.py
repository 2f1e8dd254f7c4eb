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
minute). Their parameters are those ``apps/sgemm/api.py`` runs: this
machine's tuning record, else the BLIS model of its caches
(``EXO_HL_SGEMM_PARAMS=model|fixed`` as there); one line on stderr per
instruction set says which.
"""
from __future__ import annotations

import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

import os  # noqa: E402

from apps.sgemm.schedule import alpha_beta, schedule  # noqa: E402
from apps.sgemm.tuning import configured  # noqa: E402


def _configured(isa_name):
    isa, note = configured(isa_name,
                           os.environ.get("EXO_HL_SGEMM_PARAMS", "auto"))
    print(f"sgemm_{isa_name}: {note}", file=sys.stderr)
    return isa


_AVX2, _AVX512 = _configured("avx2"), _configured("avx512")
sgemm_avx2 = schedule(_AVX2)
sgemm_avx512 = schedule(_AVX512)
sgemm_alpha_beta_avx2 = alpha_beta(_AVX2, sgemm_avx2)
sgemm_alpha_beta_avx512 = alpha_beta(_AVX512, sgemm_avx512)
