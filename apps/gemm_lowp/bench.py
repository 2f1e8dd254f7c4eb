"""int8 and bf16 GEMM benchmark: exo_hl's AVX-512 VNNI/BF16 kernels beside
MKL and ONNX Runtime, interleaved, on 1 and 2 threads.

    python apps/gemm_lowp/bench.py [--quick] [--kind u8s8 bf16]
                                   [--sizes 512 1024] [--threads 1 2]
                                   [--mkl-isa AVX512_E1|any] [--no-ort]
                                   [--no-amx]
                                   [--reps 5] [--clock wall|cpu]
                                   [--tile pack_a=1 ...]
                                   [--json FILE] [--plot FILE.png]

For each kind, square size and thread count it times ``C += A @ B``
(row-major):

* ``u8s8``: A u8, B s8, C s32. exo_hl's ``gemm_u8s8`` kernel
  (``schedule.py``, ``vpdpbusd``), MKL's ``cblas_gemm_s8u8s32`` (in place,
  beta = 1, zero offsets) and ONNX Runtime's ``MatMulInteger`` (a one-node
  model, A uint8, B int8; it writes C = A @ B, a pass less);
* ``bf16``: A, B bf16, C f32. exo_hl's ``gemm_bf16`` (``vdpbf16ps``) and
  MKL's ``cblas_gemm_bf16bf16f32`` (in place).

MKL picks its kernels by CPU: on a CPU with AMX it uses the tile unit,
which is not what an AVX-512 kernel competes with, so by default MKL is
restricted to AVX-512 with VNNI/BF16 (``MKL_ENABLE_INSTRUCTIONS=AVX512_E1``,
set before MKL loads; ``--mkl-isa any`` lets it use everything, AMX
included). The line "MKL: ..." says which.

``--no-amx`` makes this machine one without AMX for all three: the
benchmark re-runs itself in a child process under ``apps/common/no_amx.py``
(a seccomp filter that makes ``arch_prctl(ARCH_REQ_XCOMP_PERM,
XFEATURE_XTILEDATA)`` fail with EPERM), where MKL, ONNX Runtime's MLAS and
exo_hl's dispatch are each refused the tile state and take their AVX-512
VNNI paths (an AMX instruction would kill the process with SIGILL). MKL
is then left to its own choice (``--mkl-isa any`` unless given). The
child prints the refusal and the path each library took.

Samples alternate between the implementations, best of ``--reps`` (see
``apps/common/timing.best_times``); each result is first checked against
exo_hl's ``interpret()``-exact answer (int8: exactly against the f64
product, exact at these sizes; bf16: MKL within 1e-3 relative, exo_hl bit-exact with the
interpreter in tests/apps/test_gemm_lowp.py).

exo_hl's kernel at each size is the default tile with the L2 blocking
``schedule.tile_for`` derives from the machine's L2 for that N and K
(``nc``, ``tiles_out``).

``--tile SPEC`` (repeatable) also times the kernel for another tile
(``mc=128``, ``pack_a=1``, ``prefetch=0``, ...: the fields of
``schedule.DEFAULT_TILES`` changed, without ``tile_for``'s blocking:
``--tile mc=64`` is the kernel before the blocking; a leading ``+``,
``--tile +pack_k=0``, changes ``tile_for``'s tile of each size
instead), in the same interleaved samples, on its own line with its ratios to exo_hl's default kernel, MKL and ONNX Runtime: schedule
choices are compared side by side, not across runs.

``%peak`` is of the dot-product peak measured for that thread count
(``apps/common/peak_lowp.py``: one probe per thread, run at once).

The kernels are C compiled by ``$CC`` (the first line names it). GCC 12
keeps the 16 accumulators of the 8 x 32 tile in a stack array around
``vpdpbusd`` (a third of the speed); clang keeps them in registers:
``CC=clang`` is what the README's figures use.

A benchmark, not a test: on a loaded machine the figures are noisy;
interleaving makes the load hit all implementations alike, the ratios
are what to read.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def _no_amx_child(argv):
    """``--no-amx``: run this script again in a child process with the AMX
    permission refused (apps/common/no_amx.py), and exit with its code."""
    if "--no-amx" not in argv or os.environ.get("EXO_HL_AMX_DENIED") == "1":
        return
    import subprocess
    sys.exit(subprocess.call([sys.executable,
                              str(REPO / "apps" / "common" / "no_amx.py"),
                              sys.executable, str(Path(__file__).resolve()),
                              *argv]))


_no_amx_child(sys.argv[1:])


def _mkl_isa(argv):
    """``--mkl-isa`` must act before MKL loads (its env var is read once);
    under ``--no-amx`` MKL is left to its own choice by default."""
    isa = "any" if "--no-amx" in argv else "AVX512_E1"
    for i, a in enumerate(argv):
        if a == "--mkl-isa" and i + 1 < len(argv):
            isa = argv[i + 1]
        elif a.startswith("--mkl-isa="):
            isa = a.split("=", 1)[1]
    if isa != "any":
        os.environ["MKL_ENABLE_INSTRUCTIONS"] = isa
    return isa


MKL_ISA = _mkl_isa(sys.argv[1:])

from apps.common.blas_env import (configure_blas,  # noqa: E402
                                  set_openmp_threads)

BLAS_NOTES = configure_blas()

import numpy as np  # noqa: E402

from apps.common.mkl import Mkl  # noqa: E402
from apps.common.ort_session import ort_session  # noqa: E402
from apps.common.peak_lowp import thread_peaks  # noqa: E402
from apps.common.timing import (add_timing_args, best_times,  # noqa: E402
                                 wake_threads)
from apps.gemm_lowp import schedule as S  # noqa: E402
from exo_hl.core_ir import datasem as D  # noqa: E402


class OrtMatMulInteger:
    """ONNX Runtime's ``MatMulInteger`` (A uint8 M x K, B int8 K x N ->
    int32), one node, ``threads`` intra-op threads."""

    def __init__(self, M, N, K, threads):
        from onnx import TensorProto, helper
        g = helper.make_graph(
            [helper.make_node("MatMulInteger", ["a", "b"], ["c"])], "mmi",
            [helper.make_tensor_value_info("a", TensorProto.UINT8, [M, K]),
             helper.make_tensor_value_info("b", TensorProto.INT8, [K, N])],
            [helper.make_tensor_value_info("c", TensorProto.INT32, [M, N])])
        self.session, self.version = ort_session(g, threads)

    def bound(self, A, B):
        run, feeds = self.session.run, {"a": A, "b": B}
        return lambda: run(None, feeds)


def parse_tile(spec, base):
    """``--tile`` text ``field=value,...`` (Tile's fields: mr, nr, kc, mc,
    prefetch, pack_a) -> a Tile from ``base`` with those fields changed."""
    import dataclasses
    fields = {f.name: f.type for f in dataclasses.fields(S.Tile)}
    changes = {}
    for item in filter(None, spec.split(",")):
        key, _, val = item.partition("=")
        if key not in fields:
            raise SystemExit(f"bench.py --tile: no field {key!r} "
                             f"(fields: {', '.join(fields)})")
        changes[key] = (val.lower() in ("1", "true", "yes")
                        if fields[key] in (bool, "bool") else int(val))
    return dataclasses.replace(base, **changes)


def measure(kind, sizes, threads, reps, peaks, mkl, use_ort, clock,
            settle, warmup, tiles=()):
    rows = []
    rng = np.random.default_rng(0)
    built = {}

    def kernel_for(t, n):
        """exo_hl's kernel for t threads at n^3, as the runtime dispatch
        gives it for that shape (``schedule.choose_kernel(shape=...)``:
        the default tile with ``tile_for``'s L2 blocking)."""
        tile = S.tile_for(kind.name, n, n)
        if (tile, t > 1) not in built:
            _, p = S.choose_kernel(kind.name, features=kind.features,
                                   threads=t > 1, shape=(n, n, n))
            assert p is S.kernel(kind, tile, threads=t > 1)
            built[tile, t > 1] = p.compile()
        return tile, built[tile, t > 1]
    base = S.DEFAULT_TILES[kind.name]

    def extra_kernel(spec, t, n):
        """``--tile spec``: the default tile with fields changed, or with
        a leading ``+``, ``tile_for``'s tile for n^3 with fields changed."""
        tile = (parse_tile(spec[1:], S.tile_for(kind.name, n, n))
                if spec.startswith("+") else parse_tile(spec, base))
        if (tile, t > 1) not in built:
            built[tile, t > 1] = S.kernel(kind, tile, threads=t > 1).compile()
        return built[tile, t > 1]
    extra = [(f"exo_hl[{spec}]", spec) for spec in tiles]
    for t in threads:
        set_openmp_threads(t)
        if mkl is not None:
            mkl.set_threads(t)
        for n in sizes:
            M = N = K = n
            if kind is S.U8S8:
                A = rng.integers(0, 256, (M, K)).astype(np.uint8)
                B = rng.integers(-128, 128, (K, N)).astype(np.int8)
                C = [np.zeros((M, N), np.int32) for _ in range(3)]
                # exact in f64 (|sum| < 2**53) and fast (BLAS)
                want = (A.astype(np.float64) @ B.astype(np.float64)
                        ).astype(np.int64)
            else:
                A = D.f32_to_bf16_bits(rng.standard_normal((M, K),
                                                           np.float32))
                B = D.f32_to_bf16_bits(rng.standard_normal((K, N),
                                                           np.float32))
                C = [np.zeros((M, N), np.float32) for _ in range(3)]
                want = (D.bf16_bits_to_f32(A).astype(np.float64)
                        @ D.bf16_bits_to_f32(B).astype(np.float64))
            names = ["exo_hl"]
            tile, kern = kernel_for(t, n)
            if t == threads[0]:
                print(f"{kind.name}: {n}^3 tile {tile}")
            fns = [kern.bind(M=M, N=N, K=K, A=A, B=B, C=C[0])]
            outs = [C[0]]           # each implementation's C
            for nm, spec in extra:  # other tiles, side by side
                names.append(nm)
                outs.append(np.zeros_like(C[0]))
                fns.append(extra_kernel(spec, t, n).bind(M=M, N=N, K=K, A=A, B=B, C=outs[-1]))
            if mkl is not None:
                names.append("mkl")
                outs.append(C[1])
                fns.append(mkl.bound_gemm_s8u8s32(A, B, C[1])
                           if kind is S.U8S8 else
                           mkl.bound_gemm_bf16(A, B, C[1]))
            if use_ort and kind is S.U8S8:
                names.append("onnxruntime")
                outs.append(C[2])
                fns.append(OrtMatMulInteger(M, N, K, t).bound(A, B))
            # check once before timing
            for nm, fn, c in zip(names, fns, outs):
                out = fn()
                got = out[0] if nm == "onnxruntime" else c
                ok = (np.array_equal(got, want) if kind is S.U8S8 else
                      np.allclose(got, want, rtol=1e-3, atol=1e-3 * n))
                if not ok:
                    raise SystemExit(f"bench.py: {nm} {kind.name} {n}^3 "
                                     f"differs from the reference")
            if t > 1 and n == sizes[0]:     # after the one-thread phase
                wake_threads(fns)           # (timing.wake_threads)
            times = best_times(fns, reps, clock, t,
                               settle=settle if t > 1 else 0.0,
                               warmup=warmup)
            ops = 2.0 * M * N * K
            g = {nm: ops / s / 1e9 for nm, s in zip(names, times)}
            row = {"kind": kind.name, "shape": [M, N, K], "threads": t,
                   "mkl_isa": MKL_ISA,
                   "amx_denied": os.environ.get("EXO_HL_AMX_DENIED") == "1"}
            for nm in names:
                row[f"{nm}_gops"] = g[nm]
            base_names = [nm for nm in names if not nm.startswith("exo_hl[")]
            for nm in base_names[1:]:
                row[f"ratio_{nm}"] = g["exo_hl"] / g[nm]
                for ex, _ in extra:     # another tile against the same
                    row[f"ratio_{nm}_{ex}"] = g[ex] / g[nm]
            if peaks.get(t):
                row["peak_pct"] = 100 * g["exo_hl"] / peaks[t]
            rows.append(row)
            line = f"{kind.name:5} {n:5}^3 t={t}  exo_hl {g['exo_hl']:7.1f}"
            for nm in base_names[1:]:
                line += (f"  {nm} {g[nm]:7.1f} (x{g['exo_hl'] / g[nm]:.2f})")
            more = "".join(
                f"\n      {ex} {g[ex]:7.1f}" + "".join(
                    f"  (x{g[ex] / g[nm]:.2f} {nm})" for nm in base_names)
                for ex, _ in extra)
            if "peak_pct" in row:
                line += f"  {row['peak_pct']:.0f}% of peak"
                above = [nm for nm in names if g[nm] > 1.02 * peaks[t]]
                if above:   # faster than the dot-product peak: not VNNI
                    line += f"  [above the peak: {', '.join(above)}]"
            print(line + more, flush=True)
    return rows


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    kinds = sorted({r["kind"] for r in rows})
    fig, axes = plt.subplots(1, len(kinds), figsize=(6 * len(kinds), 4),
                             squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        for t in sorted({r["threads"] for r in rows}):
            rs = [r for r in rows if r["kind"] == kind and r["threads"] == t]
            xs = [r["shape"][0] for r in rs]
            for key, style in (("exo_hl_gops", "-o"), ("mkl_gops", "--s"),
                               ("onnxruntime_gops", ":^")):
                if rs and key in rs[0]:
                    ax.plot(xs, [r[key] for r in rs], style,
                            label=f"{key[:-5]} t={t}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("M = N = K")
        ax.set_ylabel("GOP/s" if kind == "u8s8" else "GFLOP/s")
        ax.set_title(f"{kind} GEMM")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _report_amx_denied():
    """Check, in the ``--no-amx`` child, that the permission is refused."""
    import errno
    from apps.common.no_amx import request_amx
    err = request_amx()
    if os.environ.get("EXO_HL_AMX_DENIED") != "1" or err != errno.EPERM:
        raise SystemExit(f"bench.py --no-amx: AMX is not refused here "
                         f"(arch_prctl(ARCH_REQ_XCOMP_PERM) -> errno {err})")
    print("AMX denied: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) "
          "-> EPERM (seccomp filter, apps/common/no_amx.py); an AMX "
          "instruction would raise SIGILL, so every figure below is off AMX")
    print("ONNX Runtime: MLAS enables AMX only when MlasInitAMX()'s "
          "arch_prctl request succeeds; refused here, it uses AVX-512 VNNI")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="512 and 1024, one thread")
    ap.add_argument("--kind", nargs="+", choices=sorted(S.KINDS),
                    default=["u8s8", "bf16"])
    ap.add_argument("--sizes", nargs="+", type=int,
                    default=[256, 512, 1024, 2048])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--mkl-isa", default="AVX512_E1",
                    help="MKL_ENABLE_INSTRUCTIONS for MKL (default "
                    "AVX512_E1: AVX-512 with VNNI/BF16, no AMX); 'any': "
                    "MKL's own choice")
    ap.add_argument("--no-amx", action="store_true",
                    help="a machine without AMX: run in a child process "
                    "whose AMX permission request is refused (seccomp)")
    ap.add_argument("--no-mkl", action="store_true")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--no-peak", action="store_true")
    ap.add_argument("--tile", action="append", default=[], metavar="SPEC",
                    help="also time exo_hl's kernel for another tile, "
                    "side by side: the default with fields changed, e.g. "
                    "'pack_a=1' or 'mc=128,prefetch=0' (repeatable)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--plot", metavar="FILE.png")
    add_timing_args(ap, "kernel and size")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.threads = [512, 1024], [1]
    print(f"C compiler for exo_hl: {os.environ.get('CC', 'cc')}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    if args.no_amx:
        _report_amx_denied()
    mkl = None
    if not args.no_mkl:
        mkl, desc = Mkl.load()
        print(f"MKL: {desc}; MKL_ENABLE_INSTRUCTIONS="
              f"{os.environ.get('MKL_ENABLE_INSTRUCTIONS', '(unset)')}")
        if mkl is not None:
            print(f"MKL dispatches to: {mkl.processor()}")
    use_ort = not args.no_ort
    if use_ort:
        try:
            import onnxruntime
            print(f"ONNX Runtime {onnxruntime.__version__}")
        except ImportError:
            print("ONNX Runtime not installed: no ORT column")
            use_ort = False
    rows = []
    for name in args.kind:
        kind = S.KINDS[name]
        label, _ = S.choose_kernel(name, features=kind.features)
        peaks = {} if args.no_peak else thread_peaks(name, args.threads)
        print(f"{name}: kernel {label}, tile {S.DEFAULT_TILES[name]} with "
              f"the L2 blocking of schedule.tile_for per size; --tile "
              f"SPEC changes that default (without the blocking)")
        if args.no_amx:
            from apps.gemm_amx.dispatch import choose
            picked = choose(name)[0]
            print(f"{name}: exo_hl's runtime dispatch (AMX first) picks "
                  f"{picked} on this host")
            if picked.startswith("amx"):
                raise SystemExit("bench.py --no-amx: the dispatch picked AMX")
        rows += measure(kind, args.sizes, args.threads, args.reps, peaks,
                        mkl, use_ort, args.clock, args.settle, args.warmup,
                        args.tile)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.plot:
        plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
