"""apps/blur on ARM NEON: the vectorized schedules of both algorithms (8
ui16 lanes, ``neon_mean3_8xu16`` / ``neon_mean3_wrap_8xu16``), built for
aarch64 and run under qemu, equal numpy's blur and ``interpret()`` bit for
bit, on images with the largest sums and random pixels; all calls in one
qemu process."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.blur.blur import SCHEDULES16_NEON, SCHEDULES_NEON  # noqa: E402
from exo_hl.codegen_c.cross import CrossProgram  # noqa: E402
from tests.hw_libs.cross_tools import need_target  # noqa: E402

pytestmark = pytest.mark.no_c_audit("ARM C: checked by the cross compiler "
                                    "with -Werror in this test")


def reference(inp, H, W):
    """The exact mean (as tests/apps/test_blur.py)."""
    v = inp.astype(np.int64)
    bx = (v[:, 0:W] + v[:, 1:W + 1] + v[:, 2:W + 2]) // 3
    return ((bx[0:H] + bx[1:H + 1] + bx[2:H + 2]) // 3).astype(np.uint16)


def reference16(inp, H, W):
    """Halide's blur: uint16 arithmetic, so each sum of three wraps."""
    v = inp.astype(np.uint16)
    bx = (v[:, 0:W] + v[:, 1:W + 1] + v[:, 2:W + 2]) // np.uint16(3)
    return (bx[0:H] + bx[1:H + 1] + bx[2:H + 2]) // np.uint16(3)


def _image(rng, H, W):
    inp = rng.integers(0, 1 << 16, (H + 2, W + 2)).astype(np.uint16)
    inp[:3, :3] = 65535              # the largest sums
    inp[-3:, -3:] = 0
    inp[3:6, 3:6] = 21846            # sums just past 65535
    return inp


def test_neon_blur_schedules_equal_numpy_and_interpret_under_qemu():
    need_target("aarch64")
    exact = SCHEDULES_NEON["neon_strips"]()
    wrap = SCHEDULES16_NEON["neon_sliding"]()
    for p in (exact, wrap):          # checked rewrites down to the intrinsics
        assert "neon_vld_8xu16(" in str(p) and "neon_mean3" in str(p)
    prog = CrossProgram([exact, wrap], "aarch64", cflags="-std=c11 -Werror",
                        stem="blur_neon")
    rng = np.random.default_rng(35)
    cases = [(exact, reference, 32, 16), (exact, reference, 64, 48),
             (wrap, reference16, 32, 32), (wrap, reference16, 64, 64)]
    calls = []
    for p, ref, H, W in cases:
        inp = _image(rng, H, W)
        calls.append((p, dict(H=H, W=W, inp=inp,
                              out=np.zeros((H, W), np.uint16))))
    # interpret() on the smallest image of each algorithm
    wants = []
    for p, args in (calls[0], calls[2]):
        want = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                for k, v in args.items()}
        p.interpret(**want)
        wants.append(want["out"])
    prog.run_many(calls)
    for (p, ref, H, W), (_, args) in zip(cases, calls):
        assert np.array_equal(args["out"], ref(args["inp"], H, W)), (
            p.name(), H, W)
    assert np.array_equal(calls[0][1]["out"], wants[0])
    assert np.array_equal(calls[2][1]["out"], wants[1])
    # the wrapping blur did wrap on these images
    assert not np.array_equal(calls[2][1]["out"],
                              reference(calls[2][1]["inp"], 32, 32))
