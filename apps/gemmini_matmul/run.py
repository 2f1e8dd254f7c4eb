"""Print the Gemmini matmul schedule, check it against numpy, count the
simulated instructions and configuration writes.

    python run.py                          # paper shapes, M cut to 64
    python run.py --shape 12544x256x64     # one paper shape at full size
    python run.py --shape all --rows 0     # every paper shape at full size
    python run.py --relu                   # the ReLU variant
    python run.py --steps                  # every intermediate procedure
    python run.py --sizes 32,48,64 16,16,16 --scale 0.03
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from apps.gemmini_matmul.matmul import (SHAPES, matmul, matmul_relu,  # noqa
                                        stages)
from exo_hl.hw_libs.gemmini import (config_count, instr_count,  # noqa: E402
                                    reset_instr_count)


def reference(A, B, scale, relu=False):
    """numpy: i32 accumulation, f32 scale, round half to even, ReLU,
    saturate."""
    acc = A.astype(np.int32) @ B.astype(np.int32)
    y = np.rint(acc.astype(np.float32) * np.float32(scale))
    if relu:
        y = np.maximum(y, 0)
    return np.clip(y, -128, 127).astype(np.int8)


def inputs(M, N, K, rng):
    A = rng.integers(-128, 128, (M, K)).astype(np.int8)
    B = rng.integers(-128, 128, (K, N)).astype(np.int8)
    return A, B


def run_compiled(p, M, N, K, scale, A, B):
    """(C from the compiled kernel, instructions, configuration writes the
    C model issued)."""
    f = p.compile()
    reset_instr_count(f)
    C = np.zeros((M, N), np.int8)
    f(M=M, N=N, K=K, scale=np.array([scale], np.float32), A=A, B=B, C=C)
    return C, instr_count(f), config_count(f)


def run_both(p, M, N, K, scale, A, B):
    """(interpreted C, compiled C, instructions the model issued)."""
    s = np.array([scale], np.float32)
    Ci = np.zeros((M, N), np.int8)
    p.interpret(M=M, N=N, K=K, scale=s, A=A, B=B, C=Ci)
    Cc, n, _ = run_compiled(p, M, N, K, scale, A, B)
    return Ci, Cc, n


def naive_count(M, N, K):
    """Instructions of the same tiling with every load and store configured
    at its use (config + mvin per operand tile, preload + compute per
    block, zero + config + mvout per output tile)."""
    tiles, kb = (M // 16) * (N // 16), K // 16
    return tiles * (1 + kb * (2 + 2 + 2) + 2)


def naive_config_count(M, N, K):
    """Configuration writes of the naive count: one per load and store."""
    tiles, kb = (M // 16) * (N // 16), K // 16
    return tiles * (2 * kb + 1)


def _body_lines(p):
    lines = str(p).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("def "))
    return "\n".join(lines[start:])


def _shapes(args):
    if args.sizes:
        return [tuple(int(x) for x in s.split(",")) for s in args.sizes]
    if args.shape == "all":
        chosen = SHAPES
    else:
        chosen = [tuple(int(x) for x in args.shape.split("x"))]
    return [(min(M, args.rows) if args.rows else M, N, K)
            for M, N, K in chosen]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", action="store_true")
    ap.add_argument("--shape", default="all",
                    help="MxNxK, or 'all' for the ResNet-50 shapes")
    ap.add_argument("--rows", type=int, default=64,
                    help="cut M to this many rows (0: full size)")
    ap.add_argument("--sizes", nargs="*", default=None,
                    help="M,N,K triples instead of --shape")
    ap.add_argument("--relu", action="store_true")
    ap.add_argument("--interpret", action="store_true",
                    help="also run interpret() (slow on large shapes)")
    ap.add_argument("--scale", type=float, default=0.0125)
    args = ap.parse_args(argv)

    st = stages(matmul_relu if args.relu else matmul)
    if args.steps:
        for what, q in st:
            print(f"# --- {what}")
            print(_body_lines(q))
            print()
    unhoisted = dict(st)["configured store (mvout)"]
    p = st[-1][1].rename("matmul_gemmini")
    print("# scheduled kernel")
    print(p)
    print()
    rng = np.random.default_rng(0)
    ok = True
    print("| M, N, K | instructions | config writes | before hoisting "
          "| naive per-tile count | naive config writes | numpy |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for M, N, K in _shapes(args):
        assert M % 16 == 0 and N % 16 == 0 and K % 16 == 0, (M, N, K)
        A, B = inputs(M, N, K, rng)
        want = reference(A, B, args.scale, args.relu)
        C, n, n_cfg = run_compiled(p, M, N, K, args.scale, A, B)
        Cu, n_unhoisted, _ = run_compiled(unhoisted, M, N, K, args.scale,
                                          A, B)
        same = np.array_equal(C, want) and np.array_equal(Cu, want)
        if args.interpret:
            Ci = np.zeros((M, N), np.int8)
            p.interpret(M=M, N=N, K=K, scale=np.array([args.scale],
                                                      np.float32),
                        A=A, B=B, C=Ci)
            same = same and np.array_equal(Ci, want)
        ok = ok and same
        print(f"| {M}, {N}, {K} | {n} | {n_cfg} | {n_unhoisted} | "
              f"{naive_count(M, N, K)} | {naive_config_count(M, N, K)} | "
              f"{'equal' if same else 'DIFFERENT'} |")
    print()
    text = p.c_code_str()
    print("# generated C (kernel function)")
    print(text[text.rindex(f"void {p.name()}("):].rstrip())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
