"""examples/tutorial.ipynb runs top to bottom in a real Jupyter kernel.

Each scheduling step displays the procedure as highlighted HTML, a
coloured diff against the previous step and the GFLOP/s of its compiled C;
the failing step shows a short traceback that points at the cell; the last
cell times the naive and the final kernel on a larger problem.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
NOTEBOOK = EXAMPLES / "tutorial.ipynb"


def _generator():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import make_tutorial_notebook
    finally:
        sys.path.remove(str(EXAMPLES))
    return make_tutorial_notebook


def test_committed_notebook_is_the_generated_one(tmp_path):
    """The .ipynb in the repository is what the generator writes, with no
    stored outputs."""
    gen = _generator()
    out = tmp_path / "tutorial.ipynb"
    assert gen.main([str(out)]) == 0
    assert out.read_text() == NOTEBOOK.read_text()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") for c in nb.cells
               if c.cell_type == "code")


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3",
        resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute()
    return {c.id: c for c in nb.cells}


def _html(cell):
    return [o["data"]["text/html"] for o in cell.outputs
            if "text/html" in o.get("data", {})]


def _text(cell):
    return "".join(o.get("text", "") for o in cell.outputs
                   if o.output_type == "stream")


STEPS = ["split-i", "split-j", "reorder-1", "reorder-2", "reorder-3",
         "stage", "memory", "unroll", "rename"]


def _rate(cell, name):
    m = re.fullmatch(rf"{name}: ([0-9.]+) GFLOP/s \(M = N = K = 128\)\n",
                     _text(cell))
    assert m, _text(cell)
    return float(m.group(1))


def test_each_step_shows_procedure_diff_and_speed(executed):
    first = _html(executed["algorithm"])
    assert len(first) == 1 and "<span" in first[0] and "seq" in first[0]
    assert _rate(executed["algorithm"], "sgemm") > 0
    for cell_id in STEPS:
        name = "sgemm_4x16" if cell_id == "rename" else "sgemm"
        assert _rate(executed[cell_id], name) > 0, cell_id
    for cell_id in STEPS:
        cell = executed[cell_id]
        assert not [o for o in cell.outputs if o.output_type == "error"]
        proc_html, diff_html = _html(cell)
        # the procedure, highlighted by pygments
        assert "<span" in proc_html and "seq" in proc_html, cell_id
        assert "def" in proc_html and "sgemm" in proc_html, cell_id
        # the diff: added lines on green, removed lines on red
        assert "#e6ffed" in diff_html and "#ffeef0" in diff_html, cell_id
        plain = [o["data"]["text/plain"] for o in cell.outputs
                 if o.output_type == "display_data"]
        assert plain[1].startswith("--- sgemm"), cell_id
    split = executed["split-i"].outputs[0]["data"]["text/plain"]
    assert "    for io in seq(0, M / 4):\n        for ii in seq(0, 4):" in split
    diff = executed["stage"].outputs[1]["data"]["text/plain"]
    assert "+            C_reg: f32[4, 16] @ DRAM" in diff
    final = executed["rename"].outputs[0]["data"]["text/plain"]
    assert final.startswith("def sgemm_4x16(")
    assert "C_reg[3, ji] += A[4 * io + 3, k] * B[k, 16 * jo + ji]" in final


def test_failing_step_shows_a_short_traceback(executed):
    cell = executed["error"]
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert len(errors) == 1
    err = errors[0]
    assert err["ename"] == "SchedulingError"
    assert "divisible by 8" in err["evalue"]
    tb = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(err["traceback"]))
    assert "p.split('k', 8, 'ko', 'ki', tail='perfect')" in tb
    assert "rewrites" not in tb and "cursors.py" not in tb
    assert len(tb.splitlines()) <= 25, tb
    # the statement and the call are located by notebook cell, not by the
    # temporary file IPython compiled the cell into
    assert re.match(r"Cell In\[1\], line \d+: in procedure 'sgemm': ",
                    err["evalue"]), err["evalue"]
    assert re.search(r"raised by the call at Cell In\[\d+\], line 1: "
                     r"p\.split\('k', 8", tb), tb
    assert "ipykernel" not in err["evalue"] and "ipykernel" not in tb


def test_history_and_checks(executed):
    hist = _text(executed["history"])
    lines = hist.splitlines()
    # the imports of what it names come first (exec(p.history()) runs)
    assert lines[0] == "from __main__ import sgemm", hist
    steps = [ln for ln in lines if not ln.startswith("from ")]
    assert steps[0] == "p = sgemm"
    assert steps[-1] == "p = p.rename('sgemm_4x16')"
    checks = _text(executed["check"])
    assert "interpret: equal to numpy" in checks
    assert "compiled C: equal to numpy" in checks


def test_final_kernel_is_timed(executed):
    out = _text(executed["time"])
    rates = dict(re.findall(r"^(\S+) \S*\s+([0-9.]+) GFLOP/s", out, re.M))
    assert set(rates) == {"naive", "sgemm_4x16"}, out
    assert all(float(r) > 0 for r in rates.values())
