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
``rvv_vfmacc_vf_f32`` (one rounding). ``lmul=8``: the same on register
groups of 8 (``saxpy_strips8``, ``RVVM8``, the ``_f32m8`` instructions).
"""
from __future__ import annotations

from exo_hl.hw_libs import rvv
from exo_hl.stdlib import replace_all

try:   # imported as apps.saxpy_rvv.schedule: its own kernel, whatever
    from . import kernel as K          # module named 'kernel' is loaded
except ImportError:                    # a script's module (run.py)
    import kernel as K

#: LMUL -> (strip body, strip, strip loop, register memory, instructions)
_LMUL = {
    1: (K.saxpy_vl, K.saxpy_strip, K.saxpy_strips, rvv.RVV,
        (rvv.rvv_vle32_f32, rvv.rvv_vse32_f32, rvv.rvv_vfmacc_vf_f32,
         rvv.rvv_vmacc_unfused_vf_f32)),
    8: (K.saxpy_vl8, K.saxpy_strip8, K.saxpy_strips8, rvv.RVVM8,
        (rvv.rvv_vle32_f32m8, rvv.rvv_vse32_f32m8, rvv.rvv_vfmacc_vf_f32m8,
         rvv.rvv_vmacc_unfused_vf_f32m8)),
}


def _tag(fused, lmul):
    return ('_m8' if lmul == 8 else '') + ('_fma' if fused else '')


def schedule_strip(fused=False, lmul=1):
    """The strip body on RVV registers (``lmul`` 1) or register groups
    (``lmul`` 8) of the machine's length."""
    body, _, _, mem, (vle, vse, fma, macc) = _LMUL[lmul]
    p = body.stage_mem(body.find_loop('i'), 'x[off:off + vl]', 'xr')
    p = p.stage_mem(p.find('y[_] += _').parent(), 'y[off:off + vl]', 'yr')
    for b in ('xr', 'yr'):
        p = p.resize_dim(b, 0, str(rvv.MAX_LANES * lmul), 0)
        p = p.set_memory(b, mem)
    p = replace_all(p, [vle, vse, fma if fused else macc])
    return p.rename('saxpy_vl_rvv' + _tag(fused, lmul))


def schedule(fused=False, lmul=1):
    """The strip loop with every strip in RVV instructions: registers
    (``lmul=1``) or groups of 8 (``lmul=8``)."""
    body, strip0, strips, _, _ = _LMUL[lmul]
    strip = strip0.call_eqv(strip0.find(f'{body.name()}(_)'),
                            schedule_strip(fused, lmul))
    strip = strip.rename('saxpy_strip_rvv' + _tag(fused, lmul))
    p = strips.call_eqv(strips.find(f'{strip0.name()}(_)'), strip)
    return p.rename('saxpy_rvv' + _tag(fused, lmul))
