"""The ``exo-hl compile`` command line (also ``python -m exo_hl``)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

KERNELS = '''\
from __future__ import annotations
from exo_hl import f32, proc, seq, size
from helpers import scale


@proc
def axpy(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += 2.0 * x[i]


@proc
def _private(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 0.0


@proc
def twice(n: size, x: f32[n]):
    scale(n, x)
    scale(n, x)
'''

HELPERS = '''\
from __future__ import annotations
from exo_hl import f32, proc, seq, size


@proc
def scale(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 2.0
'''


def cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "exo_hl", *args], cwd=cwd,
                          env=env, capture_output=True, text=True)


def test_compile_public_procs_with_dep_file(tmp_path):
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    r = cli("compile", "kern.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    h = (tmp_path / "out" / "kern.h").read_text()
    assert "void axpy(kern_Context *ctxt" in h
    assert "void twice(kern_Context *ctxt" in h
    # helpers' scale is imported, hence module-level and public too
    assert "void scale(kern_Context *ctxt" in h
    assert "_private" not in h
    assert (tmp_path / "out" / "kern.c").exists()
    dep = (tmp_path / "out" / "kern.d").read_text().split()
    assert dep[:2] == ["out/kern.c", "out/kern.h:"]
    assert dep[2:] == ["kern.py", "helpers.py"]


def test_stem_and_selected_procs(tmp_path):
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    r = cli("compile", "kern.py", "-o", "gen", "--stem", "mylib", "--proc",
            "twice", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    h = (tmp_path / "gen" / "mylib.h").read_text()
    c = (tmp_path / "gen" / "mylib.c").read_text()
    assert "mylib_Context" in h and "void twice(" in h
    assert "axpy" not in h and "void scale(" not in h
    assert "static void scale(mylib_Context *ctxt" in c


def test_unknown_proc_name(tmp_path):
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    r = cli("compile", "kern.py", "-o", "gen", "--proc", "nope", cwd=tmp_path)
    assert r.returncode != 0
    assert "nope" in r.stderr and "Traceback" not in r.stderr


def test_missing_file(tmp_path):
    r = cli("compile", "nothere.py", "-o", "gen", cwd=tmp_path)
    assert r.returncode != 0
    assert "nothere.py" in r.stderr and "Traceback" not in r.stderr


def test_python_syntax_error(tmp_path):
    (tmp_path / "bad.py").write_text("x = (\n")
    r = cli("compile", "bad.py", "-o", "gen", cwd=tmp_path)
    assert r.returncode != 0
    assert "bad.py:1" in r.stderr and "SyntaxError" in r.stderr
    assert "Traceback" not in r.stderr


def test_procedure_error_reports_file_and_line(tmp_path):
    (tmp_path / "oob.py").write_text(textwrap.dedent('''\
        from __future__ import annotations
        from exo_hl import f32, proc, seq, size


        @proc
        def undef(n: size, x: f32[n]):
            for i in seq(0, n):
                x[i] = no_such_name
        '''))
    r = cli("compile", "oob.py", "-o", "gen", cwd=tmp_path)
    assert r.returncode != 0
    assert "oob.py:8" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "gen").exists()


def test_error_raised_by_user_code_on_import(tmp_path):
    (tmp_path / "boom.py").write_text("import math\n\nraise ValueError('no')\n")
    r = cli("compile", "boom.py", "-o", "gen", cwd=tmp_path)
    assert r.returncode != 0
    assert "boom.py:3" in r.stderr and "ValueError" in r.stderr
    assert "Traceback" not in r.stderr


def test_console_script_entry_point():
    from exo_hl.cli import main
    assert callable(main)
    text = (REPO / "pyproject.toml").read_text()
    assert 'exo-hl = "exo_hl.cli:main"' in text


PAR_KERNEL = '''\
from __future__ import annotations
from exo_hl import f32, par, proc, size


@proc
def inc(n: size, x: f32[n]):
    for i in par(0, n):
        x[i] += 1.0
'''


def test_openmp_flag_named_in_output_and_header(tmp_path):
    (tmp_path / "pk.py").write_text(PAR_KERNEL)
    r = cli("compile", "pk.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "out/pk.c" in r.stdout and "-fopenmp" in r.stdout
    assert "build with -fopenmp" in (tmp_path / "out" / "pk.h").read_text()
    # no parallel loops: nothing to say
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    r = cli("compile", "kern.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0 and "openmp" not in r.stdout.lower()


def test_missing_future_import_reported_with_file_and_line(tmp_path):
    (tmp_path / "nf.py").write_text(
        "from exo_hl import f32, proc, size\n\n\n@proc\n"
        "def first(n: size, x: f32[n]):\n    x[0] = 1.0\n")
    r = cli("compile", "nf.py", "-o", "out", cwd=tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "nf.py:5: procedure 'first'" in r.stderr
    assert "add `from __future__ import annotations`" in r.stderr


HWLIB = '''\
from __future__ import annotations
from exo_hl import DRAM, config, extern, f32, instr, proc, seq, size


class FASTMEM(DRAM):
    pass


@config
class Knobs:
    scale: f32


@extern("({x} * 0.5f)")
def half(x):
    return x * 0.5


@instr("for (int k = 0; k < {n}; k++) (&{dst_data})[k] = 0.0f;")
def zero(n: size, dst: [f32][n] @ DRAM):
    for i in seq(0, n):
        dst[i] = 0.0
'''

SCHEDULES = '''\
from __future__ import annotations
from exo_hl import f32, proc, seq, size


@proc
def _scale_algo(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 3.0


scaled = _scale_algo.rename("scaled")
'''

USES_LIBS = '''\
from __future__ import annotations
from exo_hl import f32, proc, seq, size
from hwlib.lib import FASTMEM, Knobs, half, zero
from hwlib.sched import scaled


@proc
def kernel(n: size, x: f32[n]):
    t: f32[4] @ FASTMEM
    zero(4, t[0:4])
    Knobs.scale = 2.0
    for i in seq(0, n):
        x[i] = half(x[i]) * Knobs.scale
    scaled(n, x)
'''


def test_dep_file_lists_modules_from_other_packages(tmp_path):
    lib = tmp_path / "libs" / "hwlib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "lib.py").write_text(HWLIB)
    (lib / "sched.py").write_text(SCHEDULES)
    app = tmp_path / "app"
    app.mkdir()
    (app / "kern.py").write_text(USES_LIBS)
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(REPO), str(tmp_path / "libs")]))
    r = subprocess.run([sys.executable, "-m", "exo_hl", "compile", "kern.py",
                        "-o", "out", "--proc", "kernel"], cwd=app, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    dep = (app / "out" / "kern.d").read_text().split()
    assert dep[:3] == ["out/kern.c", "out/kern.h:", "kern.py"]
    assert sorted(dep[3:]) == sorted([str(lib / "lib.py"),
                                      str(lib / "sched.py")])
    # neither the stdlib nor the compiler are dependencies
    assert not any("exo_hl" in d or d.endswith("os.py") for d in dep)
