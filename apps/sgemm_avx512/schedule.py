"""The schedule: naive SGEMM -> a 6x64 AVX-512 micro-kernel with K blocking.

The micro-kernel keeps a 6x64 tile of C in 24 zmm registers for a whole
block of ``KC`` steps of k; each step loads one 64-wide row of B into 4
registers and does 24 fused multiply-adds with 6 broadcast elements of A
(24 FMAs for 10 loads: the FMA units, not the loads, set the pace). Around
it, k is blocked by ``KC`` and the ``KC x 64`` panel of B the micro-kernel
sweeps is packed into a contiguous stack buffer (it is reused by every
6-row block of C, and contiguous rows avoid cache-set conflicts for large
power-of-two N).

Every step is a checked rewrite; ``stages()`` returns the procedure after
each group of steps so ``run.py --steps`` can print them.
"""
from __future__ import annotations

from exo_hl import DRAM, DRAM_STATIC, f32, proc, seq, size
from exo_hl.hw_libs.avx512 import (AVX512, mm512_fmadd_bcst_ps,
                                   mm512_loadu_ps, mm512_storeu_ps)

MR, NR, KC = 6, 64, 128   # C tile rows, C tile columns, k block
VEC = 16                  # f32 lanes per register


@proc
def sgemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
          B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert N % 64 == 0
    assert K % 128 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def stages(p=sgemm):
    """[(description, procedure)] after each group of rewrites."""
    out = [("the algorithm", p)]

    def step(what, q):
        out.append((what, q))
        return q

    # 0. rows in blocks of 6; the last M % 6 rows form a separate loop nest
    #    (tail='cut'), scheduled first into a 1x64 kernel, one row at a time
    p = step("cut the rows into blocks of 6 and a remainder",
             p.split('i', MR, 'io', 'ii', tail='cut'))
    p = p.split('j #1', NR, 'rjo', 'rjj', tail='perfect')
    p = p.split('rjj', VEC, 'rjt', 'rji', tail='perfect')
    p = p.reorder('rji', 'k #1').reorder('rjt', 'k #1')
    p = p.stage_mem(p.find_loop('k #1'),
                    f'C[ii + {MR} * (M / {MR}), {NR}*rjo:{NR}*rjo+{NR}]',
                    'R_reg')
    p = p.divide_dim('R_reg', 0, VEC)
    p = p.split('i0', VEC, 'i0o', 'i0i', tail='perfect')    # load
    p = p.split('i0', VEC, 'i0o', 'i0i', tail='perfect')    # store
    p = p.set_memory('R_reg', AVX512)
    p = p.replace(p.find_loop('i0i'), mm512_loadu_ps)
    p = p.replace(p.find_loop('i0i'), mm512_storeu_ps)
    p = p.stage_mem(p.find_loop('rjt'), f'B[k, {NR}*rjo:{NR}*rjo+{NR}]',
                    'RB_reg')
    p = p.divide_dim('RB_reg', 0, VEC)
    p = p.split('i0', VEC, 'i0o', 'i0i', tail='perfect').simplify()
    p = p.set_memory('RB_reg', AVX512)
    p = p.replace(p.find_loop('i0i'), mm512_loadu_ps)
    p = p.replace(p.find_loop('rji'), mm512_fmadd_bcst_ps)
    for loop in ('rjt', 'i0o', 'i0o', 'i0o'):
        p = p.unroll(loop)
    p = step("remainder rows: a 1x64 register kernel", p.simplify())

    # 1. tiles: io (6 rows), jo (64 columns), then ko (KC steps) outermost,
    #    so one packed panel of B serves every row block; inside: k, ii, jt, ji
    p = p.split('j', NR, 'jo', 'jj', tail='perfect')
    p = p.reorder('ii', 'jo')
    p = p.split('jj', VEC, 'jt', 'ji', tail='perfect')
    p = p.reorder('ji', 'k').reorder('jt', 'k').reorder('ii', 'k')
    p = p.split('k', KC, 'ko', 'k', tail='perfect')
    p = p.reorder('jo', 'ko').reorder('io', 'ko')
    p = step("tile: ko, io, jo, k, ii, jt, ji", p.reorder('io', 'jo'))

    # 2. the C tile lives in registers for the whole k block: stage it, cut
    #    its 64 columns into 4 registers of 16, and select loads/stores
    p = p.stage_mem(p.find_loop('k'),
                    f'C[{MR}*io:{MR}*io+{MR}, {NR}*jo:{NR}*jo+{NR}]', 'C_reg')
    p = p.divide_dim('C_reg', 1, VEC)
    p = p.split('i1', VEC, 'i1o', 'i1i', tail='perfect')    # load nest
    p = p.split('i1', VEC, 'i1o', 'i1i', tail='perfect')    # store nest
    p = p.set_memory('C_reg', AVX512)
    p = p.replace(p.find_loop('i1i'), mm512_loadu_ps)
    p = step("C tile in 24 registers",
             p.replace(p.find_loop('i1i'), mm512_storeu_ps))

    # 3. each k step: the row of B in 4 registers, then 24 broadcast-FMAs
    p = p.stage_mem(p.find_loop('ii'),
                    f'B[{KC}*ko+k, {NR}*jo:{NR}*jo+{NR}]', 'B_reg')
    p = p.divide_dim('B_reg', 0, VEC)
    p = p.split('i1', VEC, 'i1o', 'i1i', tail='perfect').simplify()
    p = p.set_memory('B_reg', AVX512)
    p = p.replace(p.find_loop('i1i'), mm512_loadu_ps)
    p = step("B row in registers, broadcast-FMA",
             p.replace(p.find_loop('ji'), mm512_fmadd_bcst_ps))

    # 4. pack the KC x 64 panel of B once per (ko, jo), for all row blocks
    p = p.stage_mem(p.find_loop('io'),
                    f'B[{KC}*ko:{KC}*ko+{KC}, {NR}*jo:{NR}*jo+{NR}]',
                    'B_pack')
    p = step("pack the B panel", p.set_memory('B_pack', DRAM_STATIC))

    # 5. unroll the register loops: every register index becomes constant
    for loop in ('jt', 'ii', 'i1o', 'i1o', 'i1o', 'i0', 'i0'):
        p = p.unroll(loop)
    step("unroll the micro-kernel", p.simplify())
    return out


def schedule(p=sgemm):
    """The fully scheduled kernel."""
    return stages(p)[-1][1].rename('sgemm_avx512')
