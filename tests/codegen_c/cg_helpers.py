"""Helpers for the C backend tests: run compilers with warnings on."""
from __future__ import annotations

import shutil
import subprocess

WARN_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2"]


def c_compilers(float16=True):
    """gcc always; clang too when installed (never a failure if absent).

    ``float16``: the code uses ``_Float16``, which clang < 15 rejects on
    x86-64; such a clang is left out rather than failing the test."""
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)
            and (not float16 or supports_float16(cc))]


def supports_float16(cc) -> bool:
    r = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-x", "c", "-"],
                       input="_Float16 h;\n", capture_output=True, text=True)
    return r.returncode == 0


def run(cmd, cwd, **kw):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}"
    return r.stdout
