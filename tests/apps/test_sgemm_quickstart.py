"""The README's first command runs this app: keep it working end to end."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "apps" / "sgemm_quickstart"


def test_quickstart_runs_and_checks_against_numpy():
    r = subprocess.run([sys.executable, str(APP / "run.py"), "--size", "64",
                        "--reps", "1"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "C_reg: f32[4, 16] @ DRAM_STATIC" in out
    assert "interpret: equal to numpy" in out
    assert "compiled C: equal to numpy" in out
    assert "scheduled exo_hl (C)" in out and "GFLOP/s" in out
