"""``stage_mem`` of a ``bf16`` buffer and signaling NaNs (audit 15a).

A ``bf16`` stored into a ``bf16`` quiets a signaling NaN (docs/semantics.md),
so the load copy of ``stage_mem`` changes the bits of such an element.
Staging was accepted where that shows, and the result differed from the
original in ``interpret()`` and in C: an element the block does not write,
written back (``0x7f81`` became ``0x7fc1``), and a staged value copied
into an ``f32`` without arithmetic. Both are refused now; staging whose
block writes the whole window, or only computes with the staged values,
is still accepted (the AMX GEMM stages its bf16 operands that way).
"""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import SchedulingError, bf16, config, f32, proc, seq

SNAN = 0x7F81           # a signaling NaN's bf16 bits (quiet: 0x7fc1)


@proc
def partial(x: bf16[8], y: f32[8]):
    for i in seq(0, 4):
        x[i + 1] = y[i]


@proc
def copy_out(x: bf16[8], y: f32[8]):
    for i in seq(0, 4):
        y[i] = x[i]


@proc
def cp(p: [bf16][4], q: [f32][4]):
    for i in seq(0, 4):
        q[i] = p[i]


@proc
def copy_out_call(x: bf16[8], y: f32[8]):
    for i in seq(0, 2):
        cp(x[0:4], y[4:8])


@config
class Bcfg:
    v: f32


@proc
def copy_out_config(x: bf16[8], y: f32[8]):
    for i in seq(0, 4):
        Bcfg.v = x[i]
        y[i] = Bcfg.v


@proc
def whole(x: bf16[8], y: f32[8]):
    for i in seq(0, 8):
        x[i] = x[i] * y[i]


@proc
def compute(x: bf16[8], y: f32[8]):
    for i in seq(0, 4):
        y[i] += x[i] * x[i + 1]


def _run(p, fn=None):
    x = np.zeros(8, np.uint16)
    x[0] = x[6] = SNAN
    y = np.ones(8, np.float32)
    (fn or p.interpret)(x, y)
    return x.tolist(), y.view(np.uint32).tolist()


@pytest.mark.parametrize("p, window, why", [
    (partial, "x[0:8]", "store would write back"),
    (copy_out, "x[0:4]", "copied without arithmetic"),
    (copy_out_call, "x[0:4]", "copied without arithmetic"),
    (copy_out_config, "x[0:4]", "copied without arithmetic"),
])
def test_staging_that_shows_the_quieting_copy_is_refused(p, window, why):
    with pytest.raises(SchedulingError, match=why):
        p.stage_mem(p.find_loop("i"), window, "s")


@pytest.mark.parametrize("p, window", [(whole, "x[0:8]"),
                                       (compute, "x[0:5]"),
                                       (partial, "x[1:5]")])
def test_staging_that_hides_it_is_kept(p, window):
    q = p.stage_mem(p.find_loop("i"), window, "s")
    assert _run(q) == _run(p) == _run(q, q.compile())
