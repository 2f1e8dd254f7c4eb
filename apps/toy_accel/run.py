"""Print the toy-accelerator GEMM schedule and check it against numpy.

    python run.py                  # final schedule, checks, kernel C
    python run.py --steps          # every intermediate procedure as well
    python run.py --sizes 32,48,64 16,16,16
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gemm import gemm, schedule, stages  # noqa: E402
from hw_lib import split_config  # noqa: E402


def _body_lines(p):
    """The procedure without its decorator line (instrs print their whole C
    template in the decorator, which is noise here)."""
    lines = str(p).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("def "))
    return "\n".join(lines[start:])


def _kernel_c(p):
    """The generated C function of ``p`` (without the simulator prelude)."""
    text = p.c_code_str()
    head = f"void {p.name()}("
    start = text.rindex(head)
    return text[start:].rstrip()


def _check(p, sizes, rng):
    M, N, K = sizes
    A = rng.integers(-4, 5, (M, K)).astype(np.float32)
    B = rng.integers(-4, 5, (K, N)).astype(np.float32)
    C0 = rng.integers(-4, 5, (M, N)).astype(np.float32)
    want = C0 + A @ B
    C = C0.copy()
    p.interpret(M=M, N=N, K=K, A=A, B=B, C=C)
    ok_i = np.array_equal(C, want)
    C = C0.copy()
    p.compile()(M=M, N=N, K=K, A=A, B=B, C=C)
    ok_c = np.array_equal(C, want)
    return ok_i, ok_c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", action="store_true",
                    help="print every intermediate procedure")
    ap.add_argument("--sizes", nargs="*", default=["32,48,64", "16,16,16"],
                    help="M,N,K triples (multiples of 16) to check")
    args = ap.parse_args(argv)

    print("# library: ld_data_cfg split into config + configured load")
    print(_body_lines(split_config()))
    print()
    if args.steps:
        for what, q in stages(gemm):
            print(f"# --- {what}")
            print(q)
            print()
    p = schedule(gemm)
    print("# scheduled kernel")
    print(p)
    print()
    rng = np.random.default_rng(0)
    ok = True
    for s in args.sizes:
        sizes = tuple(int(x) for x in s.split(","))
        ok_i, ok_c = _check(p, sizes, rng)
        ok = ok and ok_i and ok_c
        tag = "M={}, N={}, K={}".format(*sizes)
        print(f"{tag}: interpret: {'equal' if ok_i else 'DIFFERENT'} to numpy;"
              f" compiled C: {'equal' if ok_c else 'DIFFERENT'} to numpy")
    print()
    print("# generated C (kernel function)")
    print(_kernel_c(p))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
