"""par loops are outlined by hand (codegen_c/outline.py): clang, whose
OpenMP regions do not inherit the target attribute, compiles them in
functions with a CPU target too, and one thread runs them with no parallel
region; they stay parallel and compute the same."""
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
    # the loop lives in a static function with the same target that runs
    # thread `thread`'s block of the iterations; the caller's parallel
    # region only calls it, and one thread calls it with no region
    assert re.search(r'EXO_HL_TARGET\("avx2,fma"\)\nstatic void rows_par\(',
                     c), c
    assert "int_fast32_t thread,\n" in c and "int_fast32_t threads)" in c
    assert "    int_fast32_t r_begin = exo_hl_share(0, m, thread, threads);\n" \
        "    int_fast32_t r_end = exo_hl_share(0, m, thread + 1, threads);\n" \
        "    for (int_fast32_t r = r_begin; r < r_end; r++) {" in c
    assert "#ifdef _OPENMP\n    if (omp_get_max_threads() > 1) {\n" \
        "#pragma omp parallel\n" \
        "        rows_par(ctxt, m, n, a, x, y, omp_get_thread_num(), " \
        "omp_get_num_threads());\n" \
        "    } else {\n        rows_par(ctxt, m, n, a, x, y, 0, 1);\n    }\n" \
        "#else\n    rows_par(ctxt, m, n, a, x, y, 0, 1);\n#endif\n" in c
    assert "#pragma omp for" not in c and "omp parallel for" not in c
    # the outlined function comes first (it is static); its pointers are
    # not restrict (GCC spilled register tiles when they were), the
    # entry point's are
    assert c.index("static void rows_par(") < c.index("\nvoid rows(")
    head = c[c.index("static void rows_par("):]
    assert "restrict" not in head[:head.index(")")]
    entry = c[c.index("\nvoid rows("):]
    assert "float *restrict y" in entry[:entry.index(")")]


def test_plain_functions_outline_par_loops_too():
    c = _par_rows_plain().c_code_str()
    assert "static void rows_plain_par(" in c
    assert "omp parallel for" not in c


def _par_rows_plain():
    return rows_plain.parallelize(rows_plain.find_loop('r'))


@proc
def rows_plain(m: size, n: size, x: f32[m, n], y: f32[m, n]):
    for r in seq(0, m):
        for i in seq(0, n):
            y[r, i] += 2.0 * x[r, i]


_SHARE_CHECK = """\
#include <stdint.h>
#include <stdio.h>
%s
int main(void) {
    /* blocks of [lo, hi) for T threads: consecutive, covering, sizes
       differing by at most one; empty ranges give empty blocks */
    int bad = 0;
    for (int lo = -5; lo <= 5; lo++)
        for (int hi = -5; hi <= 40; hi++)
            for (int T = 1; T <= 9; T++) {
                int_fast32_t n = hi > lo ? hi - lo : 0, lo_t = lo;
                if (exo_hl_share(lo, hi, 0, T) != lo) bad++;
                for (int t = 0; t < T; t++) {
                    int_fast32_t a = exo_hl_share(lo, hi, t, T);
                    int_fast32_t b = exo_hl_share(lo, hi, t + 1, T);
                    if (a != lo_t || b < a || b - a < n / T ||
                        b - a > n / T + 1) bad++;
                    lo_t = b;
                }
                if (lo_t != lo + n) bad++;
            }
    /* no overflow near the int32 range */
    if (exo_hl_share(0, 2147483647, 1, 2) != 1073741823) bad++;
    if (exo_hl_share(-2147483647, 2147483647, 1, 2) != 0) bad++;
    printf("%%d\\n", bad);
    return bad != 0;
}
"""


def test_share_splits_iterations_into_consecutive_blocks(tmp_path):
    from exo_hl.codegen_c.emit import _SHARE_HELPER
    (tmp_path / "share.c").write_text(_SHARE_CHECK % _SHARE_HELPER)
    cc = c_compilers(float16=False)[0]
    run([cc, *WARN_FLAGS, "-fsanitize=undefined",
         "-fno-sanitize-recover=all", "share.c", "-o", "share"], tmp_path)
    run(["./share"], tmp_path)


_LEVELS_RUN = """\
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
fn = lib.levels
n = 6
y = np.full((n, 1), -7.0, np.float32)
lib.exo_hl_sizeof_fast32.restype = ctypes.c_size_t
fast = ctypes.c_int64 if lib.exo_hl_sizeof_fast32() == 8 else ctypes.c_int32
fn.argtypes = [ctypes.c_void_p, fast, ctypes.c_void_p]
fn(None, n, y.ctypes.data)
print(" ".join(str(int(v)) for v in y[:, 0]))
"""


def test_parallel_region_only_with_more_than_one_thread(tmp_path,
                                                        monkeypatch):
    """The loop body runs at OpenMP level 1 (in a parallel region) with two
    threads, at level 0 (no region: the function is called directly) with
    one; every iteration runs either way."""
    import os
    import subprocess
    import sys
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "gcc")
    assert openmp.openmp_supported("gcc")
    lib = levels.compile().library_path
    got = {}
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        r = subprocess.run([sys.executable, "-c", _LEVELS_RUN, lib],
                           env=env, capture_output=True, text=True,
                           check=True)
        got[threads] = r.stdout.split()
    assert got == {"1": ["0"] * 6, "2": ["1"] * 6}


def test_outlined_loop_runs_in_parallel_and_agrees(tmp_path, monkeypatch):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "gcc")
    assert openmp.openmp_supported("gcc")
    assert "levels_par(" in levels.c_code_str()
    for p, ref, vec in ((_par_rows(), rows, True),
                        (_par_rows_plain(), rows_plain, False)):
        rng = np.random.default_rng(3)
        for m, n in ((1, 8), (5, 24), (13, 16), (2, 8)):
            x = rng.integers(-8, 9, (m, n)).astype(np.float32)
            y0 = rng.integers(-8, 9, (m, n)).astype(np.float32)
            want, got = y0.copy(), y0.copy()
            if vec:
                a = rng.integers(-3, 4, (1, )).astype(np.float32)
                ref.interpret(m=m, n=n, a=a, x=x, y=want)
                p.compile()(m, n, a, x, got)
            else:
                ref.interpret(m=m, n=n, x=x, y=want)
                p.compile()(m, n, x, got)
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


def test_register_buffers_keep_the_loop_inline(tmp_path):
    """A register array cannot be passed as a pointer parameter: the loop
    stays inline, under omp parallel for, except under clang, which does
    not give that region the function's target attribute and refused to
    compile it ("AVX vector return ... changes the ABI")."""
    c = _compile_everywhere(tmp_path, [regs_outside], "regs_outside")
    assert "regs_outside_par" not in c
    assert "#if defined(_OPENMP) && !defined(__clang__)\n" \
        "#pragma omp parallel for\n#endif" in c


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


@proc
def two_phase(n: size, x: f32[n], y: f32[n], z: f32[n]):
    assert n >= 1
    for i in par(0, n):
        y[i] = 2.0 * x[i]
    for i in par(0, n):
        z[i] = y[n - 1 - i]             # what another thread wrote


_TWO_PHASE_RUN = """\
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
fn = lib.two_phase
lib.exo_hl_sizeof_fast32.restype = ctypes.c_size_t
fast = ctypes.c_int64 if lib.exo_hl_sizeof_fast32() == 8 else ctypes.c_int32
fn.argtypes = [ctypes.c_void_p, fast] + [ctypes.c_void_p] * 3
bad = 0
for n in (1, 2, 3, 7, 4096, 1 << 18):
    x = np.arange(n, dtype=np.float32) % 1000
    for _ in range(20 if n > 7 else 1):
        y = np.zeros(n, np.float32)
        z = np.zeros(n, np.float32)
        fn(None, n, x.ctypes.data, y.ctypes.data, z.ctypes.data)
        bad += not np.array_equal(z, 2 * x[::-1])
print(bad)
"""


def test_consecutive_par_loops_share_one_region(tmp_path, monkeypatch):
    """Two par loops in a row: one parallel region, a barrier between them
    (the second reads what other threads wrote in the first), each loop a
    call per thread; one thread calls both directly. Run on two threads
    and one, the result is the serial one."""
    import os
    import subprocess
    import sys
    c = _compile_everywhere(tmp_path, [two_phase], "two_phase")
    call = "two_phase_par{}(ctxt, n, {}, omp_get_thread_num(), " \
        "omp_get_num_threads());"
    assert ("#pragma omp parallel\n        {\n            "
            + call.format("", "x, y") + "\n#pragma omp barrier\n            "
            + call.format("_1", "y, z") + "\n        }\n    } else {\n"
            "        two_phase_par(ctxt, n, x, y, 0, 1);\n"
            "        two_phase_par_1(ctxt, n, y, z, 0, 1);\n    }\n") in c, c
    assert c.count("#pragma omp parallel") == 1
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "gcc")
    assert openmp.openmp_supported("gcc")
    lib = two_phase.compile().library_path
    for threads in ("2", "1"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        r = subprocess.run([sys.executable, "-c", _TWO_PHASE_RUN, lib],
                           env=env, capture_output=True, text=True,
                           check=True)
        assert r.stdout.split() == ["0"], (threads, r.stdout)


def test_a_statement_between_par_loops_splits_the_region():
    @proc
    def apart(n: size, x: f32[n], y: f32[n], s: f32[1]):
        for i in par(0, n):
            y[i] = x[i]
        s[0] = 1.0
        for i in par(0, n):
            x[i] = y[i] + 1.0
    c = apart.c_code_str()
    assert c.count("#pragma omp parallel\n") == 2
    assert "omp barrier" not in c
