"""Benchmark results per machine (apps/common/results.py), the README
report made from every recorded machine (apps/common/report.py), and the
MKL baseline loader (apps/common/mkl.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common import report, results  # noqa: E402
from apps.common.mkl import Mkl  # noqa: E402
from exo_hl.tune import machine_signature, signature_label  # noqa: E402

ROW = {"shape": [512, 512, 512], "threads": 1, "isa": "avx512",
       "exo_hl_gflops": 150.0, "openblas_gflops": 160.0, "ratio": 0.9375,
       "peak_pct": 62.0, "mkl_gflops": 190.0, "mkl_ratio": 150 / 190}


def test_runs_are_recorded_per_machine_and_reported(tmp_path):
    p1 = results.record_run("sgemm", "avx512", [ROW], {
        "params_source": "BLIS model", "argv": ["--quick"]}, tmp_path)
    p2 = results.record_run("sgemm", "avx512", [dict(ROW,
                                                     exo_hl_gflops=155.0)],
                            {"params_source": "tuned record"}, tmp_path)
    assert p1 == p2
    assert p1.name == signature_label(machine_signature()) + ".json"
    data = json.loads(p1.read_text())
    assert data["signature"] == machine_signature()
    assert len(data["runs"]) == 2
    # another machine's file, written elsewhere
    other = dict(machine_signature(), cpu_model="AMD EPYC 9B14", cores=4)
    (tmp_path / f"{signature_label(other)}.json").write_text(json.dumps(
        {"signature": other, "runs": [{"time": "t", "label": "avx2",
                                       "meta": {}, "rows": [
                                           dict(ROW, isa="avx2")]}]}))
    text = report.report("sgemm", tmp_path)
    assert text.count("\n### ") == 2
    assert "AMD EPYC 9B14, 4 cores" in text
    assert machine_signature()["cpu_model"] in text
    # the latest run per label: 155, not 150
    assert "| 512x512x512 | 1 | 155.0 | 160.0 | 0.94 | 190.0 |" in text
    assert "tuned record" in text and "BLIS model" not in text
    # an AVX2 run says what its ratios compare where the CPU has AVX-512
    other_has_512 = "avx512f" in other.get("isa", [])
    assert (report.AVX2_ON_AVX512 in text) == other_has_512
    (tmp_path / f"{signature_label(other)}.json").write_text(json.dumps(
        {"signature": dict(other, isa=["avx2", "fma", "avx512f"]),
         "runs": [{"time": "t", "label": "avx2", "meta": {},
                   "rows": [dict(ROW, isa="avx2")]}]}))
    assert report.AVX2_ON_AVX512 in report.report("sgemm", tmp_path)
    assert text.startswith(report.BEGIN) and text.rstrip().endswith(
        report.END)


def test_mkl_baseline_or_one_line():
    mkl, note = Mkl.load()
    assert "\n" not in note
    if mkl is None:
        assert "MKL not found" in note
        return
    mkl.set_threads(1)
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, (13, 37)).astype(np.float32)
    B = rng.integers(-3, 4, (37, 29)).astype(np.float32)
    C = np.ones((13, 29), np.float32)
    mkl.sgemm(A, B, C)
    assert np.array_equal(C, 1 + A @ B)


def test_each_recorded_run_gets_a_plot_linked_under_its_table(tmp_path):
    """``report.plots`` draws the latest run per machine and label next to
    its results file; the section links it once drawn. Panels per thread
    count hold only the series every row of it measured, and the peak
    from ``peak_pct``."""
    from apps.common import result_plots
    rows = [ROW, dict(ROW, shape=[64, 64, 300], exo_hl_gflops=100.0,
                      peak_pct=40.0),
            dict(ROW, threads=2, peak_pct=None, mkl_gflops=None)]
    path = results.record_run("sgemm", "avx512", rows, {}, tmp_path)
    parts = result_plots.panels(rows)
    labels, series, peak = parts[1]
    assert labels == ["512x512x512", "64x64x300"]
    assert list(series) == ["exo_hl", "OpenBLAS", "MKL"]
    assert peak == 250.0                  # 150 at 62%, 100 at 40%: the max
    assert list(parts[2][1]) == ["exo_hl", "OpenBLAS"] and \
        parts[2][2] is None
    assert result_plots.shape_label({"size": [1, 7, 7, 512, 512]}) == \
        "1,7,7,512,512"
    png = result_plots.plot_path(path, "avx512")
    assert f"results/{png.name}" not in report.report("sgemm", tmp_path)
    assert report.plots("sgemm", tmp_path) == [png]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"![avx512: GFLOP/s per shape](results/{png.name})" in \
        report.report("sgemm", tmp_path)
