"""apps/sgemm_avx512: the schedule is a chain of checked rewrites that
yields an AVX-512 micro-kernel equal to numpy (interpreted and compiled)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.sgemm_avx512.schedule import KC, MR, NR, sgemm, stages  # noqa: E402
from exo_hl import BoundsError, SchedulingError  # noqa: E402
from exo_hl.hw_libs.avx512 import AVX512  # noqa: E402


# one schedule per module: every procedure a test makes is also audited
# (round trip + C compile) by tests/conftest.py, so build the chain once
STAGES = stages()


@pytest.fixture(scope="module")
def fast():
    return STAGES[-1][1].rename('sgemm_avx512')


def _problem(rng, m, n, k):
    A = rng.integers(-4, 5, (m, k)).astype(np.float32)
    B = rng.integers(-4, 5, (k, n)).astype(np.float32)
    C = rng.integers(-4, 5, (m, n)).astype(np.float32)
    return A, B, C


def test_schedule_shape(fast):
    text = str(fast)
    assert "C_reg: f32[6, 4, 16] @ AVX512" in text
    assert "B_reg: f32[4, 16] @ AVX512" in text
    assert "B_pack: f32[128, 64] @ DRAM_STATIC" in text
    assert "R_reg: f32[4, 16] @ AVX512" in text    # the remainder rows
    assert text.count("mm512_fmadd_bcst_ps(") == (MR + 1) * NR // 16
    # only instructions touch the registers: no loop is left inside k
    c = fast.c_code_str()
    assert "__m512 C_reg[24];" in c and "_mm512_fmadd_ps(" in c
    # every stage is derived from the algorithm by checked rewrites
    assert fast.derivation()[0][1].ir() is sgemm.ir()
    assert len(fast.derivation()) > 30


@pytest.mark.parametrize("m,n,k", [(MR, NR, KC), (4 * MR, 2 * NR, 2 * KC),
                                   (2 * MR + 5, 3 * NR, 3 * KC), (1, NR, KC),
                                   (MR + 1, NR, KC)])
def test_compiled_equals_numpy_exactly(fast, m, n, k):
    rng = np.random.default_rng(m + n + k)
    A, B, C = _problem(rng, m, n, k)
    want = C + A @ B
    fast.compile()(m, n, k, A, B, C)
    assert np.array_equal(C, want)


def test_float_data_close_to_numpy(fast):
    rng = np.random.default_rng(3)
    m, n, k = 2 * MR + 3, 2 * NR, 2 * KC
    A = rng.standard_normal((m, k), dtype=np.float32)
    B = rng.standard_normal((k, n), dtype=np.float32)
    C = rng.standard_normal((m, n), dtype=np.float32)
    want = C.astype(np.float64) + A.astype(np.float64) @ B
    fast.compile()(m, n, k, A, B, C)
    assert np.max(np.abs(C - want)) / np.max(np.abs(want)) < 1e-5


def test_interpreted_equals_numpy(fast):
    rng = np.random.default_rng(1)
    A, B, C = _problem(rng, MR + 1, NR, KC)   # a block and a remainder row
    want = C + A @ B
    fast.interpret(M=MR + 1, N=NR, K=KC, A=A, B=B, C=C)
    assert np.array_equal(C, want)


def test_every_stage_agrees_on_the_interpreter():
    """The intermediate procedures (before unrolling) compute the same."""
    rng = np.random.default_rng(2)
    A, B, C0 = _problem(rng, MR + 1, NR, KC)
    want = C0 + A @ B
    for what, p in STAGES[1:-1]:
        C = C0.copy()
        p.interpret(M=MR + 1, N=NR, K=KC, A=A, B=B, C=C)
        assert np.array_equal(C, want), what


def test_preconditions_are_enforced(fast):
    A, B, C = (np.zeros((6, 128), np.float32), np.zeros((128, 48), np.float32),
               np.zeros((6, 48), np.float32))
    with pytest.raises(ValueError, match="precondition"):
        fast.compile()(6, 48, 128, A, B, C)


def test_unsafe_steps_are_rejected():
    # a register tile that does not cover the accesses in the k loop
    p = STAGES[3][1]
    with pytest.raises(SchedulingError, match="cover"):
        p.stage_mem(p.find_loop('k'), 'C[6*io:6*io+6, 64*jo:64*jo+16]',
                    'C_reg')
    # a register instruction over a DRAM buffer: memories must match
    from exo_hl.hw_libs.avx512 import mm512_loadu_ps
    p = p.stage_mem(p.find_loop('k'), 'C[6*io:6*io+6, 64*jo:64*jo+64]',
                    'C_reg').divide_dim('C_reg', 1, 16)
    p = p.split('i1', 16, 'i1o', 'i1i', tail='perfect')
    with pytest.raises((SchedulingError, BoundsError)):
        p.replace(p.find_loop('i1i'), mm512_loadu_ps)
    assert AVX512.can_read() is False


def test_run_script_prints_table():
    r = subprocess.run([sys.executable, str(REPO / "apps" / "sgemm_avx512" /
                                            "run.py"), "--sizes", "256",
                        "--reps", "1"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "interpret: equal to numpy" in out
    assert "compiled C: equal to numpy" in out
    for label in ("naive exo_hl (C)", "quickstart 4x16",
                  "AVX-512 6x64 (this app)", "numpy / BLAS, 1 thread"):
        assert label in out
    assert "GFLOP/s" in out
