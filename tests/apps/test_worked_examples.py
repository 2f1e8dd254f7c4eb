"""apps/worked_examples (docs/worked_examples.md): the scheduled gemv and
3x3 blur compute what the naive ones do (interpreted and compiled, against
numpy) with the library the app picks for this CPU (the AVX2 forms of
both kinds are covered by tests/stdlib/test_vectorize_operands.py), and
the benchmark script still runs (tiny size, one round: not timed here)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
# by package path: a top-level ``kernels``/``bench`` would shadow
# tests/kernels.py and other apps' modules for the rest of the session
from apps.worked_examples import bench, kernels  # noqa: E402


def test_gemv_schedule_against_numpy():
    """The page's gemv: rows in blocks of ``kernels.ROWS`` (``x`` loaded once
    per block), the rest rows one at a time; ``m`` a multiple of the block
    or not, small integers (exact: equal) and random floats (close)."""
    g = kernels.schedule_gemv()
    text = str(g)
    rows = kernels.ROWS
    assert f"for io in seq(0, m / {rows}):" in text, text
    assert f"for ii in seq(0, m % {rows}):" in text, text
    assert f"fmadd_ps(acc_{rows - 1}[0:" in text, text
    rng = np.random.default_rng(1)
    fast = g.compile()
    for m in (rows - 1, rows, 2 * rows + 1, 3 * rows + rows - 1):
        for exact in (True, False):
            if exact:
                A = rng.integers(-3, 4, (m, 48)).astype(np.float32)
                x = rng.integers(-3, 4, 48).astype(np.float32)
            else:
                A = rng.standard_normal((m, 48), dtype=np.float32)
                x = rng.standard_normal(48, dtype=np.float32)
            for run in (g.interpret, fast):
                y = np.ones(m, np.float32)
                run(m=m, n=48, A=A, x=x, y=y)
                if exact:
                    np.testing.assert_array_equal(y, 1 + A @ x)
                else:
                    np.testing.assert_allclose(y, 1 + A @ x, rtol=1e-5,
                                               atol=1e-5)


def test_blur_schedule_against_numpy():
    b = kernels.schedule_blur()
    text = str(b)
    assert "set1_scalar_ps(c_bcst[0:" in text, text
    assert "for ji in seq(0, w % " in text, text      # the scalar rest
    rng = np.random.default_rng(2)
    img = rng.random((5, 19 + 2), dtype=np.float32)
    want = (img[:-2, :-2] + img[:-2, 1:-1] + img[:-2, 2:] + img[1:-1, :-2]
            + img[1:-1, 1:-1] + img[1:-1, 2:] + img[2:, :-2]
            + img[2:, 1:-1] + img[2:, 2:]) * np.float32(0.1111111)
    for run in (b.interpret, b.compile()):
        out = np.zeros((3, 19), np.float32)
        run(h=3, w=19, x=img, y=out)
        np.testing.assert_array_equal(out, want)


def test_bench_script_runs_and_tabulates():
    # variants() checks each scheduled kernel (the one-row gemv too,
    # compiled) against numpy before timing
    times, loads = bench.measure(size=32, rounds=1)
    assert set(times) == {"gemv", "gemv, one row at a time", "blur3x3"}
    for k in times.values():
        assert set(k) == {"naive", "scheduled", "numpy"}
        assert all(t[0] > 0 for t in k.values())
    text = bench.table(times, 32, loads, "AVX512")
    assert "| gemv | " in text and "| blur3x3 | " in text
    assert "| gemv, one row at a time | " in text
    assert "load average" in text and "cores" in text
