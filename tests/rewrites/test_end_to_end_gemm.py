"""End to end: naive gemm scheduled for a 4x16 register block, compiled.

The schedule is the one a user would write for a CPU micro-kernel: tile i by
4 and j by 16 (tails cut off into remainder loops so the main nest only sees
full tiles), split k, make the 4x16 C tile stationary across k, stage it into
a stack buffer, unroll the 4-loop (and the k-block), and run the outer loop in
parallel. The result must agree with numpy on sizes with every kind of tail,
through both compile() and interpret(), and must print (and reparse) as the
schedule we asked for.
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import DRAM, DRAM_STATIC, SchedulingError, f32, proc, seq, size
from kernels import gemm  # the suite's shared GEMM

SIZES_TAILS = [(1, 1, 1), (5, 17, 3), (8, 32, 8), (13, 35, 9)]


@proc
def gemm_div(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
             B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert M % 4 == 0
    assert N % 16 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def schedule_tails(p):
    """Register tiling of gemm for arbitrary M, N, K (tails cut)."""
    p = p.split('i', 4, 'io', 'ii', tail='cut')
    p = p.split('j', 16, 'jo', 'ji', tail='cut')
    # the j-remainder sits next to the jo nest inside ii: split ii around it
    p = p.fission_after('jo')
    p = p.reorder('ii', 'jo')
    p = p.split('k', 4, 'ko', 'ki', tail='cut')
    # separate the k-remainder from the ko nest, out of ji and ii
    p = p.fission_after('ko', n_lifts=2)
    p = p.reorder('ji', 'ko')
    p = p.reorder('ii', 'ko')
    p = p.reorder('ji', 'ki')
    p = p.reorder('ii', 'ki')
    p = p.reorder('ji #1', 'ki #1')
    p = p.reorder('ii #1', 'ki #1')
    jo = p.find_loop('jo')
    block = (jo.body()[0], jo.body()[1])  # the ko nest and the k-remainder
    p = p.stage_mem(block, 'C[4*io:4*io+4, 16*jo:16*jo+16]', 'Ct')
    p = p.set_memory('Ct', DRAM_STATIC)
    p = p.lift_alloc('Ct')  # one tile buffer per io iteration
    p = p.unroll('ii')      # the 4-loop of the main k-block
    p = p.unroll('ii')      # the 4-loop of the k-remainder
    p = p.unroll('ki')      # the 4-deep k-block
    p = p.parallelize('io')
    return p.simplify()


def schedule_divisible(p):
    """Register tiling when the preconditions make i and j tiles perfect."""
    p = p.split('i', 4, 'io', 'ii', tail='perfect')
    p = p.split('j', 16, 'jo', 'ji', tail='perfect')
    p = p.reorder('ii', 'jo')
    p = p.split('k', 8, 'ko', 'ki', tail='guard')
    p = p.reorder('ji', 'ko')
    p = p.reorder('ii', 'ko')
    p = p.reorder('ji', 'ki')
    p = p.reorder('ii', 'ki')
    p = p.stage_mem(p.find_loop('ko'), 'C[4*io:4*io+4, 16*jo:16*jo+16]',
                    'Ct')
    p = p.set_memory('Ct', DRAM_STATIC)
    p = p.lift_alloc('Ct')
    p = p.lift_if('if _: _', n_lifts=2)  # k guard out of ji and ii
    p = p.unroll('ii')
    p = p.parallelize('io')
    return p.simplify()


@pytest.fixture(scope="module")
def tiled():
    return schedule_tails(gemm)


@pytest.fixture(scope="module")
def tiled_div():
    return schedule_divisible(gemm_div)


def _data(M, N, K, seed):
    rng = np.random.default_rng(seed)
    A = rng.integers(-4, 5, (M, K)).astype(np.float32)
    B = rng.integers(-4, 5, (K, N)).astype(np.float32)
    C = rng.integers(-4, 5, (M, N)).astype(np.float32)
    return A, B, C


def _check_numpy(fn, sizes):
    for n, (M, N, K) in enumerate(sizes):
        A, B, C = _data(M, N, K, n)
        expect = C + A @ B
        fn(M, N, K, A, B, C)
        np.testing.assert_array_equal(C, expect, err_msg=f"M,N,K={M, N, K}")


def test_tails_compiled_matches_numpy(tiled):
    _check_numpy(tiled.compile(), SIZES_TAILS)


def test_tails_interpreted_matches_numpy(tiled):
    _check_numpy(tiled.interpret, [(5, 17, 3), (1, 1, 1)])


def test_tails_schedule_text(tiled, assert_roundtrip):
    text = str(tiled)
    print(text)
    lines = [l.strip() for l in text.splitlines()]
    # the staged tile lives on the stack, one per parallel io iteration
    assert "Ct: f32[4, 16] @ DRAM_STATIC" in lines
    assert lines.index("for io in par(0, M / 4):") \
        < lines.index("Ct: f32[4, 16] @ DRAM_STATIC") \
        < lines.index("for jo in seq(0, N / 16):")
    assert "for ko in seq(0, K / 4):" in lines
    assert "for ki in seq(0, K % 4):" in lines
    # loads into and stores out of the tile
    assert "Ct[i0, i1] = C[4 * io + i0, 16 * jo + i1]" in lines
    assert "C[4 * io + i0, 16 * jo + i1] = Ct[i0, i1]" in lines
    # unrolled ii (rows 0..3) and ki (k offsets 0..3): 16 row-updates in the
    # main k-block plus 4 in the k-remainder
    flat = " ".join(text.split())
    assert flat.count("+=") == 20 + 2
    for r in range(4):
        assert flat.count(f"Ct[{r}, ji] +=") == 5
    # no 4-loop over rows nor over k offsets is left inside the tile
    tile = lines[lines.index("for jo in seq(0, N / 16):"):
                 lines.index("C[4 * io + i0, 16 * jo + i1] = Ct[i0, i1]")]
    assert "for ii in seq(0, 4):" not in tile
    assert "for ki in seq(0, 4):" not in tile
    # the remainders of i and j still hold the plain statement
    assert "for ii in seq(0, M % 4):" in lines
    assert "for ji in seq(0, N % 16):" in lines
    assert text.count(" par(") == 1
    assert_roundtrip(tiled)


def test_tails_c_code(tiled):
    c = tiled.c_code_str()
    assert "#pragma omp parallel\n" in c      # outlined
    assert "float Ct[64];" in c  # DRAM_STATIC: a C stack array


def test_divisible_variant(tiled_div, assert_roundtrip):
    text = str(tiled_div)
    print(text)
    lines = [l.strip() for l in text.splitlines()]
    assert "for io in par(0, M / 4):" in lines
    assert "Ct: f32[4, 16] @ DRAM_STATIC" in lines
    # the k-split by 8 is guarded, the i/j splits need no remainder
    assert "for ko in seq(0, (K + 7) / 8):" in lines
    assert not any("M % 4" in l or "N % 16" in l
                   for l in lines if not l.startswith("assert"))
    assert "if 8 * ko + ki < K:" in lines
    flat = " ".join(text.split())
    guard = flat.index("if 8 * ko + ki < K:")
    for r in range(4):
        assert flat.index(f"Ct[{r}, ji] +=") > guard
    assert flat.count("if 8 * ko + ki < K:") == 1
    assert_roundtrip(tiled_div)
    sizes = [(4, 16, 1), (8, 32, 8), (12, 48, 13)]
    _check_numpy(tiled_div.compile(), sizes)
    _check_numpy(tiled_div.interpret, [(4, 16, 9)])


def test_divisible_precondition_enforced(tiled_div):
    f = tiled_div.compile()
    A, B, C = _data(5, 16, 2, 0)
    with pytest.raises(ValueError):
        f(5, 16, 2, A, B, C)


def test_staging_guarded_tiles():
    """With a guarded tail the last io block's 4-row window of C runs past
    M when M % 4 != 0: the copies are guarded (rows past M are neither
    loaded nor stored back), and the result still matches numpy. A window
    missing rows the block writes is refused, naming where gemm is."""
    p = gemm.split('i', 4, 'io', 'ii', tail='guard')
    q = p.stage_mem(p.find_loop('ii'), 'C[4*io:4*io+4, 0:N]', 'Ct')
    assert "if i0 < M - 4 * io:" in str(q)
    sizes = [(1, 3, 2), (5, 4, 3), (8, 2, 1)]
    _check_numpy(q.compile(), sizes)
    _check_numpy(q.interpret, sizes[:2])
    with pytest.raises(SchedulingError) as ei:
        p.stage_mem(p.find_loop('ii'), 'C[4*io:4*io+3, 0:N]', 'Ct')
    msg = str(ei.value)
    assert "gemm" in msg and "cover" in msg
    assert "tests/kernels.py:" in msg      # where gemm is written


def test_parallel_outer_after_staging_is_not_lifted_out():
    """Lifting the tile buffer out of the parallel loop would race."""
    p = schedule_divisible(gemm_div)
    with pytest.raises(SchedulingError) as ei:
        p.lift_alloc('Ct')
    assert "par" in str(ei.value).lower()
