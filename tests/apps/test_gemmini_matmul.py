"""The Gemmini int8 matmul app: the schedule is exactly numpy (interpreted
and compiled against the C model), every stage is still the algorithm, the
hoisted kernel issues fewer instructions, and unsafe steps are refused."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from apps.gemmini_matmul.matmul import (SHAPES, hoist_config, matmul,
                                        matmul_relu, stages)
from apps.gemmini_matmul.run import (inputs, naive_config_count, naive_count,
                                     reference, run_both, run_compiled)
from exo_hl import BoundsError, SchedulingError
from exo_hl.hw_libs.gemmini import ConfigLoad, ld_i8

STAGES = stages(matmul)
FINAL = STAGES[-1][1]


@pytest.mark.parametrize("sizes,scale", [((16, 16, 16), 0.01),
                                         ((32, 48, 64), 0.0125),
                                         ((48, 16, 32), 0.003)])
def test_schedule_equals_numpy(sizes, scale):
    M, N, K = sizes
    A, B = inputs(M, N, K, np.random.default_rng(sum(sizes)))
    want = reference(A, B, scale)
    assert (want == 127).any() or (want == -128).any()   # saturation seen
    assert ((want > -128) & (want < 127)).any()          # and exact values
    Ci, Cc, n = run_both(FINAL, M, N, K, scale, A, B)
    assert np.array_equal(Ci, want)
    assert np.array_equal(Cc, want)
    tiles, kb = (M // 16) * (N // 16), K // 16
    # 3 configs once; per output tile: zero, mvout; per block: 2 mvin + 2
    assert n == 3 + tiles * (2 + 4 * kb)
    assert n < naive_count(M, N, K) or tiles * kb == 1


def test_every_stage_is_the_algorithm():
    M, N, K = 32, 16, 32
    A, B = inputs(M, N, K, np.random.default_rng(7))
    want = reference(A, B, 0.02)
    s = np.array([0.02], np.float32)
    for what, p in STAGES:
        C = np.zeros((M, N), np.int8)
        p.interpret(M=M, N=N, K=K, scale=s, A=A, B=B, C=C)
        assert np.array_equal(C, want), what


def test_final_kernel_is_instructions_with_configs_hoisted():
    body = FINAL.ir().body
    top = [type(s).__name__ for s in body]
    assert top == ["Call", "Call", "Call", "For"]
    assert [s.f.name for s in body[:3]] == ["config_ld", "config_ld_id1",
                                            "config_st"]
    text = str(FINAL)
    assert "+=" not in text and "clamp_i8" not in text


def _before_configured_loads():
    return dict(STAGES)["zero_acc / matmul instructions"]


def test_load_with_wrong_stride_config_is_rejected():
    p = _before_configured_loads()
    bad = p.configwrite_at(p.find_loop('i0'), ConfigLoad, 'src_stride',
                           'stride(B, 0)', before=True)
    with pytest.raises((SchedulingError, BoundsError)):
        bad.replace(bad.find_loop('i0'), ld_i8)
    with pytest.raises((SchedulingError, BoundsError)):   # no config at all
        p.replace(p.find_loop('i0'), ld_i8)


def test_config_cannot_be_hoisted_past_a_load_that_needs_another_value():
    """Configure engine 0 for A, then re-configure it for a second load of B
    in the same loop: the second write changes the register between loads,
    so hoisting it above the A load is refused."""
    p = _before_configured_loads()
    p = p.configwrite_at(p.find_loop('i0'), ConfigLoad, 'src_stride',
                         'stride(A, 0)', before=True)
    p = p.replace(p.find_loop('i0'), ld_i8)
    p = p.configwrite_at(p.find_loop('i2'), ConfigLoad, 'src_stride',
                         'stride(B, 0)', before=True)
    p = p.replace(p.find_loop('i2'), ld_i8)
    with pytest.raises(SchedulingError):
        hoist_config(p, 'ConfigLoad.src_stride = _ #1', 1)




@functools.cache
def _relu():
    """The ReLU schedule, built on first use inside a test (so the
    procedure audit samples its stages instead of checking every one)."""
    return stages(matmul_relu)[-1][1]


def _expected_counts(M, N, K):
    tiles, kb = (M // 16) * (N // 16), K // 16
    return 3 + tiles * (2 + 4 * kb), 3


@pytest.mark.parametrize("shape", SHAPES,
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("relu", [False, True])
def test_paper_shapes_with_fewer_rows(shape, relu):
    """Every ResNet-50 shape with M cut to 32 rows (same N and K) through
    the C model: bit-exact, and the counts of the hoisted schedule."""
    _, N, K = shape
    M = 32
    A, B = inputs(M, N, K, np.random.default_rng(N + K))
    want = reference(A, B, 0.0125, relu)
    C, n, n_cfg = run_compiled(_relu() if relu else FINAL, M, N, K, 0.0125,
                               A, B)
    assert np.array_equal(C, want)
    assert (n, n_cfg) == _expected_counts(M, N, K)
    assert n < naive_count(M, N, K)
    assert n_cfg < naive_config_count(M, N, K)


def test_relu_schedule_equals_numpy_and_is_configured_for_it():
    M, N, K = 32, 48, 32
    A, B = inputs(M, N, K, np.random.default_rng(5))
    want = reference(A, B, 0.01, relu=True)
    assert (want == 0).any() and (want == 127).any()
    assert not np.array_equal(want, reference(A, B, 0.01))
    Ci, Cc, _ = run_both(_relu(), M, N, K, 0.01, A, B)
    assert np.array_equal(Ci, want) and np.array_equal(Cc, want)
    text = str(_relu())
    assert "config_st(stride(C, 0), True)" in text
    assert "st_acc_i8_relu(" in text and "relu(acc_scale" not in text


def test_relu_store_cannot_replace_the_plain_store():
    """The plain algorithm has no ReLU: scheduling it with the ReLU store
    (activation register on) is refused."""
    with pytest.raises(SchedulingError):
        stages(matmul, relu=True)


@pytest.mark.slow
def test_paper_shapes_full_size():
    """The six ResNet-50 shapes at full size through the C model (about
    ten seconds): bit-exact and the expected counts."""
    rng = np.random.default_rng(11)
    for M, N, K in SHAPES:
        A, B = inputs(M, N, K, rng)
        C, n, n_cfg = run_compiled(FINAL, M, N, K, 0.0125, A, B)
        assert np.array_equal(C, reference(A, B, 0.0125)), (M, N, K)
        assert (n, n_cfg) == _expected_counts(M, N, K)
