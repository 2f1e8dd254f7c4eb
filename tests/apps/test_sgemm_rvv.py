"""apps/sgemm_rvv: the vl-parametric RVV micro-kernel, its vector length
checked config state, equals interpret() bit for bit under qemu-riscv64 at
VLEN 128 and 256 on edge and random shapes."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from exo_hl import SchedulingError  # noqa: E402
from exo_hl.hw_libs import rvv  # noqa: E402
from apps.sgemm_neon.check import check_kernels  # noqa: E402
from apps.sgemm_rvv.schedule import schedule  # noqa: E402
from tests.hw_libs.cross_tools import need_target  # noqa: E402

pytestmark = pytest.mark.no_c_audit("RISC-V C: built by the cross "
                                    "compiler in this test")


@pytest.fixture(scope="module")
def kernels():
    return [(schedule(vl=4), False), (schedule(vl=3), False),
            (schedule(vl=4, fused=True), True)]


def test_vector_length_is_set_once_per_tile(kernels):
    text = str(kernels[1][0])
    assert text.count("rvv_vsetvl_e32m1(3)") == 1
    assert "C_reg: f32[4, 2, 4] @ RVV" in text
    assert text.count("rvv_vmacc_unfused_vf_f32(3,") == 8


def test_moving_the_vsetvl_below_a_load_is_refused(kernels):
    p = kernels[0][0]
    # past the allocation of C's registers: fine
    p = p.reorder_stmts(p.find("rvv_vsetvl_e32m1(_)"))
    assert "rvv_vle32_f32" in str(p.find("rvv_vsetvl_e32m1(_)").next())
    # past the first load, which needs vl == 4: refused
    with pytest.raises(SchedulingError):
        p.reorder_stmts(p.find("rvv_vsetvl_e32m1(_)"))


@pytest.mark.parametrize("target", ["riscv64", "riscv64-vlen256"])
def test_rvv_sgemm_equals_interpret_under_qemu(kernels, target):
    need_target(target)
    assert check_kernels(kernels, target, n_random=1) == 3 * (9 + 1)
