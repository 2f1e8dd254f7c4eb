"""apps/sgemm_neon: the 8 x 12 NEON micro-kernel schedule, run under
qemu-aarch64, equals interpret() bit for bit on edge and random shapes."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.sgemm_neon.check import check_kernels  # noqa: E402
from apps.sgemm_neon.schedule import schedule, schedule_lane  # noqa: E402
from tests.hw_libs.cross_tools import need_target  # noqa: E402

pytestmark = pytest.mark.no_c_audit("ARM C: built by the cross compiler "
                                    "in this test")


@pytest.fixture(scope="module")
def kernels():
    return schedule(), schedule(fused=True), schedule_lane()


def test_schedule_keeps_the_tile_in_registers_and_selects_neon(kernels):
    exact, fused, lane = kernels
    text = str(exact)
    assert "C_reg: f32[8, 3, 4] @ Neon" in text
    assert text.count("neon_vmla_bcst_4xf32(") == 24
    assert "neon_vfmla_bcst_4xf32(C_reg[7, 2, 0:4]" in str(fused)
    # the edges stay scalar loops: N % 12 columns, M % 8 rows
    assert "seq(0, N % 12)" in text and "seq(0, M % 8)" in text
    # by lane: the column of A in two registers, 24 fmla by lane
    text = str(lane)
    assert "A_reg: f32[2, 4] @ Neon" in text
    assert text.count("neon_vfmla_lane_4xf32(") == 24
    for lane in range(4):        # replace inferred every lane
        assert text.count(f"A_reg[1, 0:4], {lane})") == 3


def test_neon_sgemm_equals_interpret_under_qemu(kernels):
    need_target("aarch64")
    exact, fused, lane = kernels
    assert check_kernels([(exact, False), (fused, True), (lane, True)],
                         "aarch64", n_random=2) == 3 * (9 + 2)


def test_bench_tells_exos_wrong_lanes_from_right_ones():
    """bench.py counts Exo's by-lane kernel only when each row takes its
    own element of A (Exo 1.0's replace picks the lane differently from run
    to run, sometimes wrongly)."""
    from apps.sgemm_neon.bench import lanes_right

    def kernel(lane_of):
        return "\n".join(
            f"  C_reg[{r}][{j}] = vfmaq_laneq_f32(C_reg[{r}][{j}], "
            f"B_reg[{j}], A_reg[{lane_of(r)[0]}], ({lane_of(r)[1]}));"
            for r in range(8) for j in range(3))
    assert lanes_right(kernel(lambda r: (r // 4, r % 4)))
    assert not lanes_right(kernel(lambda r: (0, r // 4)))   # a seen one
    assert not lanes_right(kernel(lambda r: (r // 4, r % 4))[:-60])
