"""The schedule: naive SGEMM -> an 8 x 12 NEON micro-kernel (24 q-register
accumulators: 8 rows of C, three registers of 4 floats each), made of
checked rewrites only.

Full 8 x 12 tiles of C stay in registers across the whole k loop; each k
step loads one row of B (three registers) and does 24 broadcast
multiply-adds of an element of A times a register of B. The edges (the
last M % 8 rows, the last N % 12 columns) are separate loops (``tail=
'cut'``) left in scalar C: correct for every size, fast on the bulk.

``fused=False`` (the default) selects ``neon_vmla_bcst_4xf32``
(``vmlaq_n_f32``: a multiply and an add, two roundings, exactly as the
algorithm), so results equal ``interpret()`` bit for bit on any data;
``fused=True`` selects ``neon_vfmla_bcst_4xf32`` (``fmla``, one rounding,
one instruction instead of two), equal to ``interpret()`` where products
are exact (the tests use small integers).
"""
from __future__ import annotations

from apps.common.register_tile import in_registers, register_tile
from exo_hl.hw_libs import neon
from exo_hl.stdlib import replace_all

try:   # imported as apps.sgemm_neon.schedule: its own kernel, whatever
    from .kernel import sgemm, sgemm_at   # module named 'kernel' is loaded
except ImportError:                    # a script's module (run.py)
    from kernel import sgemm, sgemm_at

MR, NR, W = 8, 12, neon.LANES          # tile rows, tile columns, lanes


def instructions(fused=False):
    """The NEON instructions the schedule selects from."""
    fma = (neon.neon_vfmla_bcst_4xf32 if fused
           else neon.neon_vmla_bcst_4xf32)
    return [neon.neon_vld_4xf32, neon.neon_vst_4xf32, fma]


def schedule(p=sgemm, fused=False):
    # the 8 x 12 tile of C in registers across the whole k loop, one row
    # of B in registers for each k
    p = register_tile(p, MR, NR, W, neon.Neon)
    for name in ('i1', 'i2', 'i1'):
        p = p.split(name, W, name + 'o', name + 'i', tail='perfect')
    p = replace_all(p, instructions(fused))
    # constant register indices, so the C compiler keeps all 24
    # accumulators in registers (the tile's loads and stores included)
    p = p.unroll('jm').unroll('ii').unroll('i2o')
    for name in ('i1o', 'i0', 'i1o', 'i0'):
        p = p.unroll(name)
    return p.rename('sgemm_neon_8x12' + ('_fma' if fused else ''))


def schedule_lane(p=sgemm_at):
    """The by-lane kernel (A packed transposed, ``sgemm_at``): each k step
    loads the column of A's tile as two registers and does 24
    ``fmla v, v, v.s[lane]`` (fused), so no element of A is loaded alone.
    Equal to ``interpret()`` where products are exact."""
    p = register_tile(p, MR, NR, W, neon.Neon)
    p = p.stage_mem(p.find_loop('ii'), f'At[k, {MR}*io:{MR}*io+{MR}]',
                    'A_reg')
    p = in_registers(p, 'A_reg', 0, W, neon.Neon)
    for name in ('i1', 'i2', 'i1', 'i3'):
        p = p.split(name, W, name + 'o', name + 'i', tail='perfect')
    p = p.split('ii', W, 'iio', 'iii', tail='perfect')
    p = p.commute_expr(p.find('A_reg[_] * B_reg[_]'))
    p = p.unroll('iii')                  # constant lanes
    # replace infers each loop's lane (A_reg[iio, 2]: the register
    # A_reg[iio, 0:4] and lane 2)
    p = replace_all(p, [neon.neon_vld_4xf32, neon.neon_vst_4xf32,
                        neon.neon_vfmla_lane_4xf32])
    p = p.unroll('iio')
    while 'for jm in seq(0, 3)' in str(p):     # the tile's (first) ones
        p = p.unroll('jm')
    for name in ('i2o', 'i3o', 'i1o', 'i0', 'i1o', 'i0'):
        p = p.unroll(name)
    return p.rename('sgemm_neon_8x12_lane')
