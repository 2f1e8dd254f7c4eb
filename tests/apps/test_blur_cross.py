"""The f32 3x3 blur of docs/worked_examples.md on ARM NEON and RISC-V V
(``apps/worked_examples/kernels.py``: the same ``vectorize`` call by 4
lanes; for RVV after ``VL.vl = 4`` is set once at the top), built with
the cross compilers and run under qemu on widths with and without a
scalar tail: bit for bit equal to numpy's expression in the same order
and to ``interpret()``."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.worked_examples import kernels  # noqa: E402
from exo_hl.codegen_c.cross import CrossProgram  # noqa: E402
from exo_hl.errors import SchedulingError  # noqa: E402
from exo_hl.hw_libs import rvv  # noqa: E402
from exo_hl.stdlib import vectorize  # noqa: E402
from tests.hw_libs.cross_tools import need_target  # noqa: E402

pytestmark = pytest.mark.no_c_audit("ARM/RISC-V C: checked by the cross "
                                    "compiler with -Werror in this test")


def numpy_blur(img):
    """The blur's expression, summed in the algorithm's order."""
    s = img[:-2, :-2]
    for di, dj in ((0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1),
                   (2, 2)):
        s = s + img[di:di + img.shape[0] - 2, dj:dj + img.shape[1] - 2]
    return s * np.float32(0.1111111)


@pytest.mark.parametrize("target, make, add", [
    ("aarch64", kernels.schedule_blur_neon, "neon_vadd_4xf32("),
    ("riscv64", kernels.schedule_blur_rvv, "rvv_vfadd_vv_f32(4, "),
])
def test_blur_equals_numpy_and_interpret_under_qemu(target, make, add):
    need_target(target)
    p = make()
    text = str(p)
    assert text.count(add) == 8 and "for ji in seq(0, w % 4):" in text, text
    prog = CrossProgram([p], target, cflags="-std=c11 -Werror",
                        stem=p.name())
    rng = np.random.default_rng(35)
    calls = []
    for h, w in ((1, 4), (3, 7), (5, 16), (4, 37)):
        img = rng.standard_normal((h + 2, w + 2), dtype=np.float32)
        img[0, :3] = (np.inf, -0.0, 3e38)          # inf, a signed zero
        calls.append((p, dict(h=h, w=w, x=img,
                              y=np.zeros((h, w), np.float32))))
    want = {k: (v.copy() if isinstance(v, np.ndarray) else v)
            for k, v in calls[-1][1].items()}
    p.interpret(**want)
    prog.run_many(calls)
    for _, args in calls:
        np.testing.assert_array_equal(args["y"], numpy_blur(args["x"]))
    np.testing.assert_array_equal(calls[-1][1]["y"], want["y"])


def test_rvv_blur_needs_the_vector_length_set():
    """Without ``VL.vl = 4`` in force no RVV instruction can be selected
    (each asserts it): ``vectorize`` refuses and names the instruction."""
    with pytest.raises(SchedulingError, match="VL.vl == n"):
        vectorize(kernels.blur3x3, 'j', 4, rvv.RVV, rvv.INSTRS, tail='cut')
