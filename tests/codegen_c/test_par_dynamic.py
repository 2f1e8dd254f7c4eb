"""par_dynamic loops (``parallelize(loop, dynamic=True)``): the same
race-free loop as ``par``; in C its threads take the iterations one at a
time from a counter they share (docs/api.md, section 6): the C text,
warning-free builds, every iteration run exactly once on two threads.
(Printing and the checks: tests/rewrites/test_parallelize.py.)"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from exo_hl import compile_procs, f32, par, proc, seq, size
from exo_hl.codegen_c import openmp
from exo_hl.hw_libs.avx2 import AVX2, mm256_setzero_ps, mm256_storeu_ps

from cg_helpers import WARN_FLAGS, c_compilers, run


@proc
def bump(m: size, n: size, x: f32[m, n], y: f32[m, n]):
    for r in seq(0, m):
        for i in seq(0, n):
            y[r, i] += x[r, i] + 1.0


def _dyn():
    return bump.parallelize('i', dynamic=True)


def test_written_by_hand_is_checked_too():
    from exo_hl.frontend.decorators import parse_proc_source
    ok = ("def f(n: size, x: f32[n]):\n"
          "    for i in par_dynamic(0, n):\n"
          "        x[i] = 1.0\n")
    assert "par_dynamic(0, n)" in str(parse_proc_source(ok, {}, "f.py"))
    racy = ("def g(n: size, x: f32[n + 1]):\n"
            "    for i in par_dynamic(0, n):\n"
            "        x[i + 1] = x[i]\n")
    with pytest.raises(Exception, match="race"):
        parse_proc_source(racy, {}, "g.py")


def test_c_text_and_warning_free_builds(tmp_path):
    compile_procs([_dyn()], tmp_path, "bump")
    c = (tmp_path / "bump.c").read_text()
    fn = c[c.index("static void bump_par("):c.index("void bump(")]
    # the outlined function takes the shared counter and claims iterations
    assert "int_fast32_t threads,\n" in fn and "int64_t *exo_hl_next)" in fn
    assert ("for (int64_t i_k = exo_hl_claim(exo_hl_next); i_k < i_count; "
            "i_k = exo_hl_claim(exo_hl_next)) {\n"
            "        int_fast32_t i = (int_fast32_t)(i_first + i_k);"
            ) in fn, fn
    assert "exo_hl_share(" not in c
    # the caller zeroes one counter per execution of the loop (inside r)
    caller = c[c.index("void bump("):]
    assert "        int64_t exo_hl_next_0 = 0;\n#ifdef _OPENMP" in caller
    assert caller.count("&exo_hl_next_0)") == 3
    for cc in c_compilers(float16=False):
        for omp in (["-fopenmp"], []):
            run([cc, *WARN_FLAGS, *omp, "-c", "bump.c", "-o",
                 f"bump_{cc}.o"], tmp_path)


@proc
def regs_outside(n: size, y: f32[n, 8]):
    acc: f32[8] @ AVX2
    mm256_setzero_ps(acc[0:8])
    for r in par(0, n):
        mm256_storeu_ps(y[r, 0:8], acc[0:8])


def test_a_loop_kept_inline_gets_the_dynamic_clause():
    c = regs_outside.parallelize('r', dynamic=True).c_code_str()
    assert "#pragma omp parallel for schedule(dynamic)\n" in c


@proc
def two_phase(n: size, x: f32[n], y: f32[n], z: f32[n]):
    assert n >= 1
    for i in seq(0, n):
        y[i] = 2.0 * x[i]
    for i in seq(0, n):
        z[i] = y[n - 1 - i]             # what another thread wrote


_RUN = """\
import ctypes, sys
import numpy as np
bad = 0
lib = ctypes.CDLL(sys.argv[1])
lib.exo_hl_sizeof_fast32.restype = ctypes.c_size_t
fast = ctypes.c_int64 if lib.exo_hl_sizeof_fast32() == 8 else ctypes.c_int32
fn = lib.bump
fn.argtypes = [ctypes.c_void_p, fast, fast, ctypes.c_void_p, ctypes.c_void_p]
for m, n in ((1, 1), (3, 2), (2, 7), (4, 4096)):
    x = (np.arange(m * n, dtype=np.float32) % 100).reshape(m, n)
    for _ in range(20 if n > 7 else 3):
        y = np.zeros((m, n), np.float32)
        fn(None, m, n, x.ctypes.data, y.ctypes.data)
        bad += not np.array_equal(y, x + 1)     # each iteration once
lib = ctypes.CDLL(sys.argv[2])
fn = lib.two_phase
fn.argtypes = [ctypes.c_void_p, fast] + [ctypes.c_void_p] * 3
for n in (1, 2, 7, 4096):
    x = np.arange(n, dtype=np.float32) % 1000
    for _ in range(20 if n > 7 else 3):
        y, z = np.zeros(n, np.float32), np.zeros(n, np.float32)
        fn(None, n, x.ctypes.data, y.ctypes.data, z.ctypes.data)
        bad += not np.array_equal(z, 2 * x[::-1])
print(bad)
"""


def test_two_threads_run_every_iteration_once(tmp_path, monkeypatch):
    """Compiled with OpenMP, on two threads and on one: each iteration
    of a par_dynamic loop inside a seq loop runs exactly once per outer
    iteration (the counter is zeroed for each), and two consecutive
    par_dynamic loops share a region with a barrier, each with its own
    counter; the results equal the interpreter's."""
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "gcc")
    assert openmp.openmp_supported("gcc")
    two = two_phase.parallelize('i', dynamic=True)
    two = two.parallelize(two.find_loop('i #1'), dynamic=True)
    c = two.c_code_str()
    assert c.count("#pragma omp parallel") == 1 and "barrier" in c
    assert "&exo_hl_next_0)" in c and "&exo_hl_next_1)" in c
    libs = [_dyn().compile(), two.compile()]
    for threads in ("2", "1"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        r = subprocess.run([sys.executable, "-c", _RUN,
                            *(f.library_path for f in libs)], env=env,
                           capture_output=True, text=True, check=True)
        assert r.stdout.split() == ["0"], (threads, r.stdout, r.stderr)
    # and through the callable, against the interpreter
    rng = np.random.default_rng(1)
    x = rng.integers(-5, 6, (3, 9)).astype(np.float32)
    want, got = np.zeros_like(x), np.zeros_like(x)
    bump.interpret(m=3, n=9, x=x, y=want)
    libs[0](3, 9, x, got)
    np.testing.assert_array_equal(got, want)
