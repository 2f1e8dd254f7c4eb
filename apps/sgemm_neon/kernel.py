"""The algorithm: C += A @ B, any sizes (the schedule handles the edges)."""
from __future__ import annotations

from exo_hl import DRAM, f32, proc, seq, size


@proc
def sgemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
          B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def sgemm_at(M: size, N: size, K: size, At: f32[K, M] @ DRAM,
             B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    """C += At^T @ B: A packed transposed (a column of A contiguous), as
    a by-lane multiply-add wants it."""
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += At[k, i] * B[k, j]
