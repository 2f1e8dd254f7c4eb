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
    # helpers' scale is only imported: not one of kern.py's procedures
    # (issue 34 item 10); twice's C calls it as a static helper
    assert "void scale(kern_Context *ctxt" not in h
    assert "scale(" in (tmp_path / "out" / "kern.c").read_text()
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


AVX_KERNEL = '''\
from __future__ import annotations
from exo_hl import DRAM, f32, proc
from exo_hl.hw_libs.avx2 import AVX2, mm256_loadu_ps, mm256_storeu_ps


@proc
def copy8(x: f32[8] @ DRAM, y: f32[8] @ DRAM):
    r: f32[8] @ AVX2
    mm256_loadu_ps(r, x[0:8])
    mm256_storeu_ps(y[0:8], r)
'''


def test_cli_says_which_cpu_features_and_plain_cc_builds(tmp_path):
    (tmp_path / "vec.py").write_text(AVX_KERNEL)
    r = cli("compile", "vec.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "needs CPU features avx2" in r.stdout
    c = (tmp_path / "out" / "vec.c").read_text()
    assert 'EXO_HL_TARGET("avx2")' in c
    b = subprocess.run(["cc", "-O2", "-c", "vec.c"], cwd=tmp_path / "out",
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stderr


NEON_KERNEL = '''
from __future__ import annotations
from exo_hl import proc, f16, DRAM
from exo_hl.hw_libs.neon import Neon, neon_vld_8xf16, neon_vst_8xf16

@proc
def cp16(x: f16[8] @ DRAM, y: f16[8] @ DRAM):
    r: f16[8] @ Neon
    neon_vld_8xf16(r[0:8], x[0:8])
    neon_vst_8xf16(y[0:8], r[0:8])
'''


def test_cli_says_how_to_build_arm_code(tmp_path):
    """NEON code without --target: the C is written, and the output says
    its features come from -march (not that no -m flags are needed)."""
    (tmp_path / "k16.py").write_text(NEON_KERNEL)
    r = cli("compile", "k16.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "needs CPU features fp16, neon" in r.stdout, r.stdout
    assert "no -m flags" not in r.stdout, r.stdout
    assert ("aarch64-linux-gnu-gcc -march=armv8.2-a+fp16, or here with "
            "--target aarch64-fp16") in r.stdout, r.stdout
    assert "ARM and RISC-V" in (tmp_path / "out" / "k16.h").read_text()


# ---------------------------------------------------------------------------
# show, --cpu-features, --version, one-line errors

def test_show_prints_every_public_proc(tmp_path):
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    r = cli("show", "kern.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "def axpy(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):" in out
    assert "        y[i] += 2.0 * x[i]" in out
    assert "def twice(" in out and "def scale(" not in out
    assert "_private" not in out
    assert "\x1b[" not in out  # no colours when not printing to a terminal
    # one block per procedure, separated by a blank line
    heads = sorted(b.splitlines()[0].split("(")[0]
                   for b in out.strip().split("\n\n"))
    assert heads == ["def axpy", "def twice"]


def test_show_one_proc_and_colours(tmp_path):
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    r = cli("show", "kern.py", "--proc", "twice", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == \
        "def twice(n: size, x: f32[n] @ DRAM):"
    assert "axpy" not in r.stdout
    r = cli("show", "kern.py", "--proc", "axpy", "--color", "always",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "\x1b[" in r.stdout and "axpy" in r.stdout
    r = cli("show", "kern.py", "--proc", "nope", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "nope" in r.stderr


def test_show_scheduled_procedure(tmp_path):
    (tmp_path / "sched.py").write_text(textwrap.dedent('''\
        from __future__ import annotations
        from exo_hl import f32, proc, seq, size


        @proc
        def scale(n: size, x: f32[n]):
            assert n % 4 == 0
            for i in seq(0, n):
                x[i] = x[i] * 2.0


        fast = scale.split('i', 4, 'io', 'ii', tail='perfect')
        fast = fast.rename('scale_4')
        '''))
    r = cli("show", "sched.py", "--proc", "scale_4", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "def scale_4(n: size, x: f32[n] @ DRAM):"
    assert "    for io in seq(0, n / 4):" in lines
    assert "        for ii in seq(0, 4):" in lines


def test_compile_cpu_features_lists_each_proc(tmp_path):
    text = AVX_KERNEL.replace("from exo_hl import DRAM, f32, proc\n",
                              "from exo_hl import DRAM, f32, proc, seq\n")
    text += textwrap.dedent('''\


        @proc
        def plain(x: f32[8] @ DRAM):
            for i in seq(0, 8):
                x[i] = 0.0
        ''')
    (tmp_path / "vec.py").write_text(text)
    r = cli("compile", "vec.py", "--cpu-features", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = dict(l.split(":", 1) for l in r.stdout.splitlines())
    assert rows["copy8"].strip() == "avx2"
    assert rows["plain"].strip() == "none"
    assert not (tmp_path / "vec.c").exists()
    # with -o it also compiles
    r = cli("compile", "vec.py", "--cpu-features", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "copy8: avx2" in r.stdout
    assert (tmp_path / "out" / "vec.c").exists()


def test_compile_without_output_dir_is_a_usage_error(tmp_path):
    (tmp_path / "kern.py").write_text(KERNELS)
    (tmp_path / "helpers.py").write_text(HELPERS)
    r = cli("compile", "kern.py", cwd=tmp_path)
    assert r.returncode == 2
    assert "-o OUT_DIR is required" in r.stderr
    assert "Traceback" not in r.stderr


def test_version():
    from exo_hl import __version__
    r = cli("--version", cwd=REPO)
    assert r.returncode == 0
    assert r.stdout.strip() == f"exo-hl {__version__}"


BAD_INPUTS = {
    "syntax.py": b"def f(:\n",
    "binary.py": b"\x00\x01\x02 not text",
    "latin1.py": b"x = '\xff\xfe'\n",
    "notes.txt": b"these are notes, not Python\n",
    "empty.py": b"",
    "boom.py": b"import math\n\n\nraise RuntimeError('bad\\nthings')\n",
}


def test_bad_input_files_give_one_line_and_status_1(tmp_path):
    for name, data in BAD_INPUTS.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "adir").mkdir()
    for name in [*BAD_INPUTS, "adir", "missing.py"]:
        for cmd in (["show", name], ["compile", name, "-o", "out"]):
            r = cli(*cmd, cwd=tmp_path)
            assert r.returncode == 1, (cmd, r.stderr)
            assert r.stdout == "", (cmd, r.stdout)
            lines = r.stderr.splitlines()
            assert len(lines) == 1, (cmd, r.stderr)
            assert lines[0].startswith("exo-hl: error: "), (cmd, r.stderr)
            assert name in lines[0], (cmd, r.stderr)
    assert not (tmp_path / "out").exists()


def test_procedure_error_is_one_line_and_debug_shows_everything(tmp_path):
    (tmp_path / "oob.py").write_text(textwrap.dedent('''\
        from __future__ import annotations
        from exo_hl import f32, proc, seq, size


        @proc
        def shift(n: size, x: f32[n]):
            for i in seq(0, n):
                x[i + 1] = 0.0
        '''))
    r = cli("show", "oob.py", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [r.stderr.rstrip("\n")]
    assert "oob.py:8" in r.stderr and "out of bounds" in r.stderr
    for argv in (["--debug", "show", "oob.py"], ["show", "oob.py", "--debug"]):
        r = cli(*argv, cwd=tmp_path)
        assert r.returncode == 1
        assert "Traceback" in r.stderr
        assert "BoundsError" in r.stderr
        assert "x[i + 1] = 0.0" in r.stderr  # the statement, in full
        # the traceback goes into exo_hl (internal frames not hidden)
        assert "effects" in r.stderr


def test_scheduling_error_in_file_names_the_call(tmp_path):
    (tmp_path / "sched.py").write_text(textwrap.dedent('''\
        from __future__ import annotations
        from exo_hl import f32, proc, seq, size


        @proc
        def scale(n: size, x: f32[n]):
            for i in seq(0, n):
                x[i] = x[i] * 2.0


        fast = scale.split('i', 4, 'io', 'ii', tail='perfect')
        '''))
    r = cli("compile", "sched.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 1
    assert len(r.stderr.splitlines()) == 1
    assert "sched.py:7" in r.stderr and "divisible by 4" in r.stderr
    assert "Traceback" not in r.stderr


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


RESERVED_PUBLIC = '''\
from __future__ import annotations
from exo_hl import f32, proc, seq, size


@proc
def {name}(n: size, x: f32[n]):
    for i in seq(0, n):
        x[i] = 0.0
'''


def test_backend_refusals_are_one_located_line(tmp_path):
    """A public procedure C cannot export (a reserved name, or two public
    procedures with one name) is one file:line message and status 1."""
    for name in ("main", "EOF", "kern_Context"):
        (tmp_path / "kern.py").write_text(RESERVED_PUBLIC.format(name=name))
        r = cli("compile", "kern.py", "-o", "out", cwd=tmp_path)
        assert r.returncode == 1
        assert "Traceback" not in r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        assert lines[0].startswith(
            f"exo-hl: error: {tmp_path / 'kern.py'}:6: in procedure "
            f"'{name}': procedure '{name}' cannot be exported to C"), lines
    twins = RESERVED_PUBLIC.format(name="a") + RESERVED_PUBLIC.format(
        name="b").replace("0.0", "1.0").split("\n", 2)[2] \
        + "\n\nc = b.rename('a')\n"
    (tmp_path / "twins.py").write_text(twins)
    r = cli("compile", "twins.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "two different public procedures are " \
        "named 'a'" in lines[0] and "twins.py:12:" in lines[0], r.stderr
    r = cli("compile", "twins.py", "-o", "out", "--debug", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" in r.stderr


# ---------------------------------------------------------------------------
# issue 34 item 10: imported procedures, __all__, --proc, a closed pipe

def test_compile_honours_all_and_proc_names_an_imported_one(tmp_path):
    (tmp_path / "kern.py").write_text(
        KERNELS.replace("from helpers import scale\n",
                        "from helpers import scale\n"
                        "__all__ = ['twice']\n"))
    (tmp_path / "helpers.py").write_text(HELPERS)
    r = cli("compile", "kern.py", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    h = (tmp_path / "out" / "kern.h").read_text()
    assert "void twice(kern_Context *ctxt" in h
    assert "void axpy(" not in h and "void scale(kern_Context" not in h
    # --proc may name any module-level procedure, imported ones too
    r = cli("compile", "kern.py", "-o", "out2", "--proc", "scale",
            "--proc", "axpy", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    h = (tmp_path / "out2" / "kern.h").read_text()
    assert "void scale(kern_Context *ctxt" in h
    assert "void axpy(kern_Context *ctxt" in h and "twice" not in h


def test_a_scheduled_import_is_the_files_own(tmp_path):
    """A procedure the file schedules from an imported one is its own."""
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "fast.py").write_text(textwrap.dedent('''\
        from __future__ import annotations
        from helpers import scale

        scale_2 = scale.split('i', 2, 'io', 'ii').rename('scale_2')
        '''))
    r = cli("show", "fast.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("def scale_2(") and "def scale(" not in r.stdout


def test_show_into_a_closed_pipe_ends_quietly(tmp_path):
    """``exo-hl show FILE | head`` ended with "[Errno 32] Broken pipe" on
    stderr and status 1: now no message, and the status of a process
    SIGPIPE ended (141), as ``cat`` has."""
    # more than a pipe buffer (64 KiB) of output, so writing blocks
    body = "\n".join(f"    x[{k % 8}] = {k}.0 * x[{(k + 1) % 8}] + {k}.5"
                     for k in range(100))
    src = ["from __future__ import annotations",
           "from exo_hl import f32, proc", ""]
    for n in range(30):
        src += ["@proc", f"def p{n}(x: f32[8]):", body, ""]
    (tmp_path / "many.py").write_text("\n".join(src))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "exo_hl", "show",
                             "many.py"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()           # the reader goes away, as head does
    err = proc.stderr.read().decode()
    status = proc.wait(timeout=120)
    assert first.startswith(b"def p0(")
    assert err == "", err
    assert status == 141
    # the shell pipeline itself
    r = subprocess.run(f"{sys.executable} -m exo_hl show many.py | head -2",
                       shell=True, cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert len(r.stdout.splitlines()) == 2
