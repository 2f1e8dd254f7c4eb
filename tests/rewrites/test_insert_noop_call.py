"""insert_noop_call: printed result, equivalence (interpret and compiled C),
and a rejection for each safety condition."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (DRAM, SchedulingError, bf16, f32, i8, i32, proc, seq,
                    size, ui8)
from exo_hl.core_ir import datasem as D
from exo_hl.hw_libs.avx2 import mm256_loadu_ps, mm_prefetch_t0
from exo_hl.hw_libs.avx2 import mm_prefetch_t0_bf16 as pf_bf16
from exo_hl.hw_libs.avx2 import mm_prefetch_t0_epi8 as pf_i8
from exo_hl.hw_libs.avx2 import mm_prefetch_t0_epu8 as pf_u8
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


# the prefetch for the other element types (packed i8/ui8/bf16 panels)

@proc
def widen_i8(n: size, x: i8[n] @ DRAM, y: i32[n] @ DRAM):
    for i in seq(0, n):
        y[i] += x[i]


@proc
def widen_u8(n: size, x: ui8[n] @ DRAM, y: i32[n] @ DRAM):
    for i in seq(0, n):
        y[i] += x[i]


@proc
def widen_bf16(n: size, x: bf16[n] @ DRAM, y: f32[n] @ DRAM):
    for i in seq(0, n):
        y[i] += x[i]


TYPED = [(widen_i8, pf_i8, np.int8), (widen_u8, pf_u8, np.uint8),
         (widen_bf16, pf_bf16, "bf16")]


def _typed(p, pf):
    p = p.add_guard(p.find_loop('i').body()[0], 'i + 8 < n')
    return p.insert_noop_call(p.find('if _: _').body()[0].before(), pf,
                              ['x[i + 8:i + 9]'])


def _typed_inputs(dtype, n, rng):
    """x with the type's edge values first (bf16: bits of NaN, -0, inf,
    -inf, a denormal), then random; y random."""
    if dtype == "bf16":
        edges = np.array([0x7FC0, 0x8000, 0x7F80, 0xFF80, 0x0001, 0x3FC0],
                         np.uint16)
        x = D.f32_to_bf16_bits(rng.standard_normal(n).astype(np.float32))
        y = rng.standard_normal(n).astype(np.float32)
    else:
        info = np.iinfo(dtype)
        edges = np.array([info.min, info.max, 0, 1], dtype)
        x = rng.integers(info.min, int(info.max) + 1, n).astype(dtype)
        y = rng.integers(-2**20, 2**20, n).astype(np.int32)
    x[:min(n, len(edges))] = edges[:n]
    return x, y


@pytest.mark.parametrize("p,pf,dtype", TYPED,
                         ids=["epi8", "epu8", "bf16"])
def test_typed_prefetch_printed_c_and_equivalent(p, pf, dtype):
    q = _typed(p, pf)
    assert "        if i + 8 < n:\n" \
        f"            {pf.name()}(x[i + 8:i + 9])\n" \
        "            y[i] += x[i]" in str(q)
    assert "_mm_prefetch((const char *)&x[i + 8], _MM_HINT_T0);" \
        in q.c_code_str()
    rng = np.random.default_rng(7)
    for n in (1, 9, 37):
        x, y0 = _typed_inputs(dtype, n, rng)
        want = y0.copy()
        p.interpret(n, x, want)
        for run in (q.interpret, q.compile(), q.compile(emulate=True)):
            got = y0.copy()
            run(n, x, got)
            # bit for bit (NaN included)
            assert got.tobytes() == want.tobytes(), (pf.name(), n)


@pytest.mark.parametrize("p,pf,dtype", TYPED,
                         ids=["epi8", "epu8", "bf16"])
def test_typed_prefetch_rejections(p, pf, dtype):
    gap = p.find_loop('i').body()[0].before()
    with pytest.raises(SchedulingError, match="out of bounds"):
        p.insert_noop_call(gap, pf, ['x[i + 8:i + 9]'])
    # a window of another element type: the f32 prefetch, and each typed
    # one on the other types' buffers
    for other in [mm_prefetch_t0] + [o for _, o, _ in TYPED if o is not pf]:
        with pytest.raises(SchedulingError):
            p.insert_noop_call(gap, other, ['x[i:i + 1]'])
    with pytest.raises(SchedulingError):          # y is not of x's type
        p.insert_noop_call(gap, pf, ['y[i:i + 1]'])
    with pytest.raises(SchedulingError):          # a window of 2
        p.insert_noop_call(gap, pf, ['x[0:2]'])


def test_typed_prefetch_exported_by_both_libraries():
    from exo_hl.hw_libs import avx2, avx512
    for pf in (pf_i8, pf_u8, pf_bf16):
        assert getattr(avx2, pf.name()) is pf
        assert getattr(avx512, pf.name()) is pf
        # no value: never a candidate of replace_all / vectorize
        assert pf not in avx2.INSTRS and pf not in avx512.INSTRS


# a callee writing its own local buffer, through a window of it or a
# callee passed one: no effect on the caller (was refused, the message
# calling the window "its argument")

@proc
def _zero4(v: [f32][4]):
    for k in seq(0, 4):
        v[k] = 0.0


@proc
def scratch_window(src: [f32][1]):
    buf: f32[8]
    w = buf[2:6]
    for k in seq(0, 4):
        w[k] = src[0]
    _zero4(buf[4:8])


@proc
def writes_through_window(src: [f32][1]):
    w = src[0:1]
    w[0] = 1.0


@proc
def passes_argument_on(src: [f32][4]):
    _zero4(src)


@proc
def passes_window_of_argument(src: [f32][8]):
    w = src[2:8]
    _zero4(w[1:5])


def test_local_window_writes_are_no_effect():
    p = axpy.add_guard(axpy.find_loop('i').body()[0], 'i + 8 < n')
    q = p.insert_noop_call(p.find('if _: _').body()[0].before(),
                           scratch_window, ['x[i + 8:i + 9]'])
    assert "        if i + 8 < n:\n" \
        "            scratch_window(x[i + 8:i + 9])\n" \
        "            y[i] += 2.0 * x[i]" in str(q)
    f = q.compile()
    for n in (1, 9, 37):
        rng = np.random.default_rng(n)
        x = rng.standard_normal(n).astype(np.float32)
        y0 = rng.standard_normal(n).astype(np.float32)
        want, got, got_c = y0.copy(), y0.copy(), y0.copy()
        axpy.interpret(n, x, want)
        q.interpret(n, x, got)
        f(n, x.copy(), got_c)
        assert np.array_equal(got, want) and np.array_equal(got_c, want)


def test_writes_to_arguments_through_windows_and_callees_are_refused():
    gap = axpy.find_loop('i').body()[0].before()
    with pytest.raises(SchedulingError, match="writes its argument 'src' "
                       r"\(through the window 'w'\)"):
        axpy.insert_noop_call(gap, writes_through_window, ['x[i:i + 1]'])
    p = axpy.partial_eval(n=16)
    gap = p.find_loop('i').before()
    with pytest.raises(SchedulingError, match="writes its argument 'src'"):
        p.insert_noop_call(gap, passes_argument_on, ['x[0:4]'])
    with pytest.raises(SchedulingError, match="writes its argument 'src' "
                       r"\(through the window 'w'\)"):
        p.insert_noop_call(gap, passes_window_of_argument, ['x[0:8]'])


def test_config_writes_are_refused_also_in_callees():
    from exo_hl import config, index

    @config
    class NopCfg:
        k: index

    @proc
    def sets(src: [f32][1]):
        NopCfg.k = 1

    @proc
    def calls_sets(src: [f32][1]):
        buf: f32[1]
        sets(buf[0:1])

    gap = axpy.find_loop('i').body()[0].before()
    for callee in (sets, calls_sets):
        with pytest.raises(SchedulingError, match="'sets' writes the "
                           "configuration field 'NopCfg.k'"):
            axpy.insert_noop_call(gap, callee, ['x[i:i + 1]'])
