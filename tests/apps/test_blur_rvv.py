"""apps/blur on RISC-V V: the vectorized schedules of both algorithms (8
ui16 lanes, ``rvv_mean3_u16`` / ``rvv_mean3_wrap_u16``, the vector length
written once as config state and proven at every instruction), built for
riscv64 and run under qemu at VLEN 128 and 256 (one executable), equal
numpy's blur and ``interpret()`` bit for bit, on images with the largest
sums and random pixels; all calls of a VLEN in one qemu process."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.blur import blur as B  # noqa: E402
from exo_hl import SchedulingError  # noqa: E402
from exo_hl.codegen_c.cross import CrossProgram  # noqa: E402
from tests.apps.test_blur_neon import (_image, reference,  # noqa: E402
                                       reference16)
from tests.hw_libs.cross_tools import need_target  # noqa: E402

pytestmark = pytest.mark.no_c_audit("RISC-V C: checked by the cross "
                                    "compiler with -Werror in this test")


def test_rvv_blur_schedules_equal_numpy_and_interpret_under_qemu():
    need_target("riscv64")
    exact = B.SCHEDULES_RVV["rvv_strips"]()
    wrap = B.SCHEDULES16_RVV["rvv_sliding"]()
    for p, mean in ((exact, "rvv_mean3_u16("), (wrap, "rvv_mean3_wrap_u16(")):
        text = str(p)              # checked rewrites down to the intrinsics
        assert text.count("rvv_vsetvl_e16m1(8)") == 1
        assert "rvv_vle16_u16(8," in text and mean in text
    rng = np.random.default_rng(35)
    cases = [(exact, reference, 32, 16), (exact, reference, 64, 48),
             (wrap, reference16, 32, 32), (wrap, reference16, 64, 64)]
    images = [_image(rng, H, W) for _, _, H, W in cases]
    # interpret() on the smallest image of each algorithm
    wants = []
    for k in (0, 2):
        p, _, H, W = cases[k]
        out = np.zeros((H, W), np.uint16)
        p.interpret(H=H, W=W, inp=images[k].copy(), out=out)
        wants.append(out)
    exes = set()
    for target in ("riscv64", "riscv64-vlen256"):
        need_target(target)
        prog = CrossProgram([exact, wrap], target,
                            cflags="-std=c11 -Werror", stem="blur_rvv")
        exes.add(prog.executable)
        calls = [(p, dict(H=H, W=W, inp=img.copy(),
                          out=np.zeros((H, W), np.uint16)))
                 for (p, _, H, W), img in zip(cases, images)]
        prog.run_many(calls)
        for (p, ref, H, W), (_, args) in zip(cases, calls):
            assert np.array_equal(args["out"], ref(args["inp"], H, W)), (
                target, p.name(), H, W)
        assert np.array_equal(calls[0][1]["out"], wants[0])
        assert np.array_equal(calls[2][1]["out"], wants[1])
        # the wrapping blur did wrap on these images
        assert not np.array_equal(calls[2][1]["out"],
                                  reference(calls[2][1]["inp"], 32, 32))
    assert len(exes) == 1          # the same executable at both VLENs


def test_rvv_blur_needs_the_vector_length_in_force():
    """Without ``VL.vl = 8`` written first, selecting the RVV load is
    refused (its precondition ``VL.vl == n`` unproven); with a length of
    4 (f32's, ``rvv_vsetvl_e32m1``) too."""
    from exo_hl.hw_libs import rvv
    p = B.sliding(B.blur)
    with pytest.raises(SchedulingError, match=r"VL\.vl == n"):
        B._vec_stage(p, 'xb', 'v0', rvv=True)
    q = p.configwrite_at(p.body()[0], rvv.VL, 'vl', '4', before=True)
    q = q.replace(q.find('VL.vl = _'), rvv.rvv_vsetvl_e32m1)
    with pytest.raises(SchedulingError, match=r"VL\.vl == n"):
        B._vec_stage(q, 'xb', 'v0', rvv=True)
