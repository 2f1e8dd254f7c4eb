"""Print the Gemmini matmul schedule, check it against numpy, count the
simulated instructions.

    python run.py                     # final schedule, checks, counts, C
    python run.py --steps             # every intermediate procedure as well
    python run.py --sizes 32,48,64 16,16,16 --scale 0.03
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from apps.gemmini_matmul.matmul import matmul, stages  # noqa: E402
from exo_hl.hw_libs.gemmini import instr_count, reset_instr_count  # noqa


def reference(A, B, scale):
    """numpy: i32 accumulation, f32 scale, round half to even, saturate."""
    acc = A.astype(np.int32) @ B.astype(np.int32)
    y = np.rint(acc.astype(np.float32) * np.float32(scale))
    return np.clip(y, -128, 127).astype(np.int8)


def inputs(M, N, K, rng):
    A = rng.integers(-128, 128, (M, K)).astype(np.int8)
    B = rng.integers(-128, 128, (K, N)).astype(np.int8)
    return A, B


def run_both(p, M, N, K, scale, A, B):
    """(interpreted C, compiled C, instructions the model issued)."""
    s = np.array([scale], np.float32)
    Ci = np.zeros((M, N), np.int8)
    p.interpret(M=M, N=N, K=K, scale=s, A=A, B=B, C=Ci)
    f = p.compile()
    reset_instr_count(f)
    Cc = np.zeros((M, N), np.int8)
    f(M=M, N=N, K=K, scale=s, A=A, B=B, C=Cc)
    return Ci, Cc, instr_count(f)


def naive_count(M, N, K):
    """Instructions of the same tiling with every load and store configured
    at its use (config + mvin per operand tile, preload + compute per
    block, zero + config + mvout per output tile)."""
    tiles, kb = (M // 16) * (N // 16), K // 16
    return tiles * (1 + kb * (2 + 2 + 2) + 2)


def _body_lines(p):
    lines = str(p).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("def "))
    return "\n".join(lines[start:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", action="store_true")
    ap.add_argument("--sizes", nargs="*", default=["32,48,64", "16,16,16",
                                                   "64,32,48"])
    ap.add_argument("--scale", type=float, default=0.0125)
    args = ap.parse_args(argv)

    st = stages(matmul)
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
    for s in args.sizes:
        M, N, K = (int(x) for x in s.split(","))
        assert M % 16 == 0 and N % 16 == 0 and K % 16 == 0, s
        A, B = inputs(M, N, K, rng)
        want = reference(A, B, args.scale)
        Ci, Cc, n = run_both(p, M, N, K, args.scale, A, B)
        _, Cu, n_unhoisted = run_both(unhoisted, M, N, K, args.scale, A, B)
        ok_i, ok_c = np.array_equal(Ci, want), np.array_equal(Cc, want)
        ok = ok and ok_i and ok_c and np.array_equal(Cu, want)
        sat = int(np.sum(np.abs(want.astype(int)) == 128) +
                  np.sum(want == 127))
        print(f"M={M}, N={N}, K={K}: interpret "
              f"{'equal' if ok_i else 'DIFFERENT'}, compiled "
              f"{'equal' if ok_c else 'DIFFERENT'} to numpy "
              f"({sat} saturated outputs); instructions issued: {n} "
              f"(before hoisting: {n_unhoisted}; naive tile count: "
              f"{naive_count(M, N, K)})")
    print()
    text = p.c_code_str()
    print("# generated C (kernel function)")
    print(text[text.rindex(f"void {p.name()}("):].rstrip())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
