"""insert_noop_call: printed result, equivalence (interpret and compiled C),
and a rejection for each safety condition."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import DRAM, SchedulingError, f32, proc, seq, size
from exo_hl.hw_libs.avx2 import mm256_loadu_ps, mm_prefetch_t0
from exo_hl.hw_libs.avx512 import mm_prefetch_t0 as pf512


@proc
def axpy(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] += 2.0 * x[i]


@proc
def touches(src: [f32][1] @ DRAM):
    src[0] = 0.0


def _guarded():
    p = axpy.add_guard(axpy.find_loop('i').body()[0], 'i + 8 < n')
    return p.insert_noop_call(p.find('if _: _').body()[0].before(),
                              mm_prefetch_t0, ['x[i + 8:i + 9]'])


def test_printed_and_c():
    q = _guarded()
    assert "        if i + 8 < n:\n" \
        "            mm_prefetch_t0(x[i + 8:i + 9])\n" \
        "            y[i] += 2.0 * x[i]" in str(q)
    assert "_mm_prefetch((const char *)&x[i + 8], _MM_HINT_T0);" \
        in q.c_code_str()
    assert pf512 is mm_prefetch_t0


@pytest.mark.parametrize("n", [1, 9, 37])
def test_equivalent_interpret_and_compiled(n):
    q = _guarded()
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    want = y0.copy()
    axpy.interpret(n, x, want)
    got = y0.copy()
    q.interpret(n, x, got)
    assert np.array_equal(got, want)
    got = y0.copy()
    q.compile()(n, x, got)
    assert np.array_equal(got, want)


def test_rejects_out_of_bounds():
    """Unguarded, i + 8 may be past x's end: a pointer C may not compute."""
    with pytest.raises(SchedulingError, match="out of bounds"):
        axpy.insert_noop_call(axpy.find_loop('i').body()[0].before(),
                              mm_prefetch_t0, ['x[i + 8:i + 9]'])


def test_rejects_a_callee_that_writes():
    with pytest.raises(SchedulingError, match="writes its argument 'src'"):
        axpy.insert_noop_call(axpy.find_loop('i').body()[0].before(),
                              touches, ['x[i:i + 1]'])
    with pytest.raises(SchedulingError, match="writes its argument 'dst'"):
        axpy.insert_noop_call(axpy.find_loop('i').body()[0].before(),
                              mm256_loadu_ps, ['y[0:8]', 'x[0:8]'])


def test_rejects_bad_arguments():
    gap = axpy.find_loop('i').body()[0].before()
    with pytest.raises(SchedulingError, match="takes 1 argument"):
        axpy.insert_noop_call(gap, mm_prefetch_t0, [])
    with pytest.raises(SchedulingError, match="list of expression"):
        axpy.insert_noop_call(gap, mm_prefetch_t0, 'x[i:i + 1]')
    with pytest.raises(SchedulingError):
        axpy.insert_noop_call(gap, mm_prefetch_t0, ['z[i:i + 1]'])
    with pytest.raises(SchedulingError):          # a window of 2, not 1
        axpy.insert_noop_call(gap, mm_prefetch_t0, ['x[0:2]'])
    with pytest.raises(SchedulingError, match="procedure or an @instr"):
        axpy.insert_noop_call(gap, "mm_prefetch_t0", ['x[i:i + 1]'])
