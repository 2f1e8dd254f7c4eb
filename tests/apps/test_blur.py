"""apps/blur: every schedule of both algorithms (the exact mean, and
Halide's with 16-bit sums that wrap) computes its naive blur bit for bit,
on the full ui16 range, compiled and interpreted, and equals numpy's."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.blur.blur import (SCHEDULES, SCHEDULES16,  # noqa: E402
                             SCHEDULES16_AVX512)


def reference(inp, H, W):
    v = inp.astype(np.int64)
    bx = (v[:, 0:W] + v[:, 1:W + 1] + v[:, 2:W + 2]) // 3
    return ((bx[0:H] + bx[1:H + 1] + bx[2:H + 2]) // 3).astype(np.uint16)


def reference16(inp, H, W):
    """Halide's blur: uint16 arithmetic, so each sum of three wraps."""
    v = inp.astype(np.uint16)
    bx = (v[:, 0:W] + v[:, 1:W + 1] + v[:, 2:W + 2]) // np.uint16(3)
    return (bx[0:H] + bx[1:H + 1] + bx[2:H + 2]) // np.uint16(3)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(12)
    H, W = 64, 48
    inp = rng.integers(0, 1 << 16, (H + 2, W + 2)).astype(np.uint16)
    inp[:3, :3] = 65535              # the largest sums
    inp[-3:, -3:] = 0
    return H, W, inp, reference(inp, H, W)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_is_bit_exact(name, data):
    H, W, inp, _ = data
    _check_bit_exact(SCHEDULES[name](), name, inp, H, W, reference)


def _check_bit_exact(p, name, inp, H, W, ref):
    """``p`` compiled equals ``ref`` on the whole image, and interpreted on
    a smaller one (one strip)."""
    out = np.zeros((H, W), np.uint16)
    p.compile(openmp=name.endswith("_par"))(H, W, inp, out)
    assert np.array_equal(out, ref(inp, H, W)), name
    h, w = 32, 32
    small = inp[:h + 2, :w + 2].copy()
    out = np.zeros((h, w), np.uint16)
    p.interpret(H=h, W=w, inp=small, out=out)
    assert np.array_equal(out, ref(small, h, w)), name


_ALL16 = {**SCHEDULES16, **SCHEDULES16_AVX512}


@pytest.mark.parametrize("name", sorted(_ALL16))
def test_halide16_schedule_is_bit_exact(name, data):
    """Compiled (AVX-512 through the emulation layer where the CPU lacks
    it) and interpreted."""
    H, W, inp, _ = data
    W = 32                                  # blur16 wants W % 32 == 0
    inp = inp[:, :W + 2].copy()
    want = reference16(inp, H, W)
    assert not np.array_equal(want, reference(inp, H, W))   # sums wrapped
    _check_bit_exact(_ALL16[name](), name, inp, H, W, reference16)


def test_the_algorithms_agree_up_to_21845():
    """Where no sum of three exceeds 65535 (pixels <= 21845) Halide's
    16-bit blur is the exact one; one pixel more and it differs."""
    H, W = 32, 32
    rng = np.random.default_rng(3)
    inp = rng.integers(0, 21846, (H + 2, W + 2)).astype(np.uint16)
    inp[:3, :3] = 21845
    exact = np.zeros((H, W), np.uint16)
    wrap = np.zeros((H, W), np.uint16)
    SCHEDULES["naive"]().compile()(H, W, inp, exact)
    SCHEDULES16["naive"]().compile()(H, W, inp, wrap)
    assert np.array_equal(exact, wrap)
    inp[:3, :3] = 21846
    SCHEDULES["naive"]().compile()(H, W, inp, exact)
    SCHEDULES16["naive"]().compile()(H, W, inp, wrap)
    assert exact[0, 0] == 21846 and wrap[0, 0] != exact[0, 0]


def test_halide16_schedules_have_their_shape():
    text = {k: str(f()) for k, f in SCHEDULES16.items()}
    assert "% 65536" in text["naive"]
    assert "bx: ui16[3, W]" in text["sliding"]
    assert "for yo in par(0, H / 32)" in text["strips_par"]
    for k in ("vec_sliding", "vec_strips", "vec_strips_par"):
        assert "mm256_mean3_wrap_epu16(" in text[k]
        assert "for x in" not in text[k] and "for xb in" not in text[k]
        assert "for v2o in" not in text[k]      # fused with the bx row
    for k, f in SCHEDULES16_AVX512.items():
        t = str(f())
        assert "mm512_mean3_wrap_epu16(" in t and "mm256" not in t
        assert "for x in" not in t and "for xb in" not in t


def test_schedules_have_their_shape():
    text = {k: str(f()) for k, f in SCHEDULES.items()}
    assert "bx: ui16[H + 2, W]" in text["naive"]
    assert "bx: ui16[34, W]" in text["tiled"]          # store_at the tile
    assert "bx: ui16[3, W]" in text["sliding"]         # folded to 3 rows
    assert "bx[(yb + 2) % 3, xb]" in text["sliding"]
    assert "for yo in par(0, H / 32)" in text["strips_par"]
    for k in ("vec_sliding", "vec_strips", "vec_strips_par"):
        assert "mm256_mean3_epu16(" in text[k]
        assert "for x in" not in text[k] and "for xb in" not in text[k]
        assert "for v2o in" not in text[k]      # fused with the bx row
        # rows padded off a 4 KiB stride (no 4K aliasing of bx's rows)
        assert "bx: ui16[3, W + 32]" in text[k]
