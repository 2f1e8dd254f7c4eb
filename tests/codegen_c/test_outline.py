"""par loops in functions with a CPU target are outlined by hand
(codegen_c/outline.py), so clang, whose OpenMP regions do not inherit the
target attribute, compiles them too; they stay parallel and compute the
same."""
from __future__ import annotations

import re

import numpy as np

from exo_hl import (compile_procs, config, f32, instr, par, proc, seq, size,
                    stride)
from exo_hl.codegen_c import openmp
from exo_hl.hw_libs.avx2 import (AVX2, INSTRS, mm256_setzero_ps,
                                 mm256_storeu_ps)
from exo_hl.stdlib import vectorize

from cg_helpers import WARN_FLAGS, c_compilers, run

# the OpenMP nesting level the loop body runs at, from a function with a
# CPU target (AVX2's intrinsics need it)
_LEVEL = """\
#include <immintrin.h>
#ifdef _OPENMP
#include <omp.h>
#define EXO_TEST_OMP_LEVEL() ((float)omp_get_level())
#else
#define EXO_TEST_OMP_LEVEL() (-1.0f)
#endif
"""


@instr("{dst_data} = EXO_TEST_OMP_LEVEL() + "
       "_mm256_cvtss_f32(_mm256_set1_ps(0.0f));", c_global=_LEVEL,
       cpu_features={"avx2"})
def avx_level(dst: [f32][1]):
    dst[0] = 1.0


@instr("{dst_data} = _mm256_cvtss_f32(_mm256_set1_ps(1.0f));",
       c_global="#include <immintrin.h>\n", cpu_features={"avx2"})
def avx_one(dst: [f32][1]):
    dst[0] = 1.0


@proc
def levels(n: size, y: f32[n, 1]):
    for i in par(0, n):
        avx_level(y[i, 0:1])


@proc
def rows(m: size, n: size, a: f32[1], x: f32[m, n], y: f32[m, n]):
    assert n % 8 == 0
    for r in seq(0, m):
        for i in seq(0, n):
            y[r, i] += a[0] * x[r, i]


def _par_rows():
    p = vectorize(rows, 'i', 8, AVX2, INSTRS, tail="perfect")
    return p.parallelize(p.find_loop('r'))


def _compile_everywhere(tmp_path, procs, name):
    compile_procs(procs, tmp_path, name)
    for cc in c_compilers(float16=False):
        run([cc, *WARN_FLAGS, "-fopenmp", "-c", f"{name}.c", "-o",
             f"{name}_{cc}.o"], tmp_path)
    return (tmp_path / f"{name}.c").read_text()


def test_outlined_text_and_clang_openmp_build(tmp_path):
    c = _compile_everywhere(tmp_path, [_par_rows()], "rows")
    # the loop lives in a static function with the same target, shared by
    # an orphaned omp for; the caller's parallel region only calls it
    assert re.search(r'EXO_HL_TARGET\("avx2,fma"\)\nstatic void rows_par\(',
                     c), c
    assert "#ifdef _OPENMP\n#pragma omp for\n#endif\n" \
        "    for (int_fast32_t r = 0; r < m; r++) {" in c
    assert "#ifdef _OPENMP\n#pragma omp parallel\n#endif\n" \
        "    rows_par(ctxt, m, n, a, x, y);" in c
    assert "#pragma omp parallel for" not in c
    # the outlined function comes first (it is static) and keeps restrict
    assert c.index("static void rows_par(") < c.index("\nvoid rows(")
    assert "float *restrict y)" in c


def test_outlined_loop_runs_in_parallel_and_agrees(tmp_path, monkeypatch):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "gcc")
    assert openmp.openmp_supported("gcc")
    assert "levels_par(" in levels.c_code_str()
    y = np.zeros((6, 1), np.float32)
    levels.compile()(6, y)
    np.testing.assert_array_equal(y[:, 0], 1.0)   # inside the region
    p = _par_rows()
    rng = np.random.default_rng(3)
    for m, n in ((1, 8), (5, 24), (13, 16)):
        a = rng.integers(-3, 4, (1, )).astype(np.float32)
        x = rng.integers(-8, 9, (m, n)).astype(np.float32)
        y0 = rng.integers(-8, 9, (m, n)).astype(np.float32)
        want, got = y0.copy(), y0.copy()
        rows.interpret(m=m, n=n, a=a, x=x, y=want)
        p.compile()(m, n, a, x, got)
        np.testing.assert_array_equal(got, want)


@proc
def views(n: size, y: f32[n, 1], z: f32[n, 1]):
    yv = y[0:n, 0:1]
    for r in par(0, n):
        avx_one(yv[r, 0:1])
        z[r, 0] = y[r, 0]


def test_window_statements_passed_without_restrict(tmp_path, monkeypatch):
    c = _compile_everywhere(tmp_path, [views], "views")
    head = c[c.index("static void views_par("):]
    head = head[:head.index(")")]
    # a view of y and y itself both reach the function: no pointer of it
    # may be restrict
    assert "yv" in head and "restrict" not in head
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    y, z = np.zeros((5, 1), np.float32), np.zeros((5, 1), np.float32)
    views.compile()(5, y, z)
    np.testing.assert_array_equal(z, 1.0)


@proc
def regs_outside(n: size, y: f32[n, 8]):
    acc: f32[8] @ AVX2
    mm256_setzero_ps(acc[0:8])
    for r in par(0, n):
        mm256_storeu_ps(y[r, 0:8], acc[0:8])


def test_register_buffers_keep_the_loop_inline():
    # a register array cannot be passed as a pointer parameter
    c = regs_outside.c_code_str()
    assert "regs_outside_par" not in c
    assert "#pragma omp parallel for" in c


@config
class OutCfg:
    k: size


@proc
def hinted(m: size, n: size, a: f32[1], x: f32[m, n], y: f32[m, n]):
    assert n % 8 == 0
    assert m >= 2
    assert OutCfg.k == 4
    assert stride(x, 0) == n
    for r in seq(0, m):
        for i in seq(0, n):
            y[r, i] += a[0] * x[r, i]


def test_outlined_function_keeps_control_preconditions(tmp_path):
    """Preconditions over the control values passed stay optimizer hints in
    the outlined function; one reading config state (which a statement
    before the loop could change) or a stride (a view's own) does not, and
    neither does one over a symbol the loop does not use."""
    p = vectorize(hinted, 'i', 8, AVX2, INSTRS, tail="perfect")
    p = p.parallelize(p.find_loop('r'))
    c = _compile_everywhere(tmp_path, [p], "hinted")
    outlined = c[c.index("static void hinted_par("):c.index("void hinted(")]
    assert "EXO_ASSUME(n % 8 == 0);" in outlined
    assert "EXO_ASSUME(m >= 2);" in outlined
    assert "k == 4" not in outlined and "== n)" not in outlined
    caller = c[c.index("void hinted("):]
    assert "EXO_ASSUME(n % 8 == 0);" in caller and "k == 4" in caller
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    y = np.zeros_like(x)
    f = p.compile()
    f.set_config(OutCfg, "k", 4)
    f(2, 8, np.full(1, 2, np.float32), x, y)
    np.testing.assert_array_equal(y, 2 * x)
