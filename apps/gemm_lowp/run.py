"""int8 / bf16 GEMM on AVX-512 VNNI/BF16: schedule, check, time.

    python apps/gemm_lowp/run.py [--kind u8s8|bf16] [--steps]
                                 [--sizes 512 1024] [--reps 5]

Prints the schedule (``--steps``: every stage), checks the kernel
bit-exact against ``interpret()`` of the algorithm on a small problem
(int8: also exactly against numpy's int64 product on the timed sizes),
then times it (one thread; MKL/ONNX Runtime comparisons: ``bench.py``).
The kernel is chosen by ``schedule.choose_kernel`` (runtime dispatch on
this CPU's features; each timed size gets the kernel for its shape, with
``tile_for``'s L2 blocking); on a CPU without VNNI/BF16 it exits with status 2,
unless emulation is on (``EXO_HL_EMULATE=1``: correct, slow).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from apps.gemm_lowp import schedule as S  # noqa: E402
from exo_hl.core_ir import datasem as D  # noqa: E402


def inputs(kind, M, N, K, seed=0):
    """(A, B, C) for ``kind``: random u8/s8/s32, or bf16 (normal data)."""
    rng = np.random.default_rng(seed)
    if kind is S.U8S8:
        return (rng.integers(0, 256, (M, K)).astype(np.uint8),
                rng.integers(-128, 128, (K, N)).astype(np.int8),
                rng.integers(-2**31, 2**31, (M, N), dtype=np.int64)
                .astype(np.int32))
    return (D.f32_to_bf16_bits(rng.standard_normal((M, K), np.float32)),
            D.f32_to_bf16_bits(rng.standard_normal((K, N), np.float32)),
            rng.standard_normal((M, N), np.float32))


def check_exact(kind, kernel_proc, M, N, K):
    """The compiled kernel against interpret() of the algorithm, bit for
    bit; returns True or raises AssertionError."""
    A, B, C = inputs(kind, M, N, K)
    want, got = C.copy(), C.copy()
    with np.errstate(all="ignore"):
        kind.spec(S.DEFAULT_TILES[kind.name]).interpret(
            M=M, N=N, K=K, A=A, B=B, C=want)
    kernel_proc.compile()(M=M, N=N, K=K, A=A, B=B, C=got)
    assert np.array_equal(want.view(np.uint32), got.view(np.uint32)), \
        f"{kind.name}: kernel differs from interpret()"
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=sorted(S.KINDS), default="u8s8")
    ap.add_argument("--steps", action="store_true")
    ap.add_argument("--sizes", nargs="+", type=int, default=[512, 1024])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    kind = S.KINDS[args.kind]
    emulate = os.environ.get("EXO_HL_EMULATE", "") in ("1", "true", "yes")
    try:
        label, p = S.choose_kernel(args.kind)
    except RuntimeError as e:
        if not emulate:
            print(f"run.py: {e}", file=sys.stderr)
            return 2
        label, p = "emulated", S.kernel(kind)
    stages = S.stages(kind)
    for what, q in (stages if args.steps else stages[-2:-1]):
        print(f"# --- {what}\n{q}\n")
    t = S.DEFAULT_TILES[args.kind]
    check_exact(kind, p, t.mc, 2 * t.nr, t.kc)
    print(f"{label}: bit-exact with interpret() at "
          f"{t.mc}x{2 * t.nr}x{t.kc}")
    for n in args.sizes:
        # the kernel the dispatch gives for this shape (L2 blocking)
        f = (S.choose_kernel(args.kind, shape=(n, n, n))[1]
             if label != "emulated" else p).compile()
        A, B, C = inputs(kind, n, n, n)
        if kind is S.U8S8:
            C[:] = 0
            f(M=n, N=n, K=n, A=A, B=B, C=C)
            assert np.array_equal(C, (A.astype(np.float64)
                                      @ B.astype(np.float64)).astype(np.int64))
        run = f.bind(M=n, N=n, K=n, A=A, B=B, C=C)
        best = float("inf")
        for _ in range(args.reps):
            t0 = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - t0)
        unit = "GOP/s" if kind is S.U8S8 else "GFLOP/s"
        print(f"{args.kind} {n}^3: {2.0 * n ** 3 / best / 1e9:.1f} {unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
