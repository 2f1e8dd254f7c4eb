"""The README's first command runs this app: keep it working end to end."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "apps" / "sgemm_quickstart"


def test_quickstart_runs_and_checks_against_numpy():
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    r = subprocess.run([sys.executable, str(APP / "run.py"), "--size", "64",
                        "--reps", "1"], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # the tile of C in registers of a shipped library, selected instructions
    assert re.search(r"C_reg: f32\[8, 2, (16|8)\] @ AVX(512|2)", out), out
    assert re.search(r"mm(512|256)_fmadd_bcst_ps\(C_reg\[7, 1, 0:", out)
    assert "for ii" not in out
    assert "interpret: equal to numpy" in out
    assert "compiled C: equal to numpy" in out
    assert "scheduled exo_hl (C)" in out and "GFLOP/s" in out
    # BLAS: one thread, OpenBLAS's own kernel choice, and each figure as a
    # share of the measured FMA peak
    assert "BLAS baseline: numpy, 1 thread" in out
    assert "unset OPENBLAS_CORETYPE=Haswell" in out
    assert re.search(r"FMA peak \(avx(2|512), 1 core, measured\): "
                     r"\d+\.\d GFLOP/s", out)
    rows = [ln for ln in out.splitlines() if "GFLOP/s" in ln and " ms " in ln]
    assert len(rows) == 3
    assert all(re.search(r"\d+\.\d% of peak$", ln) for ln in rows)


def test_quickstart_schedule_on_an_avx2_cpu():
    """On a CPU without AVX-512 the same schedule selects the AVX2
    library (8 lanes) and still equals numpy."""
    env = dict(os.environ, EXO_HL_HOST_CPU="avx2,fma",
               OPENBLAS_CORETYPE="Haswell")
    r = subprocess.run([sys.executable, str(APP / "run.py"), "--size", "64",
                        "--reps", "1"], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert "C_reg: f32[8, 2, 8] @ AVX2" in r.stdout
    assert "compiled C: equal to numpy" in r.stdout
