"""The shipped CMake module (issue 34 item 5: the documented snippet failed
as pasted, and found a Python without exo_hl). ``exo_hl_add_kernels``
finds an interpreter that can import exo_hl, generates the C at build time,
and generates it again when the kernel file changes; with Make and with
Ninja."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

KERNELS = '''\
from __future__ import annotations
from exo_hl import f32, proc, seq, size
from exo_hl import DRAM  # noqa: F401  (an imported name is not compiled)


@proc
def axpy(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += SCALE * x[i]
'''

MAIN = r'''
#include <stdio.h>
#include "kernels.h"
int main(void) {
    float x[4] = {1, 2, 3, 4}, y[4] = {0, 0, 0, 0};
    axpy(NULL, 4, x, y);
    printf("%g %g %g %g\n", y[0], y[1], y[2], y[3]);
    return 0;
}
'''

CMAKELISTS = '''\
cmake_minimum_required(VERSION 3.20)
project(exo_hl_cmake_demo C)
find_package(ExoHL REQUIRED)
exo_hl_add_kernels(kernels SOURCE kernels.py)
add_executable(app main.c)
target_link_libraries(app PRIVATE kernels)
'''


def _tool(name):
    """``name`` on PATH, else next to this interpreter (pip's cmake/ninja)."""
    found = shutil.which(name) or shutil.which(
        name, path=os.path.dirname(sys.executable))
    assert found, f"{name} is needed (pip install -e '.[test]' brings it)"
    return found


def _env(tmp_path):
    """No virtual environment active; the first python3 on PATH cannot
    import exo_hl (a system Python without it); this interpreter's
    directory comes later, as when a venv is installed but not active."""
    fake = tmp_path / "fakebin"
    fake.mkdir(exist_ok=True)
    for nm in ("python3", "python"):
        f = fake / nm
        f.write_text("#!/bin/sh\necho 'No module named exo_hl' >&2\nexit 1\n")
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "EXO_HL_PYTHON", "MAKEFLAGS")}
    env["PATH"] = os.pathsep.join([str(fake), os.environ.get("PATH", ""),
                                   os.path.dirname(sys.executable)])
    env["PYTHONPATH"] = str(REPO)
    return env


def _run(cmd, env, cwd=None):
    r = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout + r.stderr


def _cmake_dir():
    r = subprocess.run([sys.executable, "-m", "exo_hl", "--cmake-dir"],
                       env=dict(os.environ, PYTHONPATH=str(REPO)),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_cmake_dir_holds_the_module():
    d = Path(_cmake_dir())
    assert (d / "ExoHL.cmake").is_file()
    assert (d / "ExoHLConfig.cmake").is_file()
    assert "exo_hl_add_kernels" in (d / "ExoHL.cmake").read_text()


def _write(path, text, age):
    """Write ``path`` and date it ``age`` seconds from now (no sleeping for
    a coarse file-system clock)."""
    path.write_text(text)
    t = time.time() + age
    os.utime(path, (t, t))


@pytest.mark.parametrize("generator", ["Unix Makefiles", "Ninja"])
def test_configure_build_run_and_regenerate(tmp_path, generator):
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    kern, consts = src / "kernels.py", src / "consts.py"
    # the kernel file imports a module of the user's: it is in the depfile
    kernels = KERNELS.replace("from exo_hl import DRAM",
                              "from consts import SCALE\nfrom exo_hl import DRAM")
    _write(kern, kernels, -10)
    _write(consts, "SCALE = 2.0\n", -10)
    (src / "main.c").write_text(MAIN)
    (src / "CMakeLists.txt").write_text(CMAKELISTS)
    env = _env(tmp_path)
    cmake = _tool("cmake")
    gen = ["-G", generator]
    if generator == "Ninja":
        gen.append(f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}")
    out = _run([cmake, "-S", src, "-B", build, *gen,
                f"-DExoHL_DIR={_cmake_dir()}"], env)
    # the first python3 on PATH cannot import exo_hl: skipped
    assert "exo_hl: using " in out and "fakebin" not in out, out
    out = _run([cmake, "--build", build], env)
    assert "exo_hl: generating kernels.c" in out
    app = build / "app"
    assert _run([app], env).split() == ["2", "4", "6", "8"]
    # nothing changed: nothing generated again
    out = _run([cmake, "--build", build], env)
    assert "exo_hl: generating" not in out
    # the kernel file changes: the C is generated again, the app rebuilt
    _write(kern, kernels.replace("SCALE * x[i]", "(SCALE + 1.0) * x[i]"), 5)
    out = _run([cmake, "--build", build], env)
    assert "exo_hl: generating kernels.c" in out
    assert _run([app], env).split() == ["3", "6", "9", "12"]
    # the module it imports changes: generated again too
    _write(consts, "SCALE = 4.0\n", 10)
    out = _run([cmake, "--build", build], env)
    assert "exo_hl: generating kernels.c" in out
    assert _run([app], env).split() == ["5", "10", "15", "20"]


def test_a_python_without_exo_hl_is_refused_with_a_way_out(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "kernels.py").write_text(KERNELS.replace("SCALE", "2.0"))
    (src / "main.c").write_text(MAIN)
    (src / "CMakeLists.txt").write_text(CMAKELISTS)
    env = _env(tmp_path)
    env["EXO_HL_PYTHON"] = str(tmp_path / "fakebin" / "python3")
    r = subprocess.run([_tool("cmake"), "-S", str(src), "-B",
                        str(tmp_path / "build"), f"-DExoHL_DIR={_cmake_dir()}"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "cannot import exo_hl" in r.stderr and "EXO_HL_PYTHON" in r.stderr
    # and with no interpreter that has it anywhere
    env = _env(tmp_path)
    env["PATH"] = str(tmp_path / "fakebin") + os.pathsep + "/usr/bin:/bin"
    env.pop("PYTHONPATH")
    r = subprocess.run([_tool("cmake"), "-S", str(src), "-B",
                        str(tmp_path / "build2"),
                        f"-DExoHL_DIR={_cmake_dir()}"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "no Python interpreter here can import exo_hl" in r.stderr
    assert "-DEXO_HL_PYTHON=" in r.stderr
