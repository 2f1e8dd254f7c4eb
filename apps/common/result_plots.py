"""Plots of recorded benchmark runs, one PNG per machine and run label.

``report.py`` puts each next to its machine's results file
(``<machine>.<label>.png``) and links it under that run's table, so the
README shows every recorded machine as a table and a plot made from the
same rows. One panel per thread count; per shape, grouped bars of exo_hl
and the baselines that run measured (OpenBLAS and MKL for SGEMM, ONNX
Runtime and im2col + OpenBLAS for conv), and the FMA peak of that thread
count as a line where the rows carry it: bars of every shape, not a
curve over the squares only, because the narrow and non-square shapes
are where the kernels differ most.
"""
from __future__ import annotations

from pathlib import Path

#: (row key, legend name) of each implementation, in bar order
SERIES = (("exo_hl_gflops", "exo_hl"), ("openblas_gflops", "OpenBLAS"),
          ("mkl_gflops", "MKL"), ("onnxruntime_gflops", "ONNX Runtime"),
          ("im2col_blas_gflops", "im2col + OpenBLAS"))


def shape_label(row: dict) -> str:
    """'512x512x512' (SGEMM's M, N, K) or '1,56,56,64,64' (a conv layer's
    N, H, W, IC, OC)."""
    if "shape" in row:
        return "x".join(map(str, row["shape"]))
    return ",".join(map(str, row.get("size", ())))


def panels(rows: list) -> dict:
    """{threads: (shape labels, {legend name: GFLOP/s per shape}, peak
    GFLOP/s or None)}: the series every row of that thread count has."""
    out = {}
    for t in sorted({r["threads"] for r in rows}):
        sel = [r for r in rows if r["threads"] == t]
        series = {name: [r[key] for r in sel] for key, name in SERIES
                  if all(r.get(key) is not None for r in sel)}
        peaks = [r["exo_hl_gflops"] * 100 / r["peak_pct"] for r in sel
                 if r.get("peak_pct")]
        out[t] = ([shape_label(r) for r in sel], series,
                  max(peaks) if peaks else None)
    return out


def plot_run(path: Path, title: str, rows: list) -> Path | None:
    """One run's rows as ``path`` (PNG); None when it has no rows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    parts = panels(rows)
    if not parts:
        return None
    width = max(len(p[0]) for p in parts.values())
    fig, axes = plt.subplots(len(parts), 1, squeeze=False,
                             figsize=(max(7.0, 0.55 * width + 2),
                                      3.2 * len(parts)))
    for ax, (t, (labels, series, peak)) in zip(axes[:, 0], parts.items()):
        n = max(len(series), 1)
        w = 0.8 / n
        for i, (name, ys) in enumerate(series.items()):
            ax.bar([x + (i - (n - 1) / 2) * w for x in range(len(labels))],
                   ys, w, label=name)
        if peak:
            ax.axhline(peak, color="k", lw=0.8, ls="--",
                       label=f"FMA peak ({peak:.0f})")
        top = max([peak or 0.0] + [max(ys) for ys in series.values()])
        ax.set_ylim(0, top * 1.25)        # room for the legend
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=7)
        ax.set_ylabel(f"GFLOP/s, {t} thread{'s' if t > 1 else ''}")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=len(series) + 1, loc="upper left")
    axes[0, 0].set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def plot_path(results_file: Path, label: str) -> Path:
    """Where the plot of ``label``'s latest run of a machine goes."""
    return results_file.with_name(f"{results_file.stem}.{label}.png")
