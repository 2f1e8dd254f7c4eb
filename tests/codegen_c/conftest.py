"""Fixtures for the C backend tests."""
from __future__ import annotations

import pytest

import subprocess

from cg_helpers import F16_FLAGS, WARN_FLAGS, c_compilers, run


def _without_f16_notes(stderr):
    """gcc's -pedantic notes on ``_Float16`` (the one ISO C extension the
    C ABI documents) and their context lines removed."""
    keep, skip = [], False
    for ln in stderr.splitlines():
        if "does not support the" in ln and "_Float16" in ln:
            skip = True
            continue
        if skip and ln.startswith(" "):
            continue
        skip = False
        if "In function" not in ln and \
                not ln.startswith("In file included from"):
            keep.append(ln)
    return "\n".join(keep).strip()


@pytest.fixture
def warn_compile(tmp_path):
    """Compile ``basename.c`` in tmp_path to an object with -Werror and
    -pedantic (with ``_Float16``, that may be its only diagnostic)."""
    def go(basename):
        f16 = "_Float16" in (tmp_path / f"{basename}.h").read_text()
        for cc in c_compilers(float16=f16):
            cmd = [cc, *WARN_FLAGS, "-c", f"{basename}.c", "-o",
                   f"{basename}_{cc}.o"]
            if not f16:
                run(cmd, tmp_path)
                continue
            r = subprocess.run(cmd + F16_FLAGS, cwd=tmp_path,
                               capture_output=True, text=True)
            assert r.returncode == 0 and not _without_f16_notes(r.stderr), \
                f"$ {' '.join(cmd)}\n{r.stderr}"
    return go
