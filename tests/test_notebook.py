"""examples/tutorial.ipynb: committed with its outputs, and they are current.

The notebook is the documentation's tutorial (docs/tutorial.md): naive
SGEMM to an 8 x (2 registers) kernel of AVX-512 instructions selected from
the shipped library. Its sources are what ``examples/make_tutorial_notebook.py``
writes; its outputs are stored (it reads on GitHub without running it), and
this test re-executes it in a real Jupyter kernel (nbclient) and compares
every output with the stored one:

- procedures, diffs, the history, the check and the error are compared
  exactly, as ``text/plain`` (and the error as its name and message);
  ``text/html`` is the same text highlighted by pygments, whose markup
  varies with its version: only its presence is checked;
- timings cannot repeat: every number followed by ``GFLOP/s`` is
  normalized to ``<rate>`` on both sides (and the load average printed
  with them to ``<load>``), so the lines, names and sizes
  must still agree (and the fresh rates are checked to be positive).

After a change to the tutorial, regenerate it with
``python examples/make_tutorial_notebook.py --execute``.
"""
from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
NOTEBOOK = EXAMPLES / "tutorial.ipynb"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RATE = re.compile(r" *[0-9]+(?:\.[0-9]+)? GFLOP/s")
LOAD = re.compile(r"load average [0-9.]+ on [0-9]+ cores")


def _generator():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import make_tutorial_notebook
    finally:
        sys.path.remove(str(EXAMPLES))
    return make_tutorial_notebook


def _sources(nb):
    return [(c.cell_type, c.get("id"), c.source, c.metadata.get("tags"))
            for c in nb.cells]


def test_committed_notebook_has_the_generated_sources_and_outputs():
    """The .ipynb's cells are the generator's, and every code cell has its
    outputs stored (the old one was committed without outputs)."""
    gen = _generator()
    committed = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(committed)
    assert _sources(committed) == _sources(gen.build())
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert code and all(c.outputs for c in code), \
        [c.id for c in code if not c.outputs]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(EXAMPLES)}})
    client.execute()
    return {c.id: c for c in nb.cells}


def _normalized(output):
    """What of ``output`` must repeat: see the module docstring."""
    o = copy.deepcopy(dict(output))
    kind = o["output_type"]
    if kind == "stream":
        text = LOAD.sub("load average <load>", o["text"])
        return (kind, o["name"], RATE.sub(" <rate> GFLOP/s", text))
    if kind == "error":
        return (kind, o["ename"], o["evalue"])
    data = o.get("data", {})
    return (kind, RATE.sub(" <rate> GFLOP/s", data.get("text/plain", "")),
            sorted(data))


def _joined(outputs):
    """``outputs`` normalized, consecutive pieces of one stream joined: the
    kernel sends a cell's prints in as many stream messages as its
    output buffer is flushed, which depends on timing (a cell that
    prints, computes for a second, then prints again arrived as one
    piece in one run and two in the next, failing a CI run)."""
    out = []
    for o in map(_normalized, outputs):
        if out and o[0] == "stream" and out[-1][:2] == o[:2]:
            out[-1] = (o[0], o[1], out[-1][2] + o[2])
        else:
            out.append(o)
    return out


def test_stored_outputs_are_current(executed):
    committed = nbformat.read(NOTEBOOK, as_version=4)
    for cell in committed.cells:
        if cell.cell_type != "code":
            continue
        fresh = executed[cell.id]
        assert _joined(fresh.outputs) == _joined(cell.outputs), (
                f"cell {cell.id!r}: the stored outputs are not what it "
                "prints now; run python examples/make_tutorial_notebook.py "
                "--execute")


def _html(cell):
    return [o["data"]["text/html"] for o in cell.outputs
            if "text/html" in o.get("data", {})]


def _text(cell):
    return "".join(o.get("text", "") for o in cell.outputs
                   if o.output_type == "stream")


STEPS = ["split-i", "split-j", "reorder", "stage-c", "stage-b", "select",
         "unroll"]


def test_each_step_shows_procedure_and_diff(executed):
    first = _html(executed["algorithm"])
    assert len(first) == 1 and "<span" in first[0] and "seq" in first[0]
    for cell_id in STEPS:
        cell = executed[cell_id]
        assert not [o for o in cell.outputs if o.output_type == "error"]
        proc_html, diff_html = _html(cell)
        assert "<span" in proc_html and "seq" in proc_html, cell_id
        assert "#e6ffed" in diff_html and "#ffeef0" in diff_html, cell_id
        plain = [o["data"]["text/plain"] for o in cell.outputs
                 if o.output_type == "display_data"]
        assert plain[1].startswith("--- sgemm"), cell_id
    final = executed["unroll"].outputs[0]["data"]["text/plain"]
    assert final.startswith("def sgemm_8x2v(")
    # the tutorial's kernel: loads, broadcast-FMAs and stores of registers
    assert "C_reg: f32[8, 2, 16] @ AVX512" in final
    assert "mm512_fmadd_bcst_ps(C_reg[7, 1, 0:16], A[8 * io + 7, k:k + 1]" \
        in final, final
    assert "mm512_storeu_ps(" in final and "mm512_loadu_ps(" in final


def test_final_kernel_is_the_documented_one(executed):
    """The notebook ends where docs/tutorial.md and
    apps/sgemm_quickstart/schedule.py end."""
    # as a package module: a bare 'schedule'/'kernel' would stay in
    # sys.modules and be another app's (apps.saxpy_rvv took it for its own)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from apps.sgemm_quickstart.schedule import schedule
    from exo_hl.hw_libs import avx512
    want = str(schedule(lib=(avx512.AVX512, 16, avx512.INSTRS)))
    final = executed["unroll"].outputs[0]["data"]["text/plain"]
    assert final == want


def test_failing_step_shows_a_short_traceback(executed):
    cell = executed["error"]
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert len(errors) == 1
    err = errors[0]
    assert err["ename"] == "SchedulingError"
    assert "divisible by 8" in err["evalue"]
    tb = ANSI.sub("", "\n".join(err["traceback"]))
    assert "p.split('k', 8, 'ko', 'ki', tail='perfect')" in tb
    # no frame of exo_hl at all: not the rewrite, not the facade's re-raise
    # (IPython never hides the last frame; the error renders itself)
    for word in ("rewrites", "cursors.py", "feedback.py", "for_user",
                 "exo_hl/"):
        assert word not in tb, (word, tb)
    assert len(tb.splitlines()) <= 15, tb
    assert re.match(r"Cell In\[1\], line \d+: in procedure 'sgemm': ",
                    err["evalue"]), err["evalue"]
    assert re.search(r"raised by the call at Cell In\[\d+\], line 1: "
                     r"p\.split\('k', 8", tb), tb
    assert "ipykernel" not in err["evalue"] and "ipykernel" not in tb


def test_history_and_checks(executed):
    hist = _text(executed["history"])
    lines = hist.splitlines()
    assert lines[0] == "from __main__ import sgemm", hist
    assert lines[1].startswith("from exo_hl.hw_libs.avx512 import AVX512, ")
    steps = [ln for ln in lines if not ln.startswith("from ")]
    assert steps[0] == "p = sgemm"
    assert steps[-1] == "p = p.rename('sgemm_8x2v')"
    checks = _text(executed["check"])
    assert "interpret: equal to numpy" in checks
    assert "compiled C: equal to numpy" in checks


def test_kernel_and_numpy_are_timed_side_by_side(executed):
    out = _text(executed["time"])
    rates = dict(re.findall(r"^(\S+)\s+([0-9.]+) GFLOP/s", out, re.M))
    assert set(rates) == {"naive", "sgemm_8x2v", "numpy"}, out
    assert all(float(r) > 0 for r in rates.values())
