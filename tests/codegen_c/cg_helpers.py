"""Helpers for the C backend tests: run compilers with warnings on."""
from __future__ import annotations

import shutil
import subprocess

WARN_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2"]


def c_compilers():
    """gcc always; clang too when installed (never a failure if absent)."""
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)]


def run(cmd, cwd, **kw):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}"
    return r.stdout
