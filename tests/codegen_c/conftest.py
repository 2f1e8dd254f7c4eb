"""Fixtures for the C backend tests."""
from __future__ import annotations

import pytest

from cg_helpers import WARN_FLAGS, c_compilers, run


@pytest.fixture
def warn_compile(tmp_path):
    """Compile ``basename.c`` in tmp_path to an object with -Werror."""
    def go(basename):
        f16 = "_Float16" in (tmp_path / f"{basename}.h").read_text()
        for cc in c_compilers(float16=f16):
            run([cc, *WARN_FLAGS, "-c", f"{basename}.c", "-o",
                 f"{basename}_{cc}.o"], tmp_path)
    return go
