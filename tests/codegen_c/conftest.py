"""Helpers for the C backend tests: compile generated C with warnings on."""
from __future__ import annotations

import shutil
import subprocess

import pytest

WARN_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2"]


def c_compilers():
    """gcc always; clang too when installed (never a failure if absent)."""
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)]


def run(cmd, cwd, **kw):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}"
    return r.stdout


@pytest.fixture
def warn_compile(tmp_path):
    """Compile ``basename.c`` in tmp_path to an object with -Werror."""
    def go(basename):
        for cc in c_compilers():
            run([cc, *WARN_FLAGS, "-c", f"{basename}.c", "-o",
                 f"{basename}_{cc}.o"], tmp_path)
    return go
