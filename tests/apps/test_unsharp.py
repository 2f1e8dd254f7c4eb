"""apps/unsharp: every schedule computes the naive pipeline bit for bit,
compiled and interpreted, and equals numpy's float32 computation."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.unsharp.unsharp import SCHEDULES  # noqa: E402


def reference(inp, H, W):
    """The pipeline in numpy float32, operation by operation."""
    k = np.float32(0.3333333333333333)
    bx = (inp[:, 0:W] + inp[:, 1:W + 1] + inp[:, 2:W + 2]) * k
    by = (bx[0:H] + bx[1:H + 1] + bx[2:H + 2]) * k
    c = inp[1:H + 1, 1:W + 1]
    sh = (c + c) - by
    top = np.where(np.float32(1) < sh, np.float32(1), sh)
    return np.where(sh < np.float32(0), np.float32(0), top)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    H, W = 64, 40
    inp = rng.random((H + 2, W + 2), dtype=np.float32)
    inp[10:20, 10:20] = 1.0            # clamped above
    inp[30:40, 5:9] = 0.0              # and below
    return H, W, inp, reference(inp, H, W)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_is_bit_exact(name, data):
    H, W, inp, want = data
    p = SCHEDULES[name]()
    out = np.zeros((H, W), np.float32)
    p.compile(openmp=name.endswith("_par"))(H, W, inp, out)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32)), name
    h, w = 32, 16
    small = inp[:h + 2, :w + 2].copy()
    out = np.zeros((h, w), np.float32)
    p.interpret(H=h, W=w, inp=small, out=out)
    assert np.array_equal(out, reference(small, h, w)), name


def test_schedules_have_their_shape():
    text = {k: str(f()) for k, f in SCHEDULES.items()}
    assert "sh: f32[H, W]" in text["naive"]
    assert "sh:" not in text["inline"]                 # inlined stage
    assert "bx: f32[3, W]" in text["fused"]            # sliding window
    assert "by: f32[1, W]" in text["fused"]            # one row per y
    assert "for yo in par(0, H / 32)" in text["strips_par"]
