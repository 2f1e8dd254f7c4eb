"""The conv kernels, for the CLI: every public procedure here becomes a C
function.

    exo-hl compile apps/conv/kernels.py -o build --stem conv_kernels

writes ``build/conv_kernels.{c,h}`` with ``conv_avx2`` and ``conv_avx512``
(any N, H, W, IC, OC >= 1) and ``conv_halide_avx2``,
``conv_halide_avx512`` (Halide's layer, sizes fixed), each with the C ABI
of docs/api.md (``ctxt`` may be NULL). ``c/conv.c`` adds the entry point
a C program calls, ``conv`` (``c/conv.h``), which picks the AVX-512 or the
AVX2 kernel at run time, and the specialized one for Halide's sizes.
"""
from __future__ import annotations

import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

from apps.conv.schedule import AVX2, AVX512, schedule, specialized  # noqa

conv_avx2 = schedule(AVX2)
conv_avx512 = schedule(AVX512)
conv_halide_avx2 = specialized(AVX2)
conv_halide_avx512 = specialized(AVX512)
