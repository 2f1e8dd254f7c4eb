"""SGEMM benchmark: exo_hl against OpenBLAS, interleaved, on 1 and 2 threads.

    python apps/sgemm/bench.py [--quick] [--isa auto|avx2|avx512]
                               [--threads 1 2] [--reps 5] [--clock wall|cpu]
                               [--settle 0.3] [--warmup 0.01]
                               [--params auto|model|fixed] [--no-mkl]
                               [--no-record] [--json FILE] [--plot FILE.png]

The kernel's parameters (tile, KC, NC, MC, par loops) are this machine's
tuning record (``exo-hl tune sgemm``) when there is one, else the BLIS
model of its caches (``--params model`` forces the model, ``--params
fixed`` the base description without NC blocking); the first lines say
which. Each shape runs on the kernel the app picks for it
(``api.Dispatch``): on more than one thread, the one-thread kernel for
small products and the column-split kernel for wide ones; for narrow
ones (N at most ``narrow_n``) the kernels with A unpacked; for N below
``dynamic_min_n`` the row-split kernel with static row blocks. MKL (the
``mkl`` package, ``apps/common/mkl.py``) is a second baseline when it
is installed (one line says so when it is not). Every run is appended,
with the machine's signature, to ``apps/sgemm/results/<machine>.json``
(``--no-record``: not), from which ``apps/common/report.py`` makes the
README tables.

For every shape and thread count it times ``C += A @ B`` (row-major f32)
with the exo_hl kernel and with numpy's OpenBLAS called directly
(``cblas_sgemm`` with beta = 1, in place, like ours: no temporary, no
extra pass), alternating the two, and keeps the best of ``--reps``
samples of each (a sample repeats the call until it lasts at least
20 ms), by wall time or (``--clock cpu``) the process's CPU time divided
by the thread count; with more than one thread each sample follows a pause
of ``--settle`` seconds, so the threads of the library timed before it
have stopped spinning; every sample follows ``--warmup`` seconds of
untimed calls (at least one), so the library's threads, asleep through
the pause, are awake again and its data, pushed out by the other
library's sample, is back in the caches. Both run on the
same thread count: OpenMP's for exo_hl, OpenBLAS's own for it
(``OPENBLAS_CORETYPE`` is unset before numpy loads OpenBLAS, so it picks
its kernels for this CPU). Both are called through ctypes with the
arrays' addresses looked up once per shape (numpy takes about a
microsecond per array, which at 64^3 would be a third of the time
measured, half of it the kernel's), so a call costs the kernel and about a microsecond of ctypes,
alike for both. Before timing, each shape's result is checked against
OpenBLAS's.

One row per shape: shape, threads, exo_hl GFLOP/s, OpenBLAS GFLOP/s,
their ratio, and each as a percentage of the FMA peak measured for that
thread count (``apps/common/peak.py``: one probe per thread, run at once).

Shapes: squares 64 ... 2048; K = 512 with M / N in {1/16, 1/4, 1, 4, 16}
(M N = 512^2); odd sizes M in {127, 1000, 4099} with N = 64, K = 300.
``--quick``: the squares 256, 512, 1024 and 1000, one thread.

``--json FILE`` writes the rows as a list of objects {"shape": [M, N, K],
"threads", "isa", "exo_hl_gflops", "openblas_gflops", "ratio",
"peak_pct"} (peak_pct: exo_hl's; a row on more than one thread also has
"scaling" and "openblas_scaling": its GFLOP/s over the same library's on
one thread, printed as a table at the end too). ``--plot FILE.png`` draws
GFLOP/s against size (needs matplotlib: ``pip install exo_hl[bench]``).

A benchmark, not a test: on a machine shared with other work the figures
are noisy (best-of-N helps, interleaving makes the load hit both alike).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common.blas_env import (OpenBlas, blas_description,  # noqa: E402
                                  configure_blas, set_openmp_threads)

BLAS_NOTES = configure_blas()        # before numpy is imported

import numpy as np  # noqa: E402

from apps.common.peak import thread_peaks  # noqa: E402
from apps.common.timing import (add_timing_args, best_times,  # noqa: E402
                                 wake_threads)
from apps.common.mkl import Mkl  # noqa: E402
from apps.common.results import record_run  # noqa: E402
from apps.sgemm.api import choose_isa, compiled, configuration  # noqa: E402

SQUARES = (64, 128, 256, 384, 512, 768, 1024, 1536, 2048)
ODD = ((127, 64, 300), (1000, 64, 300), (4099, 64, 300))
QUICK = ((256,) * 3, (512,) * 3, (1024,) * 3, (1000,) * 3)


def k512_shapes():
    """M x N x 512 with M N = 512^2 and M / N in {1/16, 1/4, 1, 4, 16}."""
    out = []
    for ratio in (1 / 16, 1 / 4, 1, 4, 16):
        m = round(512 * math.sqrt(ratio))
        out.append((m, 512 * 512 // m, 512))
    return out


def all_shapes():
    """Squares, K = 512 shapes, odd sizes; each shape once (512^3 is in
    the first two sets)."""
    out = []
    for s in [(n, n, n) for n in SQUARES] + k512_shapes() + list(ODD):
        if s not in out:
            out.append(s)
    return out


def check(kernel, blas, m, n, k, rng):
    A = rng.standard_normal((m, k), dtype=np.float32)
    B = rng.standard_normal((k, n), dtype=np.float32)
    C = rng.standard_normal((m, n), dtype=np.float32)
    C2 = C.copy()
    kernel(m, n, k, A, B, C)
    blas.sgemm(A, B, C2)
    scale = np.sqrt(k) * 4
    err = float(np.max(np.abs(C - C2))) / scale
    if not err < 1e-5:
        raise SystemExit(f"bench.py: {m}x{n}x{k}: exo_hl differs from "
                         f"OpenBLAS (max error {err:.1e} of the scale)")


def measure(kernel, blas, shapes, threads, reps, peaks, isa, emulated,
            clock="wall", settle=0.3, warmup=0.01, mkl=None):
    rows = []
    rng = np.random.default_rng(0)
    for t in threads:
        set_openmp_threads(t)
        blas.set_threads(t)
        if mkl is not None:
            mkl.set_threads(t)
        if t > 1:
            X = rng.standard_normal((512, 512), dtype=np.float32)
            wake_threads([kernel.bound(512, 512, 512, X, X, np.zeros_like(X)),
                          blas.bound_sgemm(X, X, np.zeros_like(X))]
                         + ([mkl.bound_sgemm(X, X, np.zeros_like(X))]
                            if mkl is not None else []))
        for m, n, k in shapes:
            check(kernel, blas, m, n, k, rng)
            A = rng.standard_normal((m, k), dtype=np.float32)
            B = rng.standard_normal((k, n), dtype=np.float32)
            C1 = np.zeros((m, n), np.float32)
            C2 = np.zeros((m, n), np.float32)
            C3 = np.zeros((m, n), np.float32)
            fns = [kernel.bound(m, n, k, A, B, C1),
                   blas.bound_sgemm(A, B, C2)]
            if mkl is not None:
                fns.append(mkl.bound_sgemm(A, B, C3))
            times = best_times(fns, reps, clock, t,
                               settle=settle if t > 1 else 0.0,
                               warmup=warmup)
            ours, theirs = times[:2]
            flops = 2.0 * m * n * k
            g1, g2 = flops / ours / 1e9, flops / theirs / 1e9
            peak = peaks.get(t)
            row = {"shape": [m, n, k], "threads": t, "isa": isa.name,
                   "clock": clock,
                   "exo_hl_gflops": g1, "openblas_gflops": g2,
                   "ratio": g1 / g2,
                   "peak_pct": 100 * g1 / peak if peak else None,
                   "openblas_peak_pct": 100 * g2 / peak if peak else None}
            if mkl is not None:
                g3 = flops / times[2] / 1e9
                row.update(mkl_gflops=g3, mkl_ratio=g1 / g3)
            rows.append(row)
            print_row(row, emulated)
    return rows


def add_scaling(rows):
    """Each row on more than one thread gets ``scaling`` (exo_hl's GFLOP/s
    over its one-thread GFLOP/s on the same shape) and
    ``openblas_scaling``, when that shape also ran on one thread."""
    one = {tuple(r["shape"]): r for r in rows if r["threads"] == 1}
    for r in rows:
        base = one.get(tuple(r["shape"]))
        if r["threads"] > 1 and base is not None:
            r["scaling"] = r["exo_hl_gflops"] / base["exo_hl_gflops"]
            r["openblas_scaling"] = (r["openblas_gflops"]
                                     / base["openblas_gflops"])
    return rows


def print_scaling(rows):
    """A table of ``add_scaling``'s figures (nothing when no row has
    them)."""
    rows = [r for r in rows if "scaling" in r]
    if not rows:
        return
    print("\nScaling: GFLOP/s on t threads / GFLOP/s on one thread")
    print("| shape | threads | exo_hl | OpenBLAS |")
    print("|------:|--------:|-------:|---------:|")
    for r in rows:
        print(f"| {'x'.join(map(str, r['shape']))} | {r['threads']} | "
              f"{r['scaling']:.2f} | {r['openblas_scaling']:.2f} |")


HEAD = ("shape", "threads", "exo_hl GFLOP/s", "OpenBLAS GFLOP/s", "ratio",
        "exo_hl % peak", "OpenBLAS % peak", "MKL GFLOP/s", "ratio to MKL")


def print_head():
    print("| " + " | ".join(HEAD) + " |")
    print("|" + "|".join("-" * (len(h) + 1) + ":" for h in HEAD) + "|",
          flush=True)


def print_row(r, emulated=False):
    pct = (lambda v: f"{v:.0f}%" if v is not None else "n/a")
    cells = ("x".join(map(str, r["shape"])), str(r["threads"]),
             f"{r['exo_hl_gflops']:.1f}", f"{r['openblas_gflops']:.1f}",
             f"{r['ratio']:.2f}", pct(r["peak_pct"]),
             pct(r["openblas_peak_pct"]),
             f"{r['mkl_gflops']:.1f}" if "mkl_gflops" in r else "-",
             f"{r['mkl_ratio']:.2f}" if "mkl_ratio" in r else "-")
    print("| " + " | ".join(c.rjust(len(h)) for c, h in zip(cells, HEAD))
          + " |" + (" (emulated)" if emulated else ""), flush=True)


def plot(rows, peaks, path, title):
    """GFLOP/s against size: squares (by n) and the other shapes (by
    M x N x K label), one panel per thread count."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    threads = sorted({r["threads"] for r in rows})
    fig, axes = plt.subplots(len(threads), 2, squeeze=False,
                             figsize=(12, 4.2 * len(threads)),
                             gridspec_kw={"width_ratios": [3, 2]})
    for row_ax, t in zip(axes, threads):
        mine = [r for r in rows if r["threads"] == t]
        sq = sorted((r for r in mine if len(set(r["shape"])) == 1),
                    key=lambda r: r["shape"][0])
        other = [r for r in mine if len(set(r["shape"])) != 1]
        for ax, sel, xs in ((row_ax[0], sq, [r["shape"][0] for r in sq]),
                            (row_ax[1], other, list(range(len(other))))):
            if not sel:
                ax.set_visible(False)
                continue
            ax.plot(xs, [r["exo_hl_gflops"] for r in sel], "o-",
                    label="exo_hl")
            ax.plot(xs, [r["openblas_gflops"] for r in sel], "s-",
                    label="OpenBLAS")
            if peaks.get(t):
                ax.axhline(peaks[t], linestyle="--", color="gray",
                           label=f"FMA peak ({peaks[t]:.0f})")
            ax.set_ylabel("GFLOP/s")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.legend(loc="lower right")
        row_ax[0].set_xlabel("M = N = K")
        row_ax[0].set_title(f"squares, {t} thread{'s' if t > 1 else ''}")
        if other:
            row_ax[1].set_xticks(range(len(other)))
            row_ax[1].set_xticklabels(["x".join(map(str, r["shape"]))
                                       for r in other], rotation=35,
                                      ha="right", fontsize=8)
            row_ax[1].set_title(f"K = 512 and odd shapes, {t} thread"
                                f"{'s' if t > 1 else ''}")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="squares 256, 512, 1024 and 1000, one thread")
    ap.add_argument("--isa", default="auto",
                    help="auto (the best this CPU has), avx2 or avx512")
    ap.add_argument("--threads", type=int, nargs="+", default=None,
                    help="thread counts (default 1 2; --quick: 1)")
    add_timing_args(ap, "kernel and shape")
    ap.add_argument("--shapes", nargs="+", default=None, metavar="MxNxK",
                    help="shapes to run instead of the default set")
    ap.add_argument("--params", choices=("auto", "model", "fixed"),
                    default="auto", help="the kernel's parameters: this "
                    "machine's tuning record, else the BLIS model (auto); "
                    "the model only; the base description (no NC blocks)")
    ap.add_argument("--no-mkl", action="store_true",
                    help="leave MKL out even when it is installed")
    ap.add_argument("--no-record", action="store_true",
                    help="do not append the run to apps/sgemm/results/")
    ap.add_argument("--note", default=None,
                    help="a remark stored with the recorded run (and shown "
                    "by report.py), e.g. what else ran on the machine")
    ap.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    ap.add_argument("--plot", metavar="FILE.png",
                    help="plot GFLOP/s against size (matplotlib)")
    args = ap.parse_args(argv)

    if args.shapes:
        try:
            shapes = [tuple(int(x) for x in s.lower().split("x"))
                      for s in args.shapes]
        except ValueError:
            ap.error("--shapes takes MxNxK")
        if any(len(s) != 3 or min(s) < 1 for s in shapes):
            ap.error("--shapes takes MxNxK with sizes >= 1")
    else:
        shapes = list(QUICK) if args.quick else all_shapes()
    threads = args.threads or ([1] if args.quick else [1, 2])
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            ap.error("--plot needs matplotlib (pip install matplotlib, or "
                     "the project's 'bench' extra)")

    isa, emulated, note = choose_isa(args.isa)
    if isa is None:
        print(f"bench.py: {note}", file=sys.stderr)
        return 2
    blas = OpenBlas.load()
    if blas is None:
        print("bench.py: numpy does not expose OpenBLAS's cblas_sgemm",
              file=sys.stderr)
        return 2
    for line in BLAS_NOTES[1:]:
        print(line)
    print(f"BLAS: {blas_description()}")
    mkl, mkl_note = (None, "MKL left out (--no-mkl)") if args.no_mkl \
        else Mkl.load()
    print(mkl_note if mkl is None else f"second baseline: {mkl_note}")
    os.environ["EXO_HL_SGEMM_PARAMS"] = args.params
    conf, conf_note = configuration(isa.name)
    print(f"ISA: {isa.name} ({note})")
    print(f"parameters: {conf_note}")
    t0 = time.perf_counter()
    kernel = compiled(isa.name)[0]      # called without per-call checks
    if kernel.narrow is not None and any(n <= kernel.narrow_n
                                         for _, n, _ in shapes):
        kernel.narrow()                 # the narrow products' kernels too
    if kernel.static is not None and any(n < kernel.dynamic_min_n
                                         for _, n, _ in shapes):
        kernel.static.kernel()          # and the static row-split one
    print(f"scheduled and compiled in {time.perf_counter() - t0:.1f} s")
    peaks = {} if emulated else thread_peaks(isa.name, threads)
    print(f"\nSGEMM C += A @ B (row-major f32), best of {args.reps}, "
          f"{args.clock} clock; ratio = exo_hl / OpenBLAS")
    print_head()
    rows = measure(kernel, blas, shapes, threads, args.reps, peaks, isa,
                   emulated, args.clock, args.settle, args.warmup, mkl)
    print_scaling(add_scaling(rows))
    if not args.no_record and not emulated:
        path = record_run("sgemm", f"{isa.name}", rows, {
            "isa": isa.name, "params": conf.params,
            "params_source": conf_note, "openblas": blas_description(),
            "mkl": mkl_note if mkl is not None else None,
            "peaks": peaks, "reps": args.reps, "clock": args.clock,
            "note": args.note,
            "argv": list(sys.argv[1:] if argv is None else argv)})
        print(f"recorded in {path}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
        print(f"wrote {args.json}")
    if args.plot:
        plot(rows, peaks, args.plot,
             f"SGEMM, exo_hl ({isa.label}) vs OpenBLAS")
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
