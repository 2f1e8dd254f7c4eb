"""apps/gemm_c_demo builds with make (CLI -> C -> executable) and prints OK."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_gemm_c_demo_make(tmp_path):
    app = tmp_path / "gemm_c_demo"
    shutil.copytree(REPO / "apps" / "gemm_c_demo", app,
                    ignore=shutil.ignore_patterns("build", "demo"))
    env = dict(os.environ, PYTHONPATH=str(REPO), CC="gcc",
               CFLAGS="-O1 -std=c11 -Wall -Wextra -Werror")
    r = subprocess.run(["make", f"PYTHON={sys.executable}", "run"], cwd=app,
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "OK"
    assert "-Werror" in r.stdout            # CFLAGS honoured
    dep = (app / "build" / "gemm_kernels.d").read_text()
    assert dep.startswith("build/gemm_kernels.c build/gemm_kernels.h:")
    assert "gemm.py" in dep
