"""apps/saxpy_rvv: SAXPY strip-mined at the machine's vector length.
The strip loop (registers, and groups of 8) equals the algorithm in
``interpret()`` at VLMAX 4, 5, 8, 16 and 2048; the schedule of a strip is
checked rewrites; one executable equals ``interpret()`` bit for bit under
qemu-riscv64 at VLEN 128, 256 and 512, with ``VL.vlmax`` read back as
VLEN / 32; what the checker needs is refused when missing."""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from exo_hl import SchedulingError  # noqa: E402
from exo_hl.codegen_c.cross import CrossProgram  # noqa: E402
from exo_hl.core_ir.interpret import ConfigState  # noqa: E402
from exo_hl.errors import BoundsError  # noqa: E402
from exo_hl.frontend.decorators import parse_proc_source  # noqa: E402
from exo_hl.hw_libs import rvv  # noqa: E402
from tests.hw_libs.cross_tools import (library_scope,  # noqa: E402
                                       need_target)

pytestmark = pytest.mark.no_c_audit("RISC-V C: built by the cross "
                                    "compiler with -Werror in this test")



@pytest.fixture(scope="module")
def app():
    """The app's modules, imported in a test (whose ``no_c_audit`` mark
    then covers the RVV procedures they define)."""
    from apps.saxpy_rvv import kernel, schedule
    return SimpleNamespace(**{n: getattr(kernel, n) for n in (
        "Strip", "saxpy", "saxpy_strips", "saxpy_strips8", "saxpy_vl")},
        schedule=schedule.schedule, schedule_strip=schedule.schedule_strip)


SIZES = (1, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 64, 100, 129, 300)


def _data(rng, n, exact=False):
    if exact:       # small integers: every product and sum exact
        return (np.array([3.0], np.float32),
                rng.integers(-8, 8, n).astype(np.float32),
                rng.integers(-8, 8, n).astype(np.float32))
    a = np.array([rng.standard_normal()], np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    k = min(5, n)                      # edge values, spread over x
    x[np.arange(k) * (n // k)] = [np.inf, -0.0, np.nan, 1e30, -1e-40][:k]
    return a, x, rng.standard_normal(n).astype(np.float32)


def _interpret(p, n, a, x, y, vlmax=None):
    y = y.copy()
    st = ConfigState()
    if vlmax is not None:
        st[rvv.VL.vlmax] = vlmax
    p.interpret(n=n, a=a, x=x, y=y, config_state=st)
    return y, st


def _same(u, v):
    return np.array_equal(u, v, equal_nan=True)


def test_strips_equal_the_algorithm_at_any_vlmax(app):
    rng = np.random.default_rng(1)
    for vlmax, strips_of in ((4, 4), (5, 5), (8, 8), (16, 16),
                             (2048, 2048), (0, 4)):     # 0: unset = VLEN 128
        for n in (1, 4, 5, 9, 17, 40):
            a, x, y = _data(rng, n)
            want, _ = _interpret(app.saxpy, n, a, x, y)
            got, st = _interpret(app.saxpy_strips, n, a, x, y,
                                 vlmax or None)
            assert _same(got, want), (vlmax, n)
            assert st[app.Strip.off] == n
            assert st[rvv.VL.vl] == (n - 1) % strips_of + 1   # the last strip
            # register groups of 8: strips of 8 * VLMAX
            got, st = _interpret(app.saxpy_strips8, n, a, x, y,
                                 vlmax or None)
            assert _same(got, want), (vlmax, n)
            assert st[rvv.VL.vl] == (n - 1) % (8 * strips_of) + 1


def test_strip_schedule_is_checked_rewrites(app):
    p = app.schedule_strip()
    text = str(p)
    assert "xr: f32[2048] @ RVV" in text
    assert "rvv_vle32_f32(vl, xr[0:vl], x[off:off + vl])" in text
    assert "rvv_vmacc_unfused_vf_f32(vl, yr[0:vl], a[0:1], xr[0:vl])" in text
    assert "rvv_vse32_f32(vl, y[off:off + vl], yr[0:vl])" in text
    assert "for " not in text.split("assert off + vl <= n")[1]
    # registers of the 4 lanes every machine has cannot hold a strip
    q = app.saxpy_vl.stage_mem(app.saxpy_vl.find_loop('i'),
                               'x[off:off + vl]', 'xr')
    with pytest.raises(SchedulingError):
        q.resize_dim('xr', 0, '4', 0)
    text = str(app.schedule_strip(lmul=8))
    assert "xr: f32[16384] @ RVVM8" in text
    assert "rvv_vmacc_unfused_vf_f32m8(vl, yr[0:vl], a[0:1], xr[0:vl])" \
        in text
    text = str(app.schedule())
    assert "rvv_vsetvlmax_e32m1()" in text
    assert "saxpy_strip_rvv(n, Strip.off, a, x, y)" in text


def test_what_the_strip_loop_needs_is_checked():
    scope = library_scope(rvv)
    src = ("def f(n: size, off: index, a: f32[1] @ DRAM, x: f32[n] @ DRAM,\n"
           "      y: f32[n] @ DRAM):\n"
           "    rvv_vsetvlmax_e32m1()\n"
           "    if 0 <= off and off < n:\n"
           "        rvv_vsetvl_min_e32m1(n - off)\n"
           "        r: f32[2048] @ RVV\n"
           "        rvv_vle32_f32(VL.vl, r[0:VL.vl], x[off:off + VL.vl])\n"
           "        rvv_vse32_f32(VL.vl, y[off:off + VL.vl], r[0:VL.vl])\n")
    parse_proc_source(src, scope)
    # vl = min(n - off, VLMAX): a strip of VLMAX at off may pass the end
    with pytest.raises(BoundsError, match="out of bounds"):
        parse_proc_source(src.replace("rvv_vsetvl_min_e32m1(n - off)",
                                      "rvv_vsetvl_min_e32m1(n)"), scope)
    # no vsetvlmax: nothing is known of VLMAX
    with pytest.raises(BoundsError, match="VL.vlmax >= 4"):
        parse_proc_source(src.replace("    rvv_vsetvlmax_e32m1()\n", ""),
                          scope)
    # an offset not known to be in range
    with pytest.raises(BoundsError, match="out of bounds"):
        parse_proc_source(src.replace("0 <= off and off < n", "off < n"),
                          scope)


def test_one_executable_at_every_vlen_under_qemu(app):
    exact, fused = app.schedule(), app.schedule(fused=True)
    exact8 = app.schedule(lmul=8)
    rng = np.random.default_rng(35)
    exes = set()
    for target, vlmax in (("riscv64", 4), ("riscv64-vlen256", 8),
                          ("riscv64-vlen512", 16)):
        need_target(target)
        prog = CrossProgram([exact, fused, exact8], target,
                            cflags="-std=c11 -Werror", stem="saxpy_rvv")
        exes.add(prog.executable)
        calls, wants = [], []
        for n in SIZES:
            for p, ex in ((exact, False), (fused, True), (exact8, False)):
                a, x, y = _data(rng, n, exact=ex)
                want, st = _interpret(p, n, a, x, y, vlmax)
                assert _same(want, _interpret(app.saxpy, n, a, x, y)[0])
                wants.append((want, st))
                calls.append((p, dict(n=n, a=a, x=x, y=y)))
        prog.run_many(calls)
        for (p, args), (want, _) in zip(calls, wants):
            assert _same(args["y"], want), (target, p.name(), args["n"])
        assert prog.get_config(rvv.VL, "vlmax") == vlmax
        assert prog.get_config(rvv.VL, "vl") == wants[-1][1][rvv.VL.vl]
        assert prog.get_config(app.Strip, "off") == SIZES[-1]
    assert len(exes) == 1
