"""The Gemmini conv app: the schedule is exactly numpy (interpreted and
compiled against the C model), every stage is still the algorithm, the
instruction counts are the ones the tiling predicts, the schedule uses
checked rewrites only, and unsafe steps are refused."""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import apps.gemmini_conv.conv as conv_app
from apps.gemmini_conv.conv import (BATCH, LAYERS, configure, conv,
                                    conv_relu, stages)
from apps.gemmini_conv.run import (default_scale, expected_count, inputs,
                                   naive_config_count, naive_count,
                                   reference, run_compiled, run_interpreted)
from exo_hl import Procedure, SchedulingError
from exo_hl.hw_libs.gemmini import (ConfigLoadAcc, ConfigLoadId1,
                                    config_ld_acc, config_ld_id1,
                                    ld_acc_i32_bcast, ld_i8_id1)

STAGES = stages(conv)
FINAL = STAGES[-1][1]
RELU = stages(conv_relu)[-1][1]


def _case(B, D, IC, OC, seed, relu=False):
    inp, w, bias = inputs(B, D, IC, OC, np.random.default_rng(seed))
    scale = default_scale(IC)
    return (inp, w, bias, scale), reference(inp, w, bias, scale, relu)


@pytest.mark.parametrize("B,D,IC,OC", [(1, 4, 16, 16), (2, 3, 32, 16),
                                       (3, 1, 16, 32), (1, 2, 16, 16)])
def test_schedule_equals_numpy(B, D, IC, OC):
    """Interpreted and compiled, on sizes where every pixel is a border
    pixel (D <= 2) or some are inside (D >= 3)."""
    (inp, w, bias, scale), want = _case(B, D, IC, OC, B * 100 + D)
    assert np.array_equal(
        run_interpreted(FINAL, B, D, IC, OC, scale, inp, w, bias), want)
    out, n, n_cfg = run_compiled(FINAL, B, D, IC, OC, scale, inp, w, bias)
    assert np.array_equal(out, want)
    assert (n, n_cfg) == (expected_count(B, D, IC, OC), 4)


@pytest.mark.parametrize("layer", LAYERS,
                         ids=lambda s: "x".join(map(str, s)))
def test_paper_layers_reduced(layer):
    """Each ResNet-50 layer's channel counts, one image, D cut to 4,
    through the C model: bit-exact with saturated and exact outputs, the
    predicted counts, fewer than the naive per-tile count."""
    _, OC, IC = layer
    B, D = 1, 4
    (inp, w, bias, scale), want = _case(B, D, IC, OC, OC)
    assert (want == 127).any() and (want == -128).any()
    assert ((want > -128) & (want < 127)).mean() > 0.5
    out, n, n_cfg = run_compiled(FINAL, B, D, IC, OC, scale, inp, w, bias)
    assert np.array_equal(out, want)
    assert (n, n_cfg) == (expected_count(B, D, IC, OC), 4)
    assert n < naive_count(B, D, IC, OC)
    assert n_cfg < naive_config_count(B, D, IC, OC)


def test_relu_variant_equals_numpy():
    B, D, IC, OC = 2, 3, 16, 32
    (inp, w, bias, scale), want = _case(B, D, IC, OC, 9, relu=True)
    assert (want == 0).any() and (want == 127).any()
    assert not np.array_equal(want, reference(inp, w, bias, scale))
    assert np.array_equal(
        run_interpreted(RELU, B, D, IC, OC, scale, inp, w, bias), want)
    out, n, _ = run_compiled(RELU, B, D, IC, OC, scale, inp, w, bias)
    assert np.array_equal(out, want) and n == expected_count(B, D, IC, OC)
    assert "config_st(stride(out, 0), True)" in str(RELU)


def test_every_stage_is_the_algorithm():
    B, D, IC, OC = 2, 3, 16, 16
    (inp, w, bias, scale), want = _case(B, D, IC, OC, 3)
    for what, p in STAGES:
        assert np.array_equal(
            run_interpreted(p, B, D, IC, OC, scale, inp, w, bias), want), what


def test_final_kernel_is_instructions_configured_once():
    body = FINAL.ir().body
    assert [type(s).__name__ for s in body] == ["Call"] * 4 + ["For"]
    assert [s.f.name for s in body[:4]] == ["config_ld_acc", "config_ld",
                                            "config_ld_id1", "config_st"]
    text = str(FINAL)
    assert "+=" not in text and "clamp_i8" not in text and " = " not in text
    # the padding guard stays, around the taps' instructions
    assert "if (oy + ky >= 1 and oy + ky < D + 1" in text


def test_channels_must_be_multiples_of_16():
    """The schedule splits channels by 16 without a tail: the algorithm's
    precondition refuses other channel counts before anything runs."""
    inp, w, bias = inputs(1, 4, 24, 16, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"IC % 16 == 0"):
        run_compiled(FINAL, 1, 4, 24, 16, 0.01, inp, w, bias)
    inp, w, bias = inputs(1, 4, 16, 40, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"OC % 16 == 0"):
        run_interpreted(FINAL, 1, 4, 16, 40, 0.01, inp, w, bias)


def test_schedule_has_no_unchecked_step():
    """Every step of the schedule is a Procedure method (each checks its own
    safety); the API offers no unchecked variant to call instead."""
    assert not [m for m in dir(Procedure)
                if re.search(r"unsafe|unchecked|no_check|skip", m, re.I)]
    src = inspect.getsource(conv_app)
    called = set(re.findall(r"\bp\.(\w+)\(", src))
    assert called and all(callable(getattr(Procedure, m)) for m in called)
    assert not re.search(r"\w*(unsafe|unchecked|disable)\w*\(", src, re.I)
    assert STAGES[0][1] is conv


def _before_configs():
    return dict(STAGES)["matmul instruction"]


def test_wrong_weight_stride_is_rejected():
    p = configure(_before_configs(),
                  [(ConfigLoadId1, 'src_stride', 'stride(w, 1)')],
                  config_ld_id1)
    with pytest.raises(SchedulingError):
        p.replace(p.find_loop('i2'), ld_i8_id1)


def test_bias_broadcast_needs_stride_zero():
    p = configure(_before_configs(),
                  [(ConfigLoadAcc, 'src_stride', 'stride(bias, 0)')],
                  config_ld_acc)
    with pytest.raises(SchedulingError):
        p.replace(p.find_loop('b'), ld_acc_i32_bcast)


def test_padding_guard_cannot_be_dropped():
    """A tap outside the image must add nothing: the guard is not always
    true, so removing it (keeping its body) is refused, and it cannot be
    lifted above the loops over ky or kx that it reads."""
    p = _before_configs()
    with pytest.raises(SchedulingError):
        p.eliminate_dead_code(p.find('if _: _'))
    with pytest.raises(SchedulingError):
        p.lift_if(p.find('if _: _'), n_lifts=1)


def test_relu_store_cannot_replace_the_plain_store():
    with pytest.raises(SchedulingError):
        stages(conv, relu=True)


@pytest.mark.slow
def test_paper_layers_full_size():
    """The four ResNet-50 layers, batch 4, full size, through the C model
    (about 15 seconds with the schedules): bit-exact and the predicted
    counts."""
    for (D, OC, IC), p, relu in zip(LAYERS, (FINAL, RELU, FINAL, RELU),
                                    (False, True, False, True)):
        (inp, w, bias, scale), want = _case(BATCH, D, IC, OC, D, relu)
        out, n, n_cfg = run_compiled(p, BATCH, D, IC, OC, scale, inp, w,
                                     bias)
        assert np.array_equal(out, want), (D, OC, IC)
        assert (n, n_cfg) == (expected_count(BATCH, D, IC, OC), 4)
