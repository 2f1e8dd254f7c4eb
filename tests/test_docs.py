"""The documentation builds without a warning, and says what it should.

One Sphinx build (``-W``: any warning fails it) into a temporary directory
serves every test here. The pages run their examples while building, so a
successful build also means every example and tutorial step still works.
"""
from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def _tree_files():
    """Every file under docs/ (bytecode aside, which tests running beside
    the build may write): what a docs build must leave alone."""
    return {p for p in DOCS.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built by ``docs/build.sh OUT_DIR`` as a user builds it; it
    writes only into OUT_DIR (issue 34 item 9: it wrote into the tree)."""
    out = tmp_path_factory.mktemp("docs_out")
    before = _tree_files()
    r = subprocess.run(
        ["bash", str(DOCS / "build.sh"), str(out)], cwd=REPO,
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    assert "WARNING" not in r.stderr, r.stderr
    new = sorted(str(p.relative_to(REPO)) for p in _tree_files() - before)
    assert new == [], new
    assert (out / "doctrees").is_dir()
    return out / "html"


def _page(site, name) -> str:
    return (site / f"{name}.html").read_text(encoding="utf-8")


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _code_blocks(page: str):
    """The raw HTML of every highlighted code block of a page."""
    return re.findall(r'<div class="highlight"><pre>(.*?)</pre></div>', page,
                      re.S)


def test_every_page_is_built(site):
    for name in ("index", "api", "internals", "reference", "tutorial",
                 "worked_examples", "hardware", "hw_avx2", "hw_avx512", "using_c", "benchmarks"):
        assert (site / f"{name}.html").is_file(), name
    # the Markdown contract pages are included as they are
    api = _text(_page(site, "api"))
    assert "the user-facing contract" in api and "The C ABI" in api
    assert "Checks every procedure passes" in _text(_page(site, "internals"))


def test_tuning_guide_and_its_contract(site):
    """docs/tuning.md is built, quotes the worked example's file (so the
    page shows the code that tests/tune runs) and says why optuna; the
    contract has the tuning section."""
    page = _text(_page(site, "tuning"))
    for text in ("Why optuna", "def gemv(m: size", "def template(params)",
                 "blis_blocking", "refused split: perfect split"):
        assert text in page, text
    api = _text(_page(site, "api"))
    assert "10. Tuning" in api and "TuningDB(directory=None)" in api


def test_tutorial_shows_highlighted_procedures(site):
    page = _page(site, "tutorial")
    blocks = _code_blocks(page)
    procs = [b for b in blocks if "<span" in b and "seq" in _text(b)
             and _text(b).lstrip().startswith("def sgemm")]
    assert len(procs) >= 6, len(procs)
    # highlighted: keywords and names are separate spans
    assert any('<span class="k">for</span>' in b for b in procs)
    assert any('<span class="n">seq</span>' in b for b in procs)
    text = [_text(b) for b in blocks]
    # the steps of apps/sgemm_quickstart/schedule.py, with their results
    for call in ("sgemm.split('i', 8, 'io', 'ii', tail='perfect')",
                 "p.reorder('ii', 'jo')",
                 "p.stage_mem(p.find_loop('k'), "
                 "'C[8*io:8*io+8, 32*jo:32*jo+32]', 'C_reg')",
                 "set_memory('C_reg', avx512.AVX512)",
                 "p = replace_all(p, avx512.INSTRS)"):
        assert any(call in t for t in text), call
    final = [t for t in text if t.startswith("def sgemm_8x2v(")]
    assert final and "mm512_fmadd_bcst_ps(C_reg[7, 1, 0:16]" in final[0]
    assert "for io in seq(0, M / 8):" in final[0]
    assert "for ii" not in final[0]
    # a failing step is shown with its real message
    assert any("SchedulingError" in t and "divisible by 8" in t
               for t in text)
    assert any(t.startswith("void sgemm_8x2v(") for t in text)


def test_reference_names_every_public_name(site):
    import exo_hl
    page = _page(site, "reference")
    for name in exo_hl.__all__:
        assert f'id="exo_hl.{name}"' in page, name
    # the standard library too (hoist, bind_const and vectorize_reduction,
    # issue 34's helpers, were missing from it)
    import exo_hl.stdlib
    for name in exo_hl.stdlib.__all__:
        assert f'id="exo_hl.stdlib.{name}"' in page, name


def _scheduling_methods():
    """The methods of the contract's scheduling table (docs/api.md §3)."""
    api = (DOCS / "api.md").read_text()
    section = api.split("## 3.")[1].split("\n## ")[0]
    names = re.findall(r"^\| `(\w+)\(", section, re.M)
    assert len(names) > 20
    return [n for n in names if n != "is_eq"]


def test_every_scheduling_method_shows_before_and_after(site):
    page = _page(site, "reference")
    starts = {m.group(1): m.start() for m in
              re.finditer(r'id="exo_hl\.Procedure\.(\w+)"', page)}
    ends = sorted(starts.values()) + [len(page)]
    for name in _scheduling_methods():
        assert name in starts, f"Procedure.{name} is not in the reference"
        s = starts[name]
        section = page[s:min(e for e in ends if e > s)]
        blocks = [_text(b) for b in _code_blocks(section)]
        procs = [b for b in blocks if b.lstrip().startswith(("def ", "@"))]
        assert len(procs) >= 2, f"{name}: no before/after example"
        assert f"p.{name}(" in _text(section), name
        assert procs[0] != procs[1], name


def test_hardware_and_c_pages(site):
    hw = _text(_page(site, "hardware"))
    for needle in ("cpu_features", "p.cpu_features()", "compile(emulate=True)",
                   "class AVX2(VectorRegisters)", "mm256_fmadd_bcst_ps",
                   "needs: ['avx2', 'fma']", 'EXO_HL_TARGET("avx2,fma")',
                   "_Alignas(32) float t[16];", "@config"):
        assert needle in hw, needle
    c = _text(_page(site, "using_c"))
    for needle in ("exo_hl_add_kernels(kernels SOURCE kernels.py)",
                   "find_package(ExoHL REQUIRED)", "--cmake-dir",
                   "-include build/kernels.d",
                   "void scale_rows(kernels_Context *ctxt",
                   "struct exo_win_1f32 row_sums", "extern \"C\""):
        assert needle in c, needle


def test_benchmarks_page_has_the_readme_tables(site):
    page = _page(site, "benchmarks")
    def norm(c):
        c = c.replace("\u2019", "'").replace("\u2018", "'")
        return " ".join(c.replace("`", "").replace("*", "").split())
    html_rows = [[norm(_text(c)) for c in
                  re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)]
                 for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)]
    readme = (REPO / "README.md").read_text()
    # the README's "Apps and benchmarks" section, which the page includes
    section = readme.split("## Apps and benchmarks")[1].split("\n## ")[0]
    md_rows = [[norm(c) for c in l.strip().strip("|").split("|")]
               for l in section.splitlines()
               if l.startswith("|") and not l.startswith("|---")]
    measured = [r for r in md_rows if r[0] == "kernel" or
                any(re.fullmatch(r"\d+\.\d+( \([\d.]+%\))?", c)
                    for c in r[1:])]
    assert len(measured) >= 5          # the header and four kernels
    apps = [r for r in md_rows if r not in measured]
    assert len(apps) >= 6              # the header and the scripts
    for row in measured + apps:
        assert row in html_rows, row
    text = _text(page)
    for word in ("TODO", "TBD", "placeholder", "XXX"):
        assert word not in text


def _md_rows(text):
    return [[" ".join(c.replace("`", "").split()) for c in
             l.strip().strip("|").split("|")]
            for l in text.splitlines()
            if l.startswith("|") and not l.startswith("|---")]


def _html_rows(page):
    return [[" ".join(_text(c).split()) for c in
             re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)]
            for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)]


def test_benchmarks_page_has_every_app_and_benchmark_table(site):
    """The sgemm CPU-time table, the Gemmini instruction counts and the
    scheduling-speed tables are all on the site."""
    html_rows = _html_rows(_page(site, "benchmarks"))
    sgemm = (REPO / "apps/sgemm/README.md").read_text()
    measured = sgemm.split("includes the measurement from here -->")[1] \
        .split("<!-- docs/benchmarks.md includes the measurement up to")[0]
    rows = _md_rows(measured)
    assert len(rows) >= 4 and any(r[0].startswith("shape") for r in rows)
    for row in rows:
        assert row in html_rows, row
    conv = (REPO / "apps/conv/README.md").read_text()
    measured = conv.split("## Measured (this machine)")[1].split("\n## ")[0]
    rows = _md_rows(measured)
    assert len(rows) >= 3 and rows[0][0] == "threads"
    for row in rows:
        assert row in html_rows, row
    bench = (DOCS / "benchmarks.md").read_text()
    for title, header in (("## Gemmini", "M, N, K"),
                          ("## Scheduling speed", "primitive")):
        section = bench.split(title)[1].split("\n## ")[0]
        rows = _md_rows(section)
        assert rows and rows[0][0] == header, title
        for row in rows:
            assert row in html_rows, row
    text = _text(_page(site, "benchmarks"))
    for script in ("apps/gemmini_matmul/run.py", "apps/gemmini_conv/run.py",
                   "apps/conv/bench.py",
                   "benchmarks/scale_bench.py",
                   "benchmarks/schedule_bench.py"):
        assert script in text, script


def test_gemmini_counts_on_the_page_are_what_the_app_measures():
    import numpy as np
    sys.path.insert(0, str(REPO))
    try:
        from apps.gemmini_matmul.matmul import matmul, stages
        from apps.gemmini_matmul.run import inputs, naive_count, run_both
    finally:
        sys.path.remove(str(REPO))
    bench = (DOCS / "benchmarks.md").read_text()
    rows = _md_rows(bench.split("## Gemmini")[1].split("\n## ")[0])[1:]
    st = stages(matmul)
    p, unhoisted = st[-1][1], dict(st)["configured store (mvout)"]
    rng = np.random.default_rng(0)
    for sizes, n, before, naive in rows:
        M, N, K = (int(x) for x in sizes.split(","))
        A, B = inputs(M, N, K, rng)
        assert run_both(p, M, N, K, 0.0125, A, B)[2] == int(n)
        assert run_both(unhoisted, M, N, K, 0.0125, A, B)[2] == int(before)
        assert naive_count(M, N, K) == int(naive)


def _readme_table(path, marker):
    text = (REPO / path).read_text()
    return _md_rows(text.split(f"includes the {marker} table from here")[1]
                    .split("<!--")[0])


def test_gemmini_app_tables_are_on_the_page_and_are_the_schedules(site):
    """The ResNet-50 tables of both Gemmini apps are on the benchmarks page,
    and their counts are what the schedules issue (the formulas the app
    tests check against the C model)."""
    sys.path.insert(0, str(REPO))
    try:
        from apps.gemmini_conv import run as conv_run
        from apps.gemmini_matmul import run as mm_run
    finally:
        sys.path.remove(str(REPO))
    html_rows = _html_rows(_page(site, "benchmarks"))
    mm = _readme_table("apps/gemmini_matmul/README.md", "shape")
    cv = _readme_table("apps/gemmini_conv/README.md", "layer")
    assert mm[0][0] == "M, N, K" and len(mm) == 7
    assert cv[0][0] == "B, D, OC, IC" and len(cv) == 5
    for row in mm + cv:
        assert row in html_rows, row
    for sizes, n, cfg, before, naive, naive_cfg in mm[1:]:
        M, N, K = (int(x) for x in sizes.split(","))
        tiles, kb = (M // 16) * (N // 16), K // 16
        assert (int(n), int(cfg)) == (3 + tiles * (2 + 4 * kb), 3)
        assert int(before) == int(naive) == mm_run.naive_count(M, N, K)
        assert int(naive_cfg) == mm_run.naive_config_count(M, N, K)
    for sizes, n, cfg, naive, naive_cfg in cv[1:]:
        B, D, OC, IC = (int(x) for x in sizes.split(","))
        assert (int(n), int(cfg)) == (conv_run.expected_count(B, D, IC, OC),
                                      4)
        assert int(naive) == conv_run.naive_count(B, D, IC, OC)
        assert int(naive_cfg) == conv_run.naive_config_count(B, D, IC, OC)


def test_tutorial_quotes_the_measured_speeds():
    """The speeds the tutorial's last paragraph quotes are the README's
    512 column for the quickstart kernel and the naive loop nest."""
    tut = (DOCS / "tutorial.md").read_text()
    m = re.search(r"M = N = K = (\d+), this kernel runs at ([\d.]+)\s+"
                  r"GFLOP/s against ([\d.]+) for the naive", tut)
    assert m, "the tutorial no longer quotes its speed"
    size, fast, naive = m.groups()
    rows = {r[0]: r for r in _md_rows((REPO / "README.md").read_text())}
    header = rows["kernel (Xeon, AVX-512, loaded)"]
    col = header.index(size)
    assert rows["quickstart 8x2v (AVX-512 library)"][col].split()[0] == fast
    xeon = _md_rows((REPO / "README.md").read_text().split(
        "kernel (Xeon, AVX-512, loaded)")[1])
    naive_row = next(r for r in xeon if r[0] == "naive exo_hl (C)")
    assert naive_row[col].split()[0] == naive


def test_worked_examples_page(site):
    """Issue 34: a reduction and a stencil, naive loop to library speed,
    worked end to end. The page's code ran in the build (its hidden block
    asserts that its schedules are apps/worked_examples/kernels.py's), and
    it shows the measured figures of apps/worked_examples/bench.py."""
    page = _text(_page(site, "worked_examples"))
    for text in (
            # the reduction: vectorize says what it met, then the schedule
            "is a reduction", "vectorize_reduction(p, 'j', ...)",
            "mm512_fmadd_ps(acc[0:16], A_vec[0:16], x_vec[0:16])",
            "y[i] += acc_lanes[ji]",
            # several rows per pass: x loaded once, a register per row,
            # the rest rows one at a time
            "vectorize_reduction_rows(gemv, 'i', 4, 'j', 16",
            "mm512_loadu_ps(x_vec[0:16], x[16 * jo:16 * jo + 16])",
            "mm512_fmadd_ps(acc_3[0:16], A_vec_3[0:16], x_vec[0:16])",
            "for ii in seq(0, m % 4):", "Independent dependency chains",
            # the stencil: nine loads, a broadcast literal, a scalar rest
            "mm512_loadu_ps(x_ld_8[0:16], x[i + 2, 16 * jo + 2:16 * jo + 18])",
            "mm512_set1_scalar_ps(c_bcst[0:16], c)",
            "for ji in seq(0, w % 16):",
            # the measured figures, with where and how they were measured
            "load average", "2 cores", "apps/worked_examples/bench.py"):
        assert text in page, text
    assert page.count("True") >= 3          # the checks against numpy
    raw = _page(site, "worked_examples")
    table = raw[raw.index("<table"):raw.index("</table>")]
    cells = [_text(c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>",
                                                  table, re.S)]
    assert cells[:4] == ["kernel", "naive C", "scheduled", "numpy"], cells
    assert "gemv" in cells and "blur3x3" in cells, cells
    kernels = (len(cells) - 6) // 6         # a header row, then a row each
    assert kernels >= 2 and sum(c.endswith(" ms") for c in cells) == \
        3 * kernels, cells
    index = _page(site, "index")
    assert 'href="worked_examples.html"' in index
