"""Generated code as a C user sees it: sanitizers, drop-in linking."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (DRAM, compile_procs, config, f32, instr, proc, seq,
                    size)
from exo_hl.codegen_c.driver import driver_source, parse_driver_output
from exo_hl.codegen_c.runner import CompileError
from exo_hl.errors import SanitizerError

import cg_kernels as K
from cg_helpers import c_compilers, run

rng = np.random.default_rng(1)
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all",
       "-fno-omit-frame-pointer", "-g", "-O1", "-std=c11", "-Wall", "-Wextra",
       "-Werror"]


def _sanitized_run(tmp_path, p, args):
    base = p.name() + "_k"
    compile_procs([p], tmp_path, base)
    (tmp_path / "main.c").write_text(driver_source(p, args, base))
    run(["gcc", *SAN, "-o", "prog", "main.c", f"{base}.c", "-lm"], tmp_path)
    out = run(["./prog"], tmp_path,
              env={"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
                   "UBSAN_OPTIONS": "halt_on_error=1"})
    return parse_driver_output(out)


@pytest.mark.parametrize("case", ["gemm", "scale_rows_cols", "blur3",
                                  "tiled_copy"])
def test_runs_clean_under_asan_ubsan(tmp_path, case):
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    if case == "gemm":
        args = dict(M=3, N=5, K=7, A=r(3, 7), B=r(7, 5), C=r(3, 5))
        want = {"C": (args["C"] + args["A"] @ args["B"]).ravel()}
    elif case == "scale_rows_cols":
        args = dict(m=4, n=3, A=r(4, 3), alpha=np.float32(2),
                    beta=np.float32(0.5))
        want = {"A": args["A"].ravel()}
    elif case == "blur3":
        x = r(9)
        args = dict(n=9, x=x, y=np.zeros(9, np.float32))
        y = x.copy()
        y[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
        want = {"y": y}
    else:
        x = r(8)
        i = np.arange(8)
        args = dict(n=8, x=x, y=np.zeros(8, np.float32))
        want = {"y": x[4 * (i // 4) + (i % 4 - 1) % 4] + x[i // 2]}
    got = _sanitized_run(tmp_path, getattr(K, case), args)
    for name, w in want.items():
        np.testing.assert_allclose(np.array(got[name]), w, rtol=1e-5,
                                   atol=1e-6)


def test_drop_in_c_program(tmp_path):
    compile_procs([K.gemm, K.scale_by_cfg], tmp_path, "kern")
    (tmp_path / "main.c").write_text(r"""
#include <stdio.h>
#include "kern.h"
int main(void) {
    float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {1, 0, 0, 1, 1, 1}, C[4] = {0};
    kern_Context ctx = {0};
    gemm(&ctx, 2, 2, 3, A, B, C);
    float s = 2.0f;
    scale_by_cfg(&ctx, 4, C, &s);
    scale_by_cfg(&ctx, 4, C, &s);
    printf("%g %g %g %g %ld %g\n", C[0], C[1], C[2], C[3],
           (long)ctx.Cfg_count, ctx.Cfg_scale);
    return 0;
}
""")
    for cc in c_compilers():
        run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-c",
             "kern.c"], tmp_path)
        run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-o",
             "prog", "main.c", "kern.o"], tmp_path)
        out = run(["./prog"], tmp_path).split()
        # A @ B = [[4, 5], [10, 11]], scaled by 2 twice
        assert out == ["16", "20", "40", "44", "2", "2"], cc


# ---------------------------------------------------------------------------
# compile(sanitize=True): each call runs in a child process


@config
class SanCfg:
    count: size
    scale: f32


@proc
def san_kernel(n: size, x: f32[n], w: [f32][n, 2], s: f32):
    SanCfg.count = n
    SanCfg.scale = s
    t: f32[n] @ DRAM
    for i in seq(0, n):
        t[i] = x[i] + w[i, 1] * s
    for i in seq(0, n):
        x[i] = t[i] + 1.0


@instr("for (int_fast32_t k = 0; k <= {n}; k++) (&{dst_data})[k] = 0.0f;")
def zero_one_too_many(n: size, dst: [f32][n] @ DRAM):
    for i in seq(0, n):
        dst[i] = 0.0


@proc
def uses_buggy_instr(n: size, x: f32[n]):
    zero_one_too_many(n, x[0:n])


def test_sanitized_build_runs_and_agrees_with_plain_build(tmp_path,
                                                          monkeypatch):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    f = san_kernel.compile(sanitize=True)
    g = san_kernel.compile()
    W = np.arange(30, dtype=np.float32).reshape(5, 6)
    x1 = np.arange(5, dtype=np.float32)
    x2 = x1.copy()
    f(5, x1, W[:, 2:4], 2.0)            # a strided window, a float scalar
    g(5, x2, W[:, 2:4], 2.0)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(x1, np.arange(5) + 2 * W[:, 3] + 1)
    assert f.get_config(SanCfg, "count") == 5
    assert f.get_config(SanCfg, "scale") == 2.0
    # arguments are checked in Python first, exactly as without sanitizers
    with pytest.raises(TypeError, match="'x' must be a numpy array"):
        f(5, x1.tolist(), W[:, 2:4], 2.0)


def test_sanitizer_finding_is_an_exception_not_a_crash(tmp_path,
                                                       monkeypatch):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    f = uses_buggy_instr.compile(sanitize=True)
    x = np.ones(6, np.float32)
    with pytest.raises(SanitizerError) as e:
        f(6, x)
    assert "heap-buffer-overflow" in e.value.report
    assert "uses_buggy_instr" in str(e.value)
    assert "heap-buffer-overflow" in str(e.value)
    np.testing.assert_array_equal(x, 1.0)   # untouched: the run failed
    # and this process is still alive to run more code
    g = san_kernel.compile(sanitize=True)
    y = np.zeros(2, np.float32)
    g(2, y, np.zeros((2, 2), np.float32), 0.0)
    np.testing.assert_array_equal(y, [1.0, 1.0])


def test_sanitized_build_refused_clearly_when_compiler_cannot(tmp_path,
                                                              monkeypatch):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    fake = tmp_path / "nosan-cc"
    fake.write_text("#!/bin/sh\n"
                    "for a in \"$@\"; do case \"$a\" in -fsanitize=*)\n"
                    "  echo 'cannot find libasan' >&2; exit 1;; esac; done\n"
                    "exec gcc \"$@\"\n")
    fake.chmod(0o755)
    with pytest.raises(CompileError, match="(?s)sanitized build of "
                       "'san_kernel' failed.*cannot find libasan"):
        san_kernel.compile(sanitize=True, cc=str(fake))
    # the same compiler builds unsanitized code fine
    san_kernel.compile(cc=str(fake))
