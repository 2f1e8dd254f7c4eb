"""The Gemmini conv app: the schedule is exactly numpy (interpreted and
compiled against the C model), every stage is still the algorithm, the
instruction counts are the ones the tiling predicts, the schedule uses
checked rewrites only, and unsafe steps are refused."""
from __future__ import annotations

import functools
import inspect
import re

import numpy as np
import pytest

import apps.gemmini_conv.conv as conv_app
from apps.gemmini_conv.conv import (BATCH, LAYERS, _in_part, configure,
                                    conv, conv_relu, stages)
from apps.gemmini_conv.run import (default_scale, expected_count, inputs,
                                   naive_config_count, naive_count,
                                   reference, run_compiled, run_interpreted)
from exo_hl import Procedure, SchedulingError
from exo_hl.hw_libs.gemmini import (ConfigLoadAcc, ConfigLoadId1,
                                    ConfigStore, config_ld_acc,
                                    config_ld_id1, config_st,
                                    ld_acc_i32_bcast, ld_i8_id1, st_acc_i8,
                                    st_acc_i8_relu)



# Built on first use, inside a test: the suite's procedure audit then
# checks a capped sample of the schedule's intermediate procedures instead
# of every one (as it would for procedures made at import).
@functools.cache
def _stages(relu=False):
    return stages(conv_relu if relu else conv)


def _final(relu=False):
    return _stages(relu)[-1][1]


def _case(B, D, IC, OC, seed, relu=False):
    inp, w, bias = inputs(B, D, IC, OC, np.random.default_rng(seed))
    scale = default_scale(IC)
    return (inp, w, bias, scale), reference(inp, w, bias, scale, relu)


@pytest.mark.parametrize("B,D,IC,OC", [(1, 4, 16, 16), (2, 3, 32, 16),
                                       (3, 2, 16, 32), (1, 18, 16, 16),
                                       (2, 19, 32, 16), (1, 35, 16, 16),
                                       (17, 2, 16, 16)])
def test_schedule_equals_numpy(B, D, IC, OC):
    """Compiled, and interpreted where small: only border columns (D = 2),
    a tail tile alone (D = 3, 4), 16-column tiles and no tail (D = 18),
    tiles and a tail (D = 19, 35), a batch larger than the array."""
    (inp, w, bias, scale), want = _case(B, D, IC, OC, B * 100 + D)
    if B * D * D <= 32:
        assert np.array_equal(
            run_interpreted(_final(), B, D, IC, OC, scale, inp, w, bias), want)
    out, n, n_cfg = run_compiled(_final(), B, D, IC, OC, scale, inp, w, bias)
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
    out, n, n_cfg = run_compiled(_final(), B, D, IC, OC, scale, inp, w, bias)
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
        run_interpreted(_final(True), B, D, IC, OC, scale, inp, w, bias), want)
    out, n, _ = run_compiled(_final(True), B, D, IC, OC, scale, inp, w, bias)
    assert np.array_equal(out, want) and n == expected_count(B, D, IC, OC)
    assert "config_st(stride(out, 2), True)" in str(_final(True))


def test_every_stage_is_the_algorithm():
    B, D, IC, OC = 1, 3, 16, 16
    (inp, w, bias, scale), want = _case(B, D, IC, OC, 3)
    for what, p in _stages():
        assert np.array_equal(
            run_interpreted(p, B, D, IC, OC, scale, inp, w, bias), want), what


def test_final_kernel_is_instructions_configured_once():
    body = _final().ir().body
    assert [type(s).__name__ for s in body] == ["Call"] * 4 + ["For"]
    assert [s.f.name for s in body[:4]] == ["config_ld_acc", "config_ld",
                                            "config_ld_id1", "config_st"]
    text = str(_final())
    assert "+=" not in text and "clamp_i8" not in text and " = " not in text
    # the padding guards stay around the taps' instructions, none reads ox
    guards = [ln.strip() for ln in text.splitlines()
              if ln.strip().startswith("if ")]
    inside = "if oy + ky >= 1 and oy + ky < D + 1"
    assert guards == [inside + " and kx >= 1:", inside + ":",
                      "if (D - 2) % 16 > 0:", inside + ":",
                      inside + " and kx < 2:"]
    assert text.count("matmul_i8(") == 1
    assert text.count("matmul_i8_sized(") == 3


def test_channels_must_be_multiples_of_16_and_images_2_wide():
    """The schedule splits channels by 16 without a tail and cuts off two
    border columns: the algorithm's preconditions refuse other channel
    counts and 1 x 1 images before anything runs."""
    inp, w, bias = inputs(1, 4, 24, 16, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"IC % 16 == 0"):
        run_compiled(_final(), 1, 4, 24, 16, 0.01, inp, w, bias)
    inp, w, bias = inputs(1, 4, 16, 40, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"OC % 16 == 0"):
        run_interpreted(_final(), 1, 4, 16, 40, 0.01, inp, w, bias)
    inp, w, bias = inputs(1, 1, 16, 16, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"D >= 2"):
        run_compiled(_final(), 1, 1, 16, 16, 0.01, inp, w, bias)


def test_schedule_has_no_unchecked_step():
    """Every step of the schedule is a Procedure method (each checks its own
    safety); the API offers no unchecked variant to call instead."""
    assert not [m for m in dir(Procedure)
                if re.search(r"unsafe|unchecked|no_check|skip", m, re.I)]
    src = inspect.getsource(conv_app)
    called = set(re.findall(r"\bp\.(\w+)\(", src))
    assert called and all(callable(getattr(Procedure, m)) for m in called)
    assert not re.search(r"\w*(unsafe|unchecked|disable)\w*\(", src, re.I)
    assert _stages()[0][1] is conv


def _before_configs():
    return dict(_stages())["tile, staging, matmul: right border"]


def test_wrong_weight_stride_is_rejected():
    p = configure(_before_configs(),
                  [(ConfigLoadId1, 'src_stride', 'stride(w, 1)')],
                  config_ld_id1)
    with pytest.raises(SchedulingError):
        p.replace(_in_part(p, 1)('wt[_] = _').parent().parent(), ld_i8_id1)


def test_bias_broadcast_needs_stride_zero():
    p = configure(_before_configs(),
                  [(ConfigLoadAcc, 'src_stride', 'stride(bias, 0)')],
                  config_ld_acc)
    with pytest.raises(SchedulingError):
        p.replace(_in_part(p, 1)('oxi'), ld_acc_i32_bcast)


def test_padding_guard_cannot_be_dropped_or_weakened():
    """A tap outside the image must add nothing. On the whole row the guard
    cannot lose its ox condition; in the left border it cannot lose its kx
    condition, be removed, or be lifted above the kx loop it reads."""
    inside = 'oy + ky >= 1 and oy + ky < D + 1'
    with pytest.raises(SchedulingError):
        conv.rewrite_expr(conv.find('if _: _').cond(), inside)
    p = _stages()[1][1]
    left = p.find('if _: _')
    assert 'kx >= 1' in str(left)
    with pytest.raises(SchedulingError):
        p.rewrite_expr(left.cond(), inside)
    with pytest.raises(SchedulingError):
        p.eliminate_dead_code(left)
    with pytest.raises(SchedulingError):
        p.lift_if(left, n_lifts=1)


def test_relu_store_cannot_replace_the_plain_store():
    """The plain conv has no ReLU: with the activation register on, its
    store nest is not the ReLU store (nor, then, the plain one)."""
    p = configure(_before_configs(),
                  [(ConfigStore, 'dst_stride', 'stride(out, 2)'),
                   (ConfigStore, 'act', 'True')], config_st)
    store = _in_part(p, 1)('oxi #1')
    store.find('out[_] = _')            # it is the store nest
    for instr in (st_acc_i8_relu, st_acc_i8):
        with pytest.raises(SchedulingError):
            p.replace(store, instr)


@pytest.mark.slow
def test_paper_layers_full_size():
    """The four ResNet-50 layers, batch 4, full size, through the C model
    (about 15 seconds with the schedules): bit-exact and the predicted
    counts."""
    for (D, OC, IC), relu in zip(LAYERS, (False, True, False, True)):
        p = _final(relu)
        (inp, w, bias, scale), want = _case(BATCH, D, IC, OC, D, relu)
        out, n, n_cfg = run_compiled(p, BATCH, D, IC, OC, scale, inp, w,
                                     bias)
        assert np.array_equal(out, want), (D, OC, IC)
        assert (n, n_cfg) == (expected_count(BATCH, D, IC, OC), 4)
