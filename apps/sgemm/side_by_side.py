"""Side-by-side timing of SGEMM schedule variants (not a test).

    python apps/sgemm/side_by_side.py [--isa avx512] [--threads 1]
        [--reps 5] [--clock cpu|wall] [--shapes 512 1024 128x2048x512]
        --variant model --variant order=goto,shape=12x32,kc=256,mc=1020

Each ``--variant`` is ``model`` (the app's model parameters,
``tuning.model_params``), ``fixed`` (the base description) or a list of
``name=value`` parameters of ``tuning.variant`` laid over the model's.
Every variant is scheduled (checked rewrites) and compiled, checked
against numpy's OpenBLAS on an odd shape, then per shape all variants,
OpenBLAS and MKL (when installed) are timed alternately in one loop
(``apps/common/timing.best_times``: best of ``--reps`` samples), so the
load of a shared machine hits them alike: compare the ratios, printed
against OpenBLAS and MKL. ``--clock cpu`` (the default on one thread)
is the process's CPU time divided by the threads.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from apps.common.blas_env import (OpenBlas, configure_blas,  # noqa: E402
                                  set_openmp_threads)

configure_blas()                      # before numpy is imported

import numpy as np  # noqa: E402

from apps.common.timing import best_times  # noqa: E402
from apps.sgemm import tuning  # noqa: E402
from apps.sgemm.api import RawKernel, aligned_zeros  # noqa: E402
from apps.sgemm.schedule import ISAS, schedule  # noqa: E402


def parse_variant(isa_name: str, text: str):
    """(label, Isa) for a ``--variant`` argument."""
    if text == "fixed":
        return "fixed", ISAS[isa_name]
    params = {k: v for k, v in tuning.model_params(isa_name).items()}
    if text != "model":
        for item in text.split(","):
            name, _, value = item.partition("=")
            params[name.strip()] = value.strip()
    isa = tuning.variant(isa_name, params)
    return f"{isa.mr}x{isa.nr} {isa.blocking_label}", isa


def parse_shape(text: str):
    parts = [int(x) for x in text.lower().split("x")]
    return tuple(parts * 3) if len(parts) == 1 else tuple(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isa", default="avx512", choices=sorted(ISAS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--clock", choices=("cpu", "wall"), default=None)
    ap.add_argument("--shapes", nargs="+", default=[
        "512", "1024", "1536", "2048", "128x2048x512"])
    ap.add_argument("--variant", action="append", default=None)
    ap.add_argument("--no-mkl", action="store_true")
    a = ap.parse_args(argv)
    clock = a.clock or ("cpu" if a.threads == 1 else "wall")
    blas = OpenBlas.load()
    if blas is None:
        raise SystemExit("side_by_side.py: numpy has no OpenBLAS")
    mkl = None
    if not a.no_mkl:
        from apps.common.mkl import Mkl
        mkl, about = Mkl.load()
        print(about)
    kernels = []
    for text in a.variant or ["model"]:
        t0 = time.time()
        label, isa = parse_variant(a.isa, text)
        kernel = RawKernel(schedule(isa).compile())
        print(f"[{len(kernels)}] {label} (built in {time.time() - t0:.0f} "
              f"s)", flush=True)
        kernels.append(kernel)
    set_openmp_threads(a.threads)
    blas.set_threads(a.threads)
    if mkl is not None:
        mkl.set_threads(a.threads)
    rng = np.random.default_rng(0)
    for n, kernel in enumerate(kernels):     # each checked first
        m_, n_, k_ = 301, 203, 517
        A = rng.standard_normal((m_, k_), dtype=np.float32)
        B = rng.standard_normal((k_, n_), dtype=np.float32)
        C = np.zeros((m_, n_), np.float32)
        kernel(m_, n_, k_, A, B, C)
        if not np.allclose(C, A @ B, atol=1e-3):
            raise SystemExit(f"side_by_side.py: variant [{n}] is wrong")
    names = [f"[{i}]" for i in range(len(kernels))] + ["OpenBLAS"] + \
        (["MKL"] if mkl is not None else [])
    print(f"{a.threads} thread(s), {clock} clock, best of {a.reps}; "
          f"GFLOP/s, then each variant / OpenBLAS and / MKL (loaded "
          f"machine: compare the ratios)")
    print(f"{'shape':>14} " + " ".join(f"{x:>9}" for x in names))
    for text in a.shapes:
        m, n, k = parse_shape(text)
        A = rng.standard_normal((m, k), dtype=np.float32)
        B = rng.standard_normal((k, n), dtype=np.float32)
        fns = [kern.bound(m, n, k, A, B, aligned_zeros((m, n)))
               for kern in kernels]
        fns.append(blas.bound_sgemm(A, B, aligned_zeros((m, n))))
        if mkl is not None:
            fns.append(mkl.bound_sgemm(A, B, aligned_zeros((m, n))))
        times = best_times(fns, a.reps, clock, a.threads,
                           settle=0.3 if a.threads > 1 else 0.0)
        g = [2.0 * m * n * k / t / 1e9 for t in times]
        nk = len(kernels)
        ratios = " ".join(
            f"[{i}] {g[i] / g[nk]:.2f}x" +
            (f" {g[i] / g[nk + 1]:.2f}xMKL" if mkl is not None else "")
            for i in range(nk))
        print(f"{m}x{n}x{k:<6} " + " ".join(f"{x:9.1f}" for x in g)
              + "   " + ratios, flush=True)


if __name__ == "__main__":
    main()
