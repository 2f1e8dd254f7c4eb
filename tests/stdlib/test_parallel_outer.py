"""parallel_outer: move a loop outward, then parallelize (both checked)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.stdlib import parallel_outer


@proc
def colsum(M: size, N: size, A: f32[M, N], s: f32[N]):
    for i in seq(0, M):
        for j in seq(0, N):
            s[j] += A[i, j]


def test_parallel_outer_moves_and_parallelizes(equiv, same_text):
    p = parallel_outer(colsum, 'j')
    same_text(p, """
def colsum(M: size, N: size, A: f32[M, N] @ DRAM, s: f32[N] @ DRAM):
    for j in par(0, N):
        for i in seq(0, M):
            s[j] += A[i, j]""")
    equiv(colsum, p, [{"M": 3, "N": 4}, {"M": 1, "N": 7}])


def test_parallel_outer_rejects_a_race():
    with pytest.raises(SchedulingError):
        parallel_outer(colsum, 'i')   # every i reduces into all of s
