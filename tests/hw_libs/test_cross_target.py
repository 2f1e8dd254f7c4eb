"""compile(target='aarch64' ...): the cross build and the qemu runner.

A call under qemu must behave as a native call: the same argument checks,
arrays updated in place, strided windows, arguments sharing memory, calls
in one batch seeing each other's writes, config state kept, and the exit
of a missing tool or feature as a clear error.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from exo_hl import DRAM, f32, proc, seq, size, stride
from exo_hl.codegen_c.cross import CrossProgram, CrossToolsMissing
from exo_hl.hw_libs.neon import (Neon, neon_vadd_4xf32, neon_vld_4xf32,
                                 neon_vst_4xf32)

from .cross_tools import need_target

pytestmark = pytest.mark.no_c_audit("ARM C: built by the cross compiler "
                                    "in these tests")


def _procs():
    """(made inside the tests: the suite's host-compiler audit, which
    cannot build ARM C, skips procedures the marked tests create)"""
    @proc
    def vadd(n: size, x: [f32][n, 4] @ DRAM, y: [f32][n, 4] @ DRAM,
             z: [f32][n, 4] @ DRAM):
        assert stride(x, 1) == 1 and stride(y, 1) == 1 and stride(z, 1) == 1
        for i in seq(0, n):
            a: f32[4] @ Neon
            b: f32[4] @ Neon
            c: f32[4] @ Neon
            neon_vld_4xf32(a, x[i, 0:4])
            neon_vld_4xf32(b, y[i, 0:4])
            neon_vadd_4xf32(c, a, b)
            neon_vst_4xf32(z[i, 0:4], c)

    @proc
    def twice(n: size, x: f32[n]):
        for i in seq(0, n):
            x[i] = x[i] + x[i]
    return vadd, twice


def test_windows_strides_aliasing_and_batches_behave_as_native():
    need_target("aarch64")
    vadd, twice = _procs()
    prog = CrossProgram([vadd, twice], "aarch64", stem="cross_runner")
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    want = base.copy()
    vadd.interpret(3, want[0::2, 0:4], want[0::2, 0:4], want[1::2, 4:8])
    got = base.copy()
    # strided windows of one array, two of them the same (read) memory
    prog.run_many([(vadd, dict(n=3, x=got[0::2, 0:4], y=got[0::2, 0:4],
                               z=got[1::2, 4:8]))])
    assert np.array_equal(got, want)
    # a batch: each call sees the writes of the calls before it
    v = np.ones(5, np.float32)
    prog.run_many([(twice, dict(n=5, x=v))] * 3)
    assert np.array_equal(v, np.full(5, 8, np.float32))


def test_argument_checks_are_the_native_ones():
    need_target("aarch64")
    vadd, _ = _procs()
    f = vadd.compile(target="aarch64")
    x = np.zeros((2, 4), np.float32)
    with pytest.raises(ValueError, match="overlap"):
        f(2, x, x, x)
    with pytest.raises(TypeError):
        f(2, x.astype(np.float64), x, np.zeros((2, 4), np.float32))
    z = np.zeros((2, 4), np.float32)
    f(2, x + 1, x + 2, z)
    assert np.array_equal(z, np.full((2, 4), 3, np.float32))


def test_missing_tools_are_named():
    vadd, _ = _procs()
    with pytest.raises(CrossToolsMissing, match="no-such-cc"):
        vadd.compile(target="aarch64", cc="no-such-cc")


def test_unknown_target_is_refused():
    vadd, _ = _procs()
    with pytest.raises(ValueError, match="aarch64"):
        vadd.compile(target="arm")


def test_cli_builds_an_object_for_the_target_and_refuses_a_wrong_one(
        tmp_path):
    need_target("aarch64")
    src = tmp_path / "k.py"
    src.write_text(
        "from __future__ import annotations\n"
        "from exo_hl import proc, f32\n"
        "from exo_hl.hw_libs.neon import Neon, neon_vld_4xf32, "
        "neon_vst_4xf32\n\n"
        "@proc\n"
        "def copy4(x: f32[4], y: f32[4]):\n"
        "    r: f32[4] @ Neon\n"
        "    neon_vld_4xf32(r, x)\n"
        "    neon_vst_4xf32(y, r)\n")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "exo_hl", "compile", str(src),
                        "-o", str(out), "--target", "aarch64"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (out / "k.o").exists() and "built for aarch64" in r.stdout
    head = (out / "k.o").read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and head[18] == 183     # EM_AARCH64
    r = subprocess.run([sys.executable, "-m", "exo_hl", "compile", str(src),
                        "-o", str(out), "--target", "riscv64"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "lacks neon" in r.stderr and "target='aarch64'" in r.stderr
