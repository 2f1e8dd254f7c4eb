"""Generated code as a C user sees it: sanitizers, drop-in linking."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import compile_procs
from exo_hl.codegen_c.driver import driver_source, parse_driver_output

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
