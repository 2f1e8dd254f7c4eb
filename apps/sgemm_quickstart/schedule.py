"""The schedule: naive SGEMM -> a 4x16 register-blocked micro-kernel.

Every step is a checked rewrite; printing ``p`` after any step shows the
procedure as it now reads.
"""
from __future__ import annotations

from exo_hl import DRAM_STATIC

from kernel import sgemm


def schedule(p=sgemm):
    p = p.split('i', 4, 'io', 'ii', tail='perfect')    # M % 4 == 0 is asserted
    p = p.split('j', 16, 'jo', 'ji', tail='perfect')   # N % 16 == 0 too
    p = p.reorder('ii', 'jo')                          # io, jo, ii, ji, k
    p = p.reorder('ji', 'k')
    p = p.reorder('ii', 'k')                           # io, jo, k, ii, ji
    # keep the 4x16 tile of C in a stack buffer across the whole k loop
    p = p.stage_mem(p.find_loop('k'), 'C[4*io:4*io+4, 16*jo:16*jo+16]',
                    'C_reg')
    p = p.set_memory('C_reg', DRAM_STATIC)
    p = p.unroll('ii')                                 # 4 rows, 16-wide each
    return p.rename('sgemm_4x16')
