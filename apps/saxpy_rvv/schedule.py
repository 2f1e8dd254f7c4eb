"""The schedule: each strip of ``saxpy_strips`` (kernel.py) onto RVV
instructions at the machine's vector length, by checked rewrites.

``saxpy_vl``'s loop over the ``vl`` elements of a strip: ``x``'s and
``y``'s elements are staged into registers (``stage_mem``), each register
sized for any machine (``resize_dim`` to ``MAX_LANES`` = 2048 lanes, the
most a register has: only the first ``vl <= VLMAX`` are touched) and put
in ``RVV``; ``replace_all`` then selects ``vle32.v`` twice, the
multiply-add and ``vse32.v``, each proven to run under ``vl`` lanes
(``VL.vl == vl``). ``call_eqv`` puts the scheduled strip into
``saxpy_strip`` and that into ``saxpy_strips``.

``fused=False`` (default): ``rvv_vmacc_unfused_vf_f32`` (two roundings,
equal to ``interpret()`` bit for bit); ``fused=True``:
``rvv_vfmacc_vf_f32`` (one rounding).
"""
from __future__ import annotations

from exo_hl.hw_libs import rvv
from exo_hl.stdlib import replace_all

try:
    from kernel import saxpy_strip, saxpy_strips, saxpy_vl
except ImportError:                    # imported as apps.saxpy_rvv
    from .kernel import saxpy_strip, saxpy_strips, saxpy_vl


def schedule_strip(fused=False):
    """``saxpy_vl`` on RVV registers of the machine's length."""
    p = saxpy_vl.stage_mem(saxpy_vl.find_loop('i'), 'x[off:off + vl]', 'xr')
    p = p.stage_mem(p.find('y[_] += _').parent(), 'y[off:off + vl]', 'yr')
    for b in ('xr', 'yr'):
        p = p.resize_dim(b, 0, str(rvv.MAX_LANES), 0)
        p = p.set_memory(b, rvv.RVV)
    fma = rvv.rvv_vfmacc_vf_f32 if fused else rvv.rvv_vmacc_unfused_vf_f32
    p = replace_all(p, [rvv.rvv_vle32_f32, rvv.rvv_vse32_f32, fma])
    return p.rename('saxpy_vl_rvv' + ('_fma' if fused else ''))


def schedule(fused=False):
    """``saxpy_strips`` with every strip in RVV instructions."""
    tag = '_fma' if fused else ''
    strip = saxpy_strip.call_eqv(saxpy_strip.find('saxpy_vl(_)'),
                                 schedule_strip(fused))
    strip = strip.rename('saxpy_strip_rvv' + tag)
    p = saxpy_strips.call_eqv(saxpy_strips.find('saxpy_strip(_)'), strip)
    return p.rename('saxpy_rvv' + tag)
