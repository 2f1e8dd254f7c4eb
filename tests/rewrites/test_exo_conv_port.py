"""Exo's x86 conv-layer schedule (``apps/x86/conv``), ported step for step.

The schedule below keeps Exo's spellings: free functions over procedures
(here the unbound ``Procedure`` methods), ``repeat``, ``replace_all``, the
``'a b'`` loop-nest patterns and ``#k`` occurrence suffixes. Only the vector
width changes (AVX-512's 16 lanes become AVX2's 8, so the instructions are
the ``mm256`` ones; ``mm512_set1_ps`` is ``mm256_broadcast_ss``, and the ReLU
instruction is defined here). The same lines at AVX-512's width, exactly
as Exo writes them, are accepted too. Every step is a checked primitive;
none is switched off.
"""
from __future__ import annotations

import pytest

from exo_hl import Procedure, SchedulingError, f32, instr, proc, seq, size
from exo_hl.core_ir.extern import relu
from exo_hl.hw_libs.avx2 import (AVX2, mm256_broadcast_ss, mm256_fmadd_ps,
                                 mm256_loadu_ps, mm256_storeu_ps)
from exo_hl.hw_libs.avx512 import (AVX512, mm512_fmadd_ps, mm512_loadu_ps,
                                   mm512_set1_ps, mm512_storeu_ps)
from exo_hl.stdlib import repeat, replace_all

# Exo's free-function spellings
rename = Procedure.rename
simplify = Procedure.simplify
divide_loop = Procedure.divide_loop
reorder_loops = Procedure.reorder_loops
autolift_alloc = Procedure.autolift_alloc
set_memory = Procedure.set_memory
fission = Procedure.fission
replace = Procedure.replace
bind_expr = Procedure.bind_expr
expand_dim = Procedure.expand_dim
lift_alloc = Procedure.lift_alloc


@proc
def conv(
    out_h: size,
    out_w: size,
    out_channel: size,
    in_h: size,
    in_w: size,
    in_channel: size,
    kernel_dim: size,
    batch_size: size,
    inp: f32[batch_size, in_h, in_w, in_channel],
    output: f32[batch_size, out_h, out_w, out_channel],
    weights: f32[in_channel, kernel_dim, kernel_dim, out_channel],
    bias: f32[out_channel],
):
    assert out_h == in_h - kernel_dim + 1
    assert out_w == in_w - kernel_dim + 1

    for oc in seq(0, out_channel):
        for n in seq(0, batch_size):
            for oy in seq(0, out_h):
                for ox in seq(0, out_w):
                    res: f32
                    res = bias[oc]
                    for ky in seq(0, kernel_dim):
                        for kx in seq(0, kernel_dim):
                            for kc in seq(0, in_channel):
                                res += (weights[kc, ky, kx, oc]
                                        * inp[n, oy + ky, ox + kx, kc])
                    relu_v: f32
                    relu_v = relu(res)
                    output[n, oy, ox, oc] = relu_v


@instr("{dst_data} = _mm256_max_ps({src_data}, _mm256_setzero_ps());",
       "#include <immintrin.h>\n", cpu_features={"avx2"})
def mm256_relu_ps(dst: [f32][8] @ AVX2, src: [f32][8] @ AVX2):
    for i in seq(0, 8):
        dst[i] = relu(src[i])


mm256_set1_ps = mm256_broadcast_ss   # Exo's mm512_set1_ps, at width 8


@instr("{dst_data} = _mm512_max_ps({src_data}, _mm512_setzero_ps());",
       "#include <immintrin.h>\n", cpu_features={"avx512f"})
def mm512_relu_ps(dst: [f32][16] @ AVX512, src: [f32][16] @ AVX512):
    for i in seq(0, 16):
        dst[i] = relu(src[i])


VEC_W = 8                            # Exo: 16 (AVX-512)
TILE_W, TILE_H = 4, 5
EXO_SIZES = (80, 100, 128, 3, 5)     # Exo's H, W, C, K, N


def do_specialization(p, H, W, C, K, N):
    """Exo's schedule, line for line."""
    p = rename(p, "conv_specialized")
    p = p.partial_eval(H, W, C, H + 2, W + 2, C, K, N)
    p = simplify(p)
    #
    p = divide_loop(p, "oc", TILE_W * VEC_W, ["oc_o", "oc_i"], perfect=True)
    p = reorder_loops(p, "oc_i n")
    p = reorder_loops(p, "oc_i oy")
    p = reorder_loops(p, "oc_i ox")
    #
    p = divide_loop(p, "ox", TILE_H, ["ox_o", "ox_i"], perfect=True)
    #
    p = divide_loop(p, "oc_i", VEC_W, ["oc_u", "oc_v"], perfect=True)
    #
    p = autolift_alloc(p, "res: _", n_lifts=3, keep_dims=True)
    p = set_memory(p, "res", AVX2)
    p = fission(p, p.find("res[_] = bias[_]").after(), n_lifts=3)
    p = replace(p, "for oc_v in _: _ #0", mm256_loadu_ps)
    #
    p = fission(p, p.find("for ky in _: _").after(), n_lifts=3)
    #
    p = autolift_alloc(p, "relu_v: _", keep_dims=True)
    p = set_memory(p, "relu_v", AVX2)
    p = fission(p, p.find("relu_v = _").after())
    p = replace(p, "for oc_v in _: _ #2", mm256_storeu_ps)
    #
    p = repeat(reorder_loops)(p, "ox_i oc_u")
    p = reorder_loops(p, "ox_i oc_v")
    p = reorder_loops(p, "ox_i ky")
    p = reorder_loops(p, "ox_i kx")
    #
    p = reorder_loops(p, "oc_v ky")
    p = reorder_loops(p, "oc_v kx")
    p = reorder_loops(p, "oc_u ky")
    p = reorder_loops(p, "oc_u kx")
    #
    p = reorder_loops(p, "ox_i kc")
    p = reorder_loops(p, "oc_v kc")
    p = reorder_loops(p, "oc_u kc")
    #
    p = reorder_loops(p, "oc_v ox_i")
    p = repeat(reorder_loops)(p, "oc_u ox_i")

    #
    def stage_input(p, read_expr, name):
        p = bind_expr(p, read_expr, name)
        p = expand_dim(p, name, VEC_W, "oc_v")
        p = lift_alloc(p, name)
        p = set_memory(p, name, AVX2)
        p = fission(p, p.find(f"{name}[_] = _").after())
        return p

    p = stage_input(p, "weights[_]", "wt_vec")
    p = stage_input(p, "inp[_]", "in_vec")
    #
    p = replace_all(p, mm256_relu_ps)
    p = replace_all(p, mm256_set1_ps)
    p = replace_all(p, mm256_fmadd_ps)
    p = replace_all(p, mm256_loadu_ps)
    #
    p = divide_loop(p, "kc", 2, ["kc_o", "kc_i"], perfect=True)
    #
    p = simplify(p)
    return p


def do_specialization_avx512(p, H, W, C, K, N):
    """Exo's schedule exactly as written, at AVX-512's width (16 lanes)."""
    VEC_W = 16
    p = rename(p, "conv_specialized")
    p = p.partial_eval(H, W, C, H + 2, W + 2, C, K, N)
    p = simplify(p)
    #
    p = divide_loop(p, "oc", TILE_W * VEC_W, ["oc_o", "oc_i"], perfect=True)
    p = reorder_loops(p, "oc_i n")
    p = reorder_loops(p, "oc_i oy")
    p = reorder_loops(p, "oc_i ox")
    #
    p = divide_loop(p, "ox", TILE_H, ["ox_o", "ox_i"], perfect=True)
    #
    p = divide_loop(p, "oc_i", VEC_W, ["oc_u", "oc_v"], perfect=True)
    #
    p = autolift_alloc(p, "res: _", n_lifts=3, keep_dims=True)
    p = set_memory(p, "res", AVX512)
    p = fission(p, p.find("res[_] = bias[_]").after(), n_lifts=3)
    p = replace(p, "for oc_v in _: _ #0", mm512_loadu_ps)
    #
    p = fission(p, p.find("for ky in _: _").after(), n_lifts=3)
    #
    p = autolift_alloc(p, "relu_v: _", keep_dims=True)
    p = set_memory(p, "relu_v", AVX512)
    p = fission(p, p.find("relu_v = _").after())
    p = replace(p, "for oc_v in _: _ #2", mm512_storeu_ps)
    #
    p = repeat(reorder_loops)(p, "ox_i oc_u")
    p = reorder_loops(p, "ox_i oc_v")
    p = reorder_loops(p, "ox_i ky")
    p = reorder_loops(p, "ox_i kx")
    #
    p = reorder_loops(p, "oc_v ky")
    p = reorder_loops(p, "oc_v kx")
    p = reorder_loops(p, "oc_u ky")
    p = reorder_loops(p, "oc_u kx")
    #
    p = reorder_loops(p, "ox_i kc")
    p = reorder_loops(p, "oc_v kc")
    p = reorder_loops(p, "oc_u kc")
    #
    p = reorder_loops(p, "oc_v ox_i")
    p = repeat(reorder_loops)(p, "oc_u ox_i")

    #
    def stage_input(p, read_expr, name):
        p = bind_expr(p, read_expr, name)
        p = expand_dim(p, name, 16, "oc_v")
        p = lift_alloc(p, name)
        p = set_memory(p, name, AVX512)
        p = fission(p, p.find(f"{name}[_] = _").after())
        return p

    p = stage_input(p, "weights[_]", "wt_vec")
    p = stage_input(p, "inp[_]", "in_vec")
    #
    p = replace_all(p, mm512_relu_ps)
    p = replace_all(p, mm512_set1_ps)
    p = replace_all(p, mm512_fmadd_ps)
    p = replace_all(p, mm512_loadu_ps)
    #
    p = divide_loop(p, "kc", 2, ["kc_o", "kc_i"], perfect=True)
    #
    p = simplify(p)
    return p


EXPECTED = """\
def conv_specialized(inp: f32[5, 82, 102, 128] @ DRAM,
                     output: f32[5, 80, 100, 128] @ DRAM,
                     weights: f32[128, 3, 3, 128] @ DRAM,
                     bias: f32[128] @ DRAM):
    for oc_o in seq(0, 4):
        for n in seq(0, 5):
            for oy in seq(0, 80):
                for ox_o in seq(0, 20):
                    res: f32[5, 4, 8] @ AVX2
                    for ox_i in seq(0, 5):
                        for oc_u in seq(0, 4):
                            mm256_loadu_ps(
                                res[ox_i, oc_u, 0:8],
                                bias[32 * oc_o + 8 * oc_u:32 * oc_o + 8 * oc_u + 8])
                    for ky in seq(0, 3):
                        for kx in seq(0, 3):
                            for kc_o in seq(0, 64):
                                for kc_i in seq(0, 2):
                                    for ox_i in seq(0, 5):
                                        for oc_u in seq(0, 4):
                                            wt_vec: f32[8] @ AVX2
                                            mm256_loadu_ps(
                                                wt_vec[0:8],
                                                weights[2 * kc_o + kc_i, ky, kx, 32 * oc_o + 8 * oc_u:32 * oc_o + 8 * oc_u + 8])
                                            in_vec: f32[8] @ AVX2
                                            mm256_broadcast_ss(
                                                in_vec[0:8],
                                                inp[n, oy + ky, kx + 5 * ox_o + ox_i, 2 * kc_o + kc_i:2 * kc_o + kc_i + 1])
                                            mm256_fmadd_ps(res[ox_i, oc_u, 0:8],
                                                           wt_vec[0:8],
                                                           in_vec[0:8])
                    for ox_i in seq(0, 5):
                        for oc_u in seq(0, 4):
                            relu_v: f32[8] @ AVX2
                            mm256_relu_ps(relu_v[0:8], res[ox_i, oc_u, 0:8])
                            mm256_storeu_ps(
                                output[n, oy, 5 * ox_o + ox_i, 32 * oc_o + 8 * oc_u:32 * oc_o + 8 * oc_u + 8],
                                relu_v[0:8])"""


def _steps(p):
    """The number of recorded scheduling steps from ``conv`` to ``p``."""
    n = 0
    while p is not None and p is not conv:
        n, p = n + 1, p.parent()
    assert p is conv
    return n


def test_exo_conv_schedule_at_exo_sizes():
    p = do_specialization(conv, *EXO_SIZES)
    assert str(p) == EXPECTED
    # Exo's 47 lines; the two ``repeat(reorder_loops)`` lines take 3 and 2
    # reorders, and each ``replace_all`` one replace per matched loop
    assert _steps(p) >= 47
    src = p.c_code_str()
    assert "_mm256_fmadd_ps(" in src and "_mm256_max_ps(" in src


SMALL = [(1, 5, 32, 3, 1), (2, 10, 32, 3, 2)]


@pytest.mark.parametrize("H,W,C,K,N", SMALL)
def test_exo_conv_schedule_equivalent(H, W, C, K, N, equiv):
    p = do_specialization(conv, H, W, C, K, N)
    sizes = {"out_h": H, "out_w": W, "out_channel": C, "in_h": H + 2,
             "in_w": W + 2, "in_channel": C, "kernel_dim": K,
             "batch_size": N}
    equiv(conv, p, [sizes])


def test_exo_conv_schedule_as_written_at_avx512_width(equiv):
    """Exo's lines unchanged (16 lanes): accepted, and equal to ``conv``
    (the compiled C runs AVX-512 through the emulation shim here)."""
    big = do_specialization_avx512(conv, *EXO_SIZES)
    small = do_specialization(conv, *EXO_SIZES)
    # the same schedule with twice the lanes: 2 x 16 columns per tile
    # instead of 4 x 8
    assert str(big).count("mm512_fmadd_ps(") == 1
    assert "res: f32[5, 4, 16] @ AVX512" in str(big)
    assert "oc_o in seq(0, 2)" in str(big) and "oc_o in seq(0, 4)" in str(small)
    p = do_specialization_avx512(conv, 1, 5, 64, 3, 1)
    equiv(conv, p, [{"out_h": 1, "out_w": 5, "out_channel": 64, "in_h": 3,
                     "in_w": 7, "in_channel": 64, "kernel_dim": 3,
                     "batch_size": 1}])


def test_exo_conv_schedule_refuses_what_does_not_hold():
    # the tiles must divide the specialised extents exactly (perfect=True)
    with pytest.raises(SchedulingError):
        do_specialization(conv, 80, 98, 128, 3, 5)     # 98 % 5 != 0
    with pytest.raises(SchedulingError):
        do_specialization(conv, 80, 100, 48, 3, 5)     # 48 % 32 != 0
    # Exo specialises in_h = H + 2: the sizes violate the asserts unless K = 3
    with pytest.raises(SchedulingError, match="precondition"):
        do_specialization(conv, 80, 100, 128, 2, 5)


def test_exo_conv_schedule_history_reruns():
    """The recorded history (gap cursors shown as ``.after()``) re-runs to
    the same procedure."""
    from exo_hl.core_ir.printer import alpha_equal
    p = do_specialization(conv, 1, 5, 32, 3, 1)
    text = p.history()
    assert ").after(), n_lifts=3)" in text
    scope = {"conv": conv, "AVX2": AVX2, "mm256_loadu_ps": mm256_loadu_ps,
             "mm256_storeu_ps": mm256_storeu_ps,
             "mm256_broadcast_ss": mm256_broadcast_ss,
             "mm256_fmadd_ps": mm256_fmadd_ps, "mm256_relu_ps": mm256_relu_ps}
    exec(text, scope)
    assert alpha_equal(scope["p"].ir(), p.ir())
