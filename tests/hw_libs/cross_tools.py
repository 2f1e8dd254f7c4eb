"""Whether a cross target's tools are here, for the tests that need them.

A test calls ``need_target(name)`` first. Without the cross compiler or
qemu-user it is skipped with the reason (the tools are optional system
packages, installed by ``.ci/run``), unless ``EXO_HL_REQUIRE_CROSS=1``
is set (``.ci/run`` sets it after installing them): then it fails, so CI
never passes by skipping what it could run.
"""
from __future__ import annotations

import os

import pytest

from exo_hl.codegen_c.cross import TARGETS


def need_target(name):
    missing = TARGETS[name].missing_tools()
    if not missing:
        return
    msg = (f"target {name!r} needs {', '.join(missing)} (Debian: apt-get "
           f"install gcc-aarch64-linux-gnu qemu-user clang-19 "
           f"gcc-riscv64-linux-gnu libc6-dev-riscv64-cross)")
    if os.environ.get("EXO_HL_REQUIRE_CROSS", "").strip() in ("1", "true",
                                                              "yes"):
        pytest.fail(f"EXO_HL_REQUIRE_CROSS is set but {msg}")
    pytest.skip(msg)
