"""The Gemmini int8 matmul app: the schedule is exactly numpy (interpreted
and compiled against the C model), every stage is still the algorithm, the
hoisted kernel issues fewer instructions, and unsafe steps are refused."""
from __future__ import annotations

import numpy as np
import pytest

from apps.gemmini_matmul.matmul import hoist_config, matmul, stages
from apps.gemmini_matmul.run import inputs, naive_count, reference, run_both
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
