"""par loops are built with OpenMP by default where the compiler has it."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

from exo_hl import f32, instr, par, proc, seq, size
from exo_hl.codegen_c import openmp

# what the C sees: the OpenMP nesting level inside the loop body (1 in a
# parallel region), or -1 when the file was built without OpenMP
_LEVEL = """\
#ifdef _OPENMP
#include <omp.h>
#define EXO_TEST_OMP_LEVEL() ((float)omp_get_level())
#else
#define EXO_TEST_OMP_LEVEL() (-1.0f)
#endif
"""


@instr("{dst_data} = EXO_TEST_OMP_LEVEL();", c_global=_LEVEL)
def omp_level(dst: [f32][1]):
    dst[0] = 1.0


@proc
def levels(n: size, y: f32[n, 1]):
    for i in par(0, n):
        omp_level(y[i, 0:1])


@proc
def serial_levels(n: size, y: f32[n, 1]):
    for i in seq(0, n):
        omp_level(y[i, 0:1])


def _run(f, n=8):
    y = np.zeros((n, 1), np.float32)
    f(n, y)
    return y[:, 0]


@pytest.fixture
def two_threads():
    """OpenMP allowed two threads, whatever earlier tests in this process
    left: a kernel opens its parallel region only when
    omp_get_max_threads() > 1 (else it calls the loop serially, level 0),
    and the libgomp thread count is process-wide (the apps' tuning benches
    set it to 1 and keep it). gcc's -fopenmp links libgomp.so.1, the
    runtime these calls reach."""
    gomp = ctypes.CDLL("libgomp.so.1")
    gomp.omp_set_num_threads(ctypes.c_int(2))
    yield
    gomp.omp_set_num_threads(ctypes.c_int(os.cpu_count() or 1))


def test_par_loops_compile_with_openmp_by_default(tmp_path, monkeypatch,
                                                  two_threads):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    assert openmp.openmp_supported("gcc")
    monkeypatch.setenv("CC", "gcc")
    np.testing.assert_array_equal(_run(levels.compile()), 1.0)
    # opting out, and procedures without par loops, stay serial
    np.testing.assert_array_equal(_run(levels.compile(openmp=False)), -1.0)
    np.testing.assert_array_equal(_run(serial_levels.compile()), -1.0)
    # a caller of a procedure with par loops needs OpenMP too
    @proc
    def caller(n: size, y: f32[n, 1]):
        levels(n, y)

    np.testing.assert_array_equal(_run(caller.compile()), 1.0)


def test_falls_back_to_serial_without_openmp(tmp_path, monkeypatch):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))
    fake = tmp_path / "no-omp-cc"
    fake.write_text("#!/bin/sh\n"
                    "for a in \"$@\"; do [ \"$a\" = -fopenmp ] && "
                    "{ echo 'unsupported option -fopenmp' >&2; exit 1; }; "
                    "done\nexec gcc \"$@\"\n")
    fake.chmod(0o755)
    assert not openmp.openmp_supported(str(fake))
    with pytest.warns(RuntimeWarning, match="par loops run serially"):
        f = levels.compile(cc=str(fake))
    np.testing.assert_array_equal(_run(f), -1.0)
    # opting out says nothing
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(
            _run(levels.compile(cc=str(fake), openmp=False)), -1.0)


def test_header_says_which_flag_the_build_needs():
    from exo_hl.codegen_c.emit import generate
    header, _ = generate([levels], "lv")
    assert "build with -fopenmp" in header.split("#ifndef")[0]
    header, _ = generate([serial_levels], "sl")
    assert "openmp" not in header.lower()
