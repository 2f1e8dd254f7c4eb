"""When the index equations leave a choice between a window's offset and
a control argument (``b[lane]`` against ``x[r, 2]``), ``unify`` gives a
second reading with window offsets 0 and ``replace`` takes the first
reading that passes every check: a by-lane instruction's lane is inferred
(NEON ``neon_vfmla_lane_4xf32``), a reading that fails is never used."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from exo_hl import DRAM, SchedulingError, f32, index, instr, proc, seq
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.hw_libs import neon
from exo_hl.unify.solve import Equation, Lin, solve

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.hw_libs.cross_tools import need_target  # noqa: E402

pytestmark = pytest.mark.no_c_audit("ARM C (NEON): built by the cross "
                                    "compiler in this test")


@instr("/* never compiled */")
def lane_acc(dst: [f32][4] @ DRAM, b: [f32][4] @ DRAM, lane: index):
    """``dst += b[lane]``, for lanes 0 and 1 only."""
    assert lane >= 0
    assert lane < 2
    for i in seq(0, 4):
        dst[i] += b[lane]


@proc
def acc4(x: f32[4] @ DRAM, y: f32[4] @ DRAM, z: f32[4] @ DRAM):
    for i in seq(0, 4):
        y[i] += x[1]
    for i in seq(0, 4):
        z[i] += x[3]


def _fmla_rows():
    """The by-lane step of an SGEMM tile (apps/sgemm_neon): row ``4 * r +
    k`` of C's registers gets B's registers times lane ``k`` of A's
    register ``r``. Built in the test (NEON C: its no_c_audit mark)."""
    @proc
    def fmla_rows(x: f32[2, 4] @ DRAM, y: f32[3, 4] @ DRAM,
                  z: f32[8, 3, 4] @ DRAM):
        a: f32[2, 4] @ neon.Neon
        b: f32[3, 4] @ neon.Neon
        d: f32[8, 3, 4] @ neon.Neon
        for j in seq(0, 3):
            neon.neon_vld_4xf32(b[j, 0:4], y[j, 0:4])
        for r in seq(0, 2):
            neon.neon_vld_4xf32(a[r, 0:4], x[r, 0:4])
        for k in seq(0, 8):
            for j in seq(0, 3):
                neon.neon_vld_4xf32(d[k, j, 0:4], z[k, j, 0:4])
        for r in seq(0, 2):
            for j in seq(0, 3):
                for i in seq(0, 4):
                    d[4 * r, j, i] += b[j, i] * a[r, 0]
            for j in seq(0, 3):
                for i in seq(0, 4):
                    d[4 * r + 1, j, i] += b[j, i] * a[r, 1]
            for j in seq(0, 3):
                for i in seq(0, 4):
                    d[4 * r + 2, j, i] += b[j, i] * a[r, 2]
            for j in seq(0, 3):
                for i in seq(0, 4):
                    d[4 * r + 3, j, i] += b[j, i] * a[r, 3]
        for k in seq(0, 8):
            for j in seq(0, 3):
                neon.neon_vst_4xf32(z[k, j, 0:4], d[k, j, 0:4])
    return fmla_rows


def test_solver_prefers_zero_where_asked():
    # u + w == 2: the simplest solutions put 2 on one unknown; asked to
    # keep w zero, the solver puts it on u
    eqs = [Equation(Lin({"u": 1, "w": 1}, {}, -2), "e")]
    assert solve(eqs, ["u", "w"], [], prefer_zero=["w"]) == {
        "u": (2, {}), "w": (0, {})}
    assert solve(eqs, ["u", "w"], [], prefer_zero=["u"]) == {
        "u": (0, {}), "w": (2, {})}


def test_the_lane_of_a_by_lane_instruction_is_inferred():
    fmla_rows = _fmla_rows()
    p = fmla_rows
    for _ in range(4):
        p = p.replace(p.find_loop('i'), neon.neon_vfmla_lane_4xf32)
    text = str(p)
    assert "for i in" not in text
    assert ("neon_vfmla_lane_4xf32(d[4 * r, j, 0:4], b[j, 0:4], "
            "a[r, 0:4], 0)") in text
    for lane in (1, 2, 3):   # the solver's reading: a[r, lane:lane + 4]
        assert (f"neon_vfmla_lane_4xf32(d[4 * r + {lane}, j, 0:4], "
                f"b[j, 0:4], a[r, 0:4], {lane})") in text
    # the same values, interpreted (the compiled ones below, under qemu)
    rng = np.random.default_rng(7)
    x = rng.integers(-8, 8, (2, 4)).astype(np.float32)
    y = rng.integers(-8, 8, (3, 4)).astype(np.float32)
    z = rng.integers(-8, 8, (8, 3, 4)).astype(np.float32)
    want, got = z.copy(), z.copy()
    fmla_rows.interpret(x=x, y=y, z=want)
    p.interpret(x=x, y=y, z=got)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        want, z + x.reshape(8)[:, None, None] * y[None, :, :])
    need_target("aarch64")
    f = p.compile(target="aarch64")
    got = z.copy()
    f.run_many([dict(x=x, y=y, z=got)])
    np.testing.assert_array_equal(got, want)


def test_a_reading_that_fails_its_checks_is_not_used():
    # x[1]: b = x[1:5] (out of bounds) or b = x[0:4] with lane 1 (taken)
    p = acc4.replace(acc4.find_loop('i'), lane_acc)
    assert "lane_acc(y[0:4], x[0:4], 1)" in str(p)
    # x[3]: b = x[3:7] (out of bounds) or lane 3 (its precondition fails)
    with pytest.raises(SchedulingError, match="lane_acc"):
        p.replace(p.find_loop('i'), lane_acc)
