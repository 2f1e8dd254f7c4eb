"""Procedures many test modules share, defined once.

``gemm`` is the plain matrix multiply the paper starts from: no
preconditions, so every schedule of it must handle any sizes. Import it
(``from kernels import gemm``): ``tests/`` is on ``sys.path`` because the
suite's ``conftest.py`` lives there.
"""
from __future__ import annotations

from exo_hl import DRAM, f32, proc, seq, size


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
         C: f32[M, N] @ DRAM):
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]
