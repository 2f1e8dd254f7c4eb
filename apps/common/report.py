"""README tables (and plots) from every machine's recorded benchmark runs.

    python apps/common/report.py sgemm            # print the Markdown
    python apps/common/report.py sgemm --write    # README, and the plots
    python apps/common/report.py sgemm --plots    # the plots only

Reads ``apps/<app>/results/*.json`` (``results.py``: one file per machine,
its signature and its runs) and makes one section per machine: the CPU,
its caches and compiler, then for each instruction set the latest run's
rows (exo_hl, OpenBLAS, MKL when it was measured, the ratios, % of the
FMA peak) with where the kernel's parameters came from. ``--write``
replaces the part of the README between ``<!-- results:begin -->`` and
``<!-- results:end -->`` (appended at the end the first time), after
drawing each run's plot (``result_plots``: ``results/<machine>.<label>.png``,
linked under its table; matplotlib, the ``bench`` extra).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common.results import load_all, results_dir  # noqa: E402

BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def _caches(sig):
    out = []
    for c in sig.get("caches", []):
        size = c["size"]
        text = (f"{size >> 20} MiB" if size >= 1 << 20 else
                f"{size >> 10} KiB")
        ways = f", {c['ways']}-way" if c.get("ways") else ""
        shared = (f", shared by {c['shared_by']}"
                  if c.get("shared_by", 1) > 1 else "")
        out.append(f"L{c['level']} {text}{ways}{shared}")
    return "; ".join(out)


def _cpu_id(sig):
    """'family 26, model 2, stepping 1; ' (a signature recorded before
    ``cpu_id``: nothing)."""
    ids = sig.get("cpu_id") or {}
    parts = [f"{k} {ids[k]}" for k in ("family", "model", "stepping")
             if ids.get(k) is not None]
    return ", ".join(parts) + "; " if parts else ""


#: under an AVX2 table of a machine with AVX-512: what its ratios say
AVX2_ON_AVX512 = (
    "The AVX2 kernel on a machine with AVX-512: OpenBLAS and MKL run "
    "their own kernels for this CPU (AVX-512 ones), so the ratios compare "
    "instruction sets; the AVX2 yardstick here is % of the AVX2 peak "
    "(the app's README has a comparison with OpenBLAS's AVX2 kernels).")


def _f(v, fmt="{:.1f}"):
    return "–" if v is None else fmt.format(v)


def latest_runs(data):
    """{label: the latest run with that label}."""
    out = {}
    for run in data.get("runs", []):
        out[run.get("label", "?")] = run
    return out


def machine_section(path, data):
    from apps.common.result_plots import plot_path
    from exo_hl.tune import signature_label
    sig = data.get("signature", {})
    isa = [f for f in sig.get("isa", []) if f in
           ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16",
            "amx_tile")]
    lines = [f"### {sig.get('cpu_model', '?')}, {sig.get('cores', '?')} "
             f"cores (`{signature_label(sig)}`)", "",
             f"{_cpu_id(sig)}{_caches(sig)}; {', '.join(isa)}; "
             f"{sig.get('compiler', '?')}", ""]
    for label, run in sorted(latest_runs(data).items()):
        meta = run.get("meta", {})
        lines += [f"**{label}**, run of {run.get('time', '?')} "
                  f"(`{' '.join(meta.get('argv', []))}`): parameters: "
                  f"{meta.get('params_source', '?')}", ""]
        if meta.get("note"):
            lines += [f"Note: {meta['note']}", ""]
        if meta.get("mkl"):
            lines += [f"MKL: {meta['mkl']}", ""]
        if label == "avx2" and "avx512f" in sig.get("isa", []):
            lines += [AVX2_ON_AVX512, ""]
        rows = run.get("rows", [])
        png = plot_path(path, label)
        if rows and "onnxruntime_gflops" in rows[0]:
            lines += _conv_table(rows) + _plot_link(png, label)
            continue
        lines += ["| shape | threads | exo_hl GFLOP/s | OpenBLAS | ratio | "
                  "MKL | ratio to MKL | exo_hl % peak |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in run.get("rows", []):
            lines.append(
                f"| {'x'.join(map(str, r['shape']))} | {r['threads']} | "
                f"{_f(r['exo_hl_gflops'])} | {_f(r['openblas_gflops'])} | "
                f"{_f(r['ratio'], '{:.2f}')} | {_f(r.get('mkl_gflops'))} | "
                f"{_f(r.get('mkl_ratio'), '{:.2f}')} | "
                f"{_f(r.get('peak_pct'), '{:.0f}%')} |")
        lines.append("")
        lines += _plot_link(png, label)
    return lines


def _plot_link(png: Path, label: str) -> list:
    """The README line showing a run's plot, when it has been drawn (the
    README sits beside ``results/``)."""
    if not png.exists():
        return []
    return [f"![{label}: GFLOP/s per shape](results/{png.name})", ""]


def _conv_table(rows):
    """The conv bench's rows: layer, exo_hl against ONNX Runtime, and
    where each layer's parameters came from."""
    lines = ["| layer N,H,W,IC,OC | threads | exo_hl GFLOP/s | ONNX Runtime "
             "| ratio | im2col+OpenBLAS | exo_hl % peak | parameters |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(
            f"| {','.join(map(str, r['size']))} | {r['threads']} | "
            f"{_f(r['exo_hl_gflops'])} | {_f(r['onnxruntime_gflops'])} | "
            f"{_f(r['ratio_onnxruntime'], '{:.2f}')} | "
            f"{_f(r.get('im2col_blas_gflops'))} | "
            f"{_f(r.get('peak_pct'), '{:.0f}%')} | "
            f"{r.get('params_source', '?')} |")
    lines.append("")
    return lines


def report(app: str, directory=None) -> str:
    runs = load_all(app, directory)
    lines = [BEGIN, "", "## Recorded machines",
             "", f"Generated by `python apps/common/report.py {app} "
             f"--write` from `apps/{app}/results/*.json` (one file per "
             f"machine; every run of `bench.py` appends to its machine's "
             f"file). Each table is the latest run per instruction set.", ""]
    if not runs:
        lines += ["(no run recorded yet)", ""]
    for path, data in runs:
        lines += machine_section(path, data)
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_readme(app: str, text: str) -> Path:
    path = REPO / "apps" / app / "README.md"
    old = path.read_text()
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        new = head + text.rstrip("\n") + tail
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new)
    return path


def plots(app: str, directory=None) -> list:
    """The plot of every machine's latest run per label
    (``result_plots``), next to its results file: the PNGs written."""
    from apps.common.result_plots import plot_path, plot_run
    out = []
    for path, data in load_all(app, directory):
        model = data.get("signature", {}).get("cpu_model", "?")
        for label, run in latest_runs(data).items():
            png = plot_run(plot_path(path, label),
                           f"{model}: {app}, {label}, run of "
                           f"{run.get('time', '?')}", run.get("rows", []))
            if png is not None:
                out.append(png)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("app", help="the app directory under apps/ (sgemm, "
                    "conv)")
    ap.add_argument("--write", action="store_true",
                    help="replace the results section of its README")
    ap.add_argument("--plots", action="store_true",
                    help="only draw the plots: one PNG per machine and run "
                    "label (matplotlib; --write draws them too)")
    args = ap.parse_args(argv)
    if args.write or args.plots:          # drawn first: the README links them
        try:
            for p in plots(args.app):
                print(f"wrote {p}")
        except ImportError:
            print("no matplotlib (pip install -e '.[bench]'): plots not "
                  "drawn; the README links those drawn before")
    if args.plots and not args.write:
        return 0
    text = report(args.app)
    if args.write:
        print(f"wrote {write_readme(args.app, text)}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
