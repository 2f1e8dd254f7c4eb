"""The schedule: naive SGEMM -> an 8 x (2 registers) micro-kernel made of
instructions selected from a shipped hardware library.

Every step is a checked rewrite; printing ``p`` after any step shows the
procedure as it now reads. The tile of C (8 rows, two vector registers per
row: 16 accumulators) stays in registers for the whole k loop; each k step
loads one row of B (two registers) and does 16 broadcast-FMAs. The
library is AVX-512 (16 lanes) on a CPU that has it, else AVX2 (8 lanes).
``apps/sgemm`` is the full, tuned kernel (packing, any size, threads).
"""
from __future__ import annotations

from exo_hl.codegen_c.host_cpu import host_features
from exo_hl.hw_libs import avx2, avx512
from exo_hl.stdlib import replace_all

try:   # imported as apps.sgemm_quickstart.schedule (tests): its own
    from .kernel import sgemm          # kernel, not another 'kernel'
except ImportError:                    # run.py's module
    from kernel import sgemm


def library():
    """(register memory, lanes, instructions) for this CPU."""
    if host_features({"avx512f"}):
        return avx512.AVX512, 16, avx512.INSTRS
    return avx2.AVX2, 8, avx2.INSTRS


def schedule(p=sgemm, lib=None):
    mem, w, instrs = lib or library()
    p = p.split('i', 8, 'io', 'ii', tail='perfect')      # M % 8 == 0
    p = p.split('j', 2 * w, 'jo', 'jm', tail='perfect')  # N % 32 == 0
    p = p.split('jm', w, 'jm', 'ji', tail='perfect')     # w lanes a register
    p = p.reorder('ii', 'jo')                    # io, jo, ii, jm, ji, k
    p = p.reorder('ji', 'k').reorder('jm', 'k').reorder('ii', 'k')
    # the 8 x 2w tile of C in registers across the whole k loop
    p = p.stage_mem(p.find_loop('k'),
                    f'C[8*io:8*io+8, {2 * w}*jo:{2 * w}*jo+{2 * w}]', 'C_reg')
    p = p.divide_dim('C_reg', 1, w).set_memory('C_reg', mem)
    # one row of B in registers for each k
    p = p.stage_mem(p.find_loop('ii'), f'B[k, {2 * w}*jo:{2 * w}*jo+{2 * w}]',
                    'B_reg')
    p = p.divide_dim('B_reg', 0, w).set_memory('B_reg', mem)
    # the copies in and out of registers, one register at a time
    for name in ('i1', 'i2', 'i1'):
        p = p.split(name, w, name + 'o', name + 'i', tail='perfect')
    # instruction selection: loads, stores, broadcast-FMAs
    p = replace_all(p, instrs)
    # constant register indices, so the C compiler keeps them in registers
    p = p.unroll('jm').unroll('ii').unroll('i2o')
    return p.rename('sgemm_8x2v')
