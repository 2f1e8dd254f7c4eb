"""Conv-layer benchmark: exo_hl against ONNX Runtime and im2col + OpenBLAS.

    python apps/conv/bench.py [--isa auto|avx2|avx512] [--threads 1 2]
                              [--reps 5] [--clock wall|cpu] [--settle 0.3]
                              [--warmup 0.01]
                              [--size N H W IC OC | --resnet]
                              [--params auto|model|fixed] [--no-record]
                              [--also par=blocks,dynamic=true ...]
                              [--json FILE] [--plot FILE.png]

``--resnet`` runs the ResNet-50 3x3 layers, N in {1, 5}: 56^2 x 64,
28^2 x 128, 14^2 x 256, 7^2 x 512 (output H x W x channels, IC = OC), then
Halide's layer. Each layer runs the kernel of this machine's tuning record
for that layer (``exo-hl tune conv --option sizes=resnet14:5``), else the
model's default (``apps/conv/tuning.py``; ``--params model`` forces it,
``--params fixed`` runs the fixed general-size schedule); the bench prints
which. ``--also KEY=VALUE,...`` (repeatable) times beside it, in the same
interleaved samples, the same parameters with those overridden (e.g.
``--also par=blocks,dynamic=true,bands=0`` against the model's ``bands``):
its GFLOP/s and ratio to ONNX Runtime are printed under the row and kept
in ``exo_hl_also`` (the row's own figures stay the first kernel's). The rows are recorded with the machine's signature in
``apps/conv/results/<machine>.json`` (``apps/common/results.py``; not with
``--no-record``, nor when emulated); ``apps/common/report.py conv --write``
makes the README tables.

The layer (default: Halide's, N=5, output 80x100, IC=OC=128): a 3x3
convolution, stride 1, no padding, + bias, ReLU, f32. For each thread count
it times, interleaved (load from other processes hits all three alike),
best of ``--reps`` samples (a sample repeats the call for at least 20 ms;
with more than one thread each sample follows a pause of ``--settle``
seconds, so the thread pool of the implementation timed before it has
stopped spinning; every sample follows ``--warmup`` seconds of untimed
calls, at least one, so its own threads are awake again and its data
back in the caches):

1. **exo_hl**: the scheduled kernel (``schedule.py``), NHWC; for the
   default size the size-specialized kernel (``specialized``), the
   general-size one also timed (``exo_hl_general_gflops`` in the JSON);
   ``par`` rows on t OpenMP threads.
2. **ONNX Runtime**: a one-node ``Conv`` model (``onnx.helper``; weights
   and bias as initializers), run by the CPU execution provider (MLAS
   kernels) with ``intra_op_num_threads = t``, ``inter_op_num_threads =
   1``. ONNX's layout is NCHW: the input is converted before timing. The
   model is ``Conv`` then ``Relu``, which ONNX Runtime fuses into one
   kernel (the same work as exo_hl's).
3. **im2col + OpenBLAS**: numpy builds the ``[N H W, 9 IC]`` patch matrix
   (timed), numpy's OpenBLAS multiplies it by the weights (``OPENBLAS_
   CORETYPE`` unset before numpy loads, t threads), numpy adds the bias
   and applies the ReLU (timed).

Every result is checked against a float64 reference before timing. One
row per thread count: GFLOP/s of each (2 x N H W OC 9 IC flops), exo_hl /
ONNX Runtime, and each as a percentage of the FMA peak measured by
``apps/common/peak.py`` for t threads (t probes run at once).

``--json FILE`` writes one object per thread count: {"threads", "isa",
"exo_hl_gflops", "onnxruntime_gflops", "im2col_blas_gflops", "peak_pct"}
(peak_pct: exo_hl's) plus the details. ``--plot FILE.png`` draws the
GFLOP/s (needs matplotlib: ``pip install exo_hl[bench]``).

Needs ``onnxruntime`` and ``onnx`` (``pip install exo_hl[bench]``). A
benchmark, not a test: figures on a shared machine are noisy.
"""
from __future__ import annotations

import argparse
import json
import math
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

from apps.common.aligned import aligned_empty  # noqa: E402

from apps.common.ort_session import ort_session  # noqa: E402
from apps.common.peak import thread_peaks  # noqa: E402
from apps.common.timing import (add_timing_args, best_times,  # noqa: E402
                                 wake_threads)
from apps.conv.api import RawKernel, choose_isa, compiled  # noqa: E402
from apps.conv.reference import im2col_conv, reference  # noqa: E402
from apps.conv.schedule import (HALIDE_SIZES, flops,  # noqa: E402
                                specialized)
from apps.conv import tuning  # noqa: E402
from exo_hl import SchedulingError  # noqa: E402
from apps.common.results import record_run  # noqa: E402


NAMES = ("exo_hl", "onnxruntime", "im2col_blas")


def check(name, got, want, ic):
    """Within f32 rounding of a 9 IC-term dot product (relative to the
    largest output)."""
    err = float(np.max(np.abs(got - want))) / max(1.0, float(np.max(want)))
    if not err < 1e-4 * max(1.0, math.sqrt(9 * ic) / 10):
        raise SystemExit(f"bench.py: {name} differs from the reference "
                         f"(relative error {err:.1e})")


class OnnxConv:
    """An ONNX ``Conv`` + ``Relu`` (NCHW) in an ONNX Runtime session (its
    graph optimizer fuses them)."""

    def __init__(self, wt, bias, shape_nchw, threads):
        from onnx import TensorProto, helper
        N, IC, H2, W2 = shape_nchw
        OC = wt.shape[3]
        w_oihw = np.ascontiguousarray(wt.transpose(3, 2, 0, 1))
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w", "b"], ["c"],
                              kernel_shape=[3, 3], strides=[1, 1],
                              pads=[0, 0, 0, 0]),
             helper.make_node("Relu", ["c"], ["y"])],
            "conv3x3",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                           [N, IC, H2, W2])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                           [N, OC, H2 - 2, W2 - 2])],
            [helper.make_tensor("w", TensorProto.FLOAT, w_oihw.shape,
                                w_oihw.ravel()),
             helper.make_tensor("b", TensorProto.FLOAT, bias.shape, bias)])
        self.session, self.version = ort_session(graph, threads)

    def __call__(self, x_nchw):
        return self.session.run(None, {"x": x_nchw})[0]


def measure(kernels, sizes, threads, reps, peaks, isa, clock, blas,
            settle=0.3, warmup=0.01):
    """One row per thread count (see the module docstring)."""
    N, H, W, IC, OC = sizes
    rng = np.random.default_rng(0)
    inp = rng.standard_normal((N, H + 2, W + 2, IC), dtype=np.float32)
    wt = rng.standard_normal((3, 3, IC, OC), dtype=np.float32)
    bias = rng.standard_normal(OC, dtype=np.float32)
    want = reference(inp, wt, bias)
    x_nchw = np.ascontiguousarray(inp.transpose(0, 3, 1, 2))
    wt2d = wt.reshape(9 * IC, OC)
    cols = np.empty((N, H, W, 3, 3, IC), np.float32)
    out_blas = np.empty((N * H * W, OC), np.float32)
    fl = flops(*sizes)
    rows = []
    for t in threads:
        set_openmp_threads(t)
        blas.set_threads(t)
        ort_conv = OnnxConv(wt, bias, x_nchw.shape, t)
        outs = {}
        fns = []
        pack_ms = {}
        for label, k in kernels.items():
            o = aligned_empty((N, H, W, OC))   # (as ORT's own output)
            outs[label] = o
            w = k.prepare(wt)       # pre-packed weights: once, apart
            if w is not wt:
                t0 = time.perf_counter()
                for _ in range(3):
                    k.prepare(wt)
                pack_ms[label] = (time.perf_counter() - t0) / 3 * 1e3
            fns.append(lambda k=k, o=o, w=w: k(sizes, inp, w, bias, o))
        fns.append(lambda: ort_conv(x_nchw))
        fns.append(lambda: im2col_conv(inp, wt2d, bias, cols, out_blas))
        for fn in fns:                     # warm up, and fill the outputs
            fn()
        for label, o in outs.items():
            check(f"exo_hl ({label})", o, want, IC)
        y = ort_conv(x_nchw).transpose(0, 2, 3, 1)
        check("ONNX Runtime", y, want, IC)
        check("im2col + BLAS", out_blas.reshape(N, H, W, OC), want, IC)
        if t > 1:       # the other CPUs idled through the last layer's
            wake_threads(fns)       # one-thread phase (timing.wake_threads)
        secs = best_times(fns, reps, clock, t,
                          settle=settle if t > 1 else 0.0, warmup=warmup)
        g = [fl / s / 1e9 for s in secs]
        labels = list(kernels)
        ours = dict(zip(labels, g))
        peak = peaks.get(t)
        best_label = labels[0]
        row = {"threads": t, "isa": isa.name, "clock": clock,
               "size": list(sizes),
               "exo_hl_gflops": ours[best_label],
               "onnxruntime_gflops": g[-2],
               "im2col_blas_gflops": g[-1],
               "ratio_onnxruntime": ours[best_label] / g[-2],
               "peak_pct": 100 * ours[best_label] / peak if peak else None,
               "onnxruntime_peak_pct": 100 * g[-2] / peak if peak else None,
               "im2col_blas_peak_pct": 100 * g[-1] / peak if peak else None,
               "peak_gflops": peak, "exo_hl_kernel": best_label,
               "exo_hl_pack_ms": pack_ms.get(best_label)}
        if "general" in ours and best_label != "general":
            row["exo_hl_general_gflops"] = ours["general"]
        also = {k: v for k, v in ours.items()
                if k not in (best_label, "general")}
        if also:
            row["exo_hl_also"] = {k: {"gflops": v, "ratio_onnxruntime":
                                      v / g[-2]} for k, v in also.items()}
        rows.append(row)
        print_row(row)
        for k, v in also.items():
            print(f"  also {k}: {v:.1f} GFLOP/s, {v / g[-2]:.2f}x ONNX "
                  f"Runtime")
        if pack_ms.get(best_label) is not None:
            print(f"  (weights pre-packed once, not in the time above: "
                  f"{pack_ms[best_label]:.2f} ms in numpy; one call takes "
                  f"{fl / ours[best_label] / 1e6:.2f} ms)")
    return rows


HEAD = ("threads", "exo_hl GFLOP/s", "ONNX Runtime GFLOP/s",
        "im2col+BLAS GFLOP/s", "exo_hl / ORT", "exo_hl % peak",
        "ORT % peak", "im2col % peak")


def print_head():
    print("| " + " | ".join(HEAD) + " |")
    print("|" + "|".join("-" * (len(h) + 1) + ":" for h in HEAD) + "|",
          flush=True)


def print_row(r):
    pct = (lambda v: f"{v:.0f}%" if v is not None else "n/a")
    cells = (str(r["threads"]), f"{r['exo_hl_gflops']:.1f}",
             f"{r['onnxruntime_gflops']:.1f}",
             f"{r['im2col_blas_gflops']:.1f}",
             f"{r['ratio_onnxruntime']:.2f}", pct(r["peak_pct"]),
             pct(r["onnxruntime_peak_pct"]), pct(r["im2col_blas_peak_pct"]))
    print("| " + " | ".join(c.rjust(len(h)) for c, h in zip(cells, HEAD))
          + " |", flush=True)


def plot(rows, path, title):
    """GFLOP/s of the three, grouped by thread count, with the peak."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    width = 0.25
    keys = (("exo_hl_gflops", "exo_hl"),
            ("onnxruntime_gflops", "ONNX Runtime (MLAS)"),
            ("im2col_blas_gflops", "im2col + OpenBLAS"))
    xs = np.arange(len(rows))
    for i, (key, label) in enumerate(keys):
        ax.bar(xs + (i - 1) * width, [r[key] for r in rows], width,
               label=label)
    for x, r in zip(xs, rows):
        if r.get("peak_gflops"):
            ax.hlines(r["peak_gflops"], x - 1.5 * width, x + 1.5 * width,
                      colors="gray", linestyles="--")
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{r['threads']} thread"
                        f"{'s' if r['threads'] > 1 else ''}" for r in rows])
    ax.set_ylabel("GFLOP/s (dashed: measured FMA peak)")
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _overrides(text: str) -> dict:
    """'par=blocks,dynamic=true,bands=0' -> {'par': 'blocks', 'dynamic':
    True, 'bands': 0}."""
    out = {}
    for item in filter(None, text.split(",")):
        k, sep, v = item.partition("=")
        if not sep:
            raise SystemExit(f"bench.py: --also {text!r}: write KEY=VALUE")
        low = v.lower()
        out[k.strip()] = (True if low == "true" else False
                          if low == "false" else int(v) if v.isdigit()
                          else v)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isa", default="auto",
                    help="auto (the best this CPU has), avx2 or avx512")
    ap.add_argument("--threads", type=int, nargs="+", default=[1],
                    help="thread counts (default 1)")
    add_timing_args(ap, "implementation")
    ap.add_argument("--size", type=int, nargs=5, default=None,
                    metavar=("N", "H", "W", "IC", "OC"),
                    help="layer size (output H x W; default Halide's "
                    "5 80 100 128 128)")
    ap.add_argument("--resnet", action="store_true",
                    help="the ResNet-50 3x3 layers (N = 1, 5) and Halide's")
    ap.add_argument("--params", choices=("auto", "model", "fixed",
                                         "legacy"), default="auto",
                    help="auto: this machine's tuning record, else the "
                    "model; model; fixed: the general-size schedule; "
                    "legacy: the specialized kernel of schedule.py (and "
                    "the general one; the bench before tuning)")
    ap.add_argument("--also", action="append", default=[],
                    metavar="KEY=VALUE,...",
                    help="also time the layer's parameters with these "
                    "overridden (repeatable; e.g. par=blocks,bands=0)")
    ap.add_argument("--no-record", action="store_true",
                    help="do not append the rows to apps/conv/results")
    ap.add_argument("--note", default=None,
                    help="a note stored with the recorded run")
    ap.add_argument("--general", action="store_true",
                    help="time only the general-size kernel")
    ap.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    ap.add_argument("--plot", metavar="FILE.png",
                    help="bar chart of GFLOP/s (matplotlib)")
    args = ap.parse_args(argv)
    sizes = tuple(args.size) if args.size else tuple(HALIDE_SIZES.values())
    if min(sizes) < 1:
        ap.error("--size takes N H W IC OC >= 1")
    if min(args.threads) < 1:
        ap.error("--threads takes counts >= 1")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            ap.error("--plot needs matplotlib (pip install matplotlib, or "
                     "the project's 'bench' extra)")
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        print("bench.py: needs onnxruntime and onnx (pip install "
              "onnxruntime onnx, or the project's 'bench' extra)",
              file=sys.stderr)
        return 2

    isa, emulated, note = choose_isa(args.isa)
    if isa is None:
        print(f"bench.py: {note}", file=sys.stderr)
        return 2
    blas = OpenBlas.load()
    if blas is None:
        print("bench.py: numpy does not expose OpenBLAS", file=sys.stderr)
        return 2
    for line in BLAS_NOTES[1:]:
        print(line)
    print(f"BLAS: {blas_description()}")
    print(f"ONNX Runtime {onnxruntime.__version__} (CPU execution provider)")
    print(f"ISA: {isa.name} ({note})")
    peaks = {} if emulated else thread_peaks(isa.name, args.threads)
    if args.resnet:
        layers = [(n, hw, hw, c, c) for n in (1, 5)
                  for hw, c in tuning.RESNET] + \
            [tuple(HALIDE_SIZES.values())]
    else:
        layers = [sizes]
    rows = []
    sources = []
    for sizes in layers:
        N, H, W, IC, OC = sizes
        t0 = time.perf_counter()
        kernels = {}
        if args.params == "legacy":
            halide = sizes == tuple(HALIDE_SIZES.values())
            if halide and not args.general:
                kernels["specialized"] = RawKernel(
                    specialized(isa).compile())
            kernels["general"] = compiled(isa.name)
            params, about = {"legacy": True}, f"{isa.label} (schedule.py)"
        else:
            params, _, about = tuning.configured(isa.name, sizes,
                                                 args.params)
            kernels["configured"] = RawKernel(
                tuning.build(isa.name, params, sizes).compile())
            for text in args.also:
                other = dict(params, **_overrides(text))
                try:
                    kernels[text] = RawKernel(
                        tuning.build(isa.name, other, sizes).compile())
                except SchedulingError as e:
                    print(f"--also {text}: refused for this layer ({e})")
        sources.append(about)
        print(f"\nconv 3x3 + bias + ReLU, N={N}, output {H}x{W}, IC={IC}, "
              f"OC={OC}, f32; best of {args.reps}, {args.clock} clock"
              f"{' (EMULATED)' if emulated else ''}")
        print(f"parameters: {about}")
        print(f"scheduled and compiled in {time.perf_counter() - t0:.1f} s "
              f"({', '.join(kernels)})")
        print_head()
        got = measure(kernels, sizes, args.threads, args.reps, peaks, isa,
                      args.clock, blas, args.settle, args.warmup)
        for r in got:
            r["params"] = params
            r["params_source"] = about
        rows += got
    if not args.no_record and not emulated:
        path = record_run("conv", isa.name, rows, {
            "isa": isa.name, "params_source": (
                "per layer: this machine's tuning record, else the model"
                if args.params == "auto" else args.params),
            "onnxruntime": onnxruntime.__version__,
            "openblas": blas_description(), "peaks": peaks,
            "reps": args.reps, "clock": args.clock, "note": args.note,
            "argv": list(sys.argv[1:] if argv is None else argv)})
        print(f"recorded in {path}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
        print(f"wrote {args.json}")
    if args.plot:
        plot(rows, args.plot, f"conv layer N={N}, {H}x{W}, {IC} -> {OC} "
             f"channels\nexo_hl ({isa.label}) vs ONNX Runtime vs im2col + "
             f"OpenBLAS")
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
