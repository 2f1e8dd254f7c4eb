"""The schedule: naive SGEMM -> an RVV micro-kernel whose vector length
``vl`` is a parameter (1..4), made of checked rewrites only.

The tile of C is ``mr`` rows by ``nv`` registers of ``vl`` lanes; it stays
in registers across the k loop; each k step loads a row of B (``nv``
registers) and does ``mr * nv`` broadcast multiply-adds. The vector
length is config state: ``configwrite_at`` puts ``VL.vl = vl`` before the
tile and ``replace`` turns it into ``rvv_vsetvl_e32m1``; every selected
instruction asserts ``VL.vl == vl`` and the checker proves it. Edges
(rows past a multiple of ``mr``, columns past a multiple of ``nv * vl``)
are scalar loops (``tail='cut'``), so every M, N, K works.

``fused=False`` (default): ``rvv_vmacc_unfused_vf_f32`` (two roundings,
equal to ``interpret()`` bit for bit); ``fused=True``:
``rvv_vfmacc_vf_f32`` (``vfmacc.vf``, one rounding).
"""
from __future__ import annotations

from apps.common.register_tile import register_tile
from exo_hl.hw_libs import rvv
from exo_hl.stdlib import replace_all

try:   # imported as apps.sgemm_rvv.schedule: its own kernel, whatever
    from .kernel import sgemm          # module named 'kernel' is loaded
except ImportError:                    # a script's module (run.py)
    from kernel import sgemm


def instructions(fused=False):
    fma = rvv.rvv_vfmacc_vf_f32 if fused else rvv.rvv_vmacc_unfused_vf_f32
    return [rvv.rvv_vsetvl_e32m1, rvv.rvv_vle32_f32, rvv.rvv_vse32_f32, fma]


def schedule(vl=4, mr=4, nv=2, p=sgemm, fused=False):
    assert 1 <= vl <= rvv.LANES
    nr = nv * vl
    p = register_tile(p, mr, nr, vl, rvv.RVV, reg_lanes=rvv.LANES)
    for name in ('i1', 'i2', 'i1'):
        p = p.split(name, vl, name + 'o', name + 'i', tail='perfect')
    # the vector length, as config state, before the tile
    p = p.configwrite_at(p.find('C_reg : _'), rvv.VL, 'vl', str(vl),
                         before=True)
    p = replace_all(p, instructions(fused))
    p = p.unroll('jm').unroll('ii').unroll('i2o')
    for name in ('i1o', 'i0', 'i1o', 'i0'):
        p = p.unroll(name)
    return p.rename(f'sgemm_rvv_{mr}x{nv}v{vl}' + ('_fma' if fused else ''))
