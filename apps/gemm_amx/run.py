"""Print the AMX GEMM schedules and check them: bit-exact against numpy (int8)
and a numpy model of the stated summation order (bf16), natively when the CPU
has AMX and through the emulation layer.

    python -m apps.gemm_amx.run                 # both kinds, 64 x 256 x 128
    python -m apps.gemm_amx.run --kind bf16 --steps
    python -m apps.gemm_amx.run --size 256 512 1024 --emulate
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from pathlib import Path  # noqa: E402

_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:            # run as a script: the repo's apps
    sys.path.insert(0, _REPO)

from apps.gemm_amx.schedule import gemm_bf16, gemm_u8s8, stages  # noqa: E402


def bf16_bits(x):
    """bf16 bits (round to nearest even) of float values."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def reference(kind, A, B, C):
    """What the algorithm computes, in numpy."""
    if kind == "int8":
        s = C.astype(np.int64) + A.astype(np.int64) @ B.astype(np.int64)
        return ((s + 2**31) % 2**32 - 2**31).astype(np.int32)
    a, b = bf16_values(A), bf16_values(B)
    ref = C.copy()
    for kt in range(a.shape[1] // 32):
        ev = np.zeros(C.shape, np.float32)
        od = np.zeros(C.shape, np.float32)
        for kp in range(16):
            k0 = 32 * kt + 2 * kp
            ev = ev + np.outer(a[:, k0], b[k0, :]).astype(np.float32)
            od = od + np.outer(a[:, k0 + 1], b[k0 + 1, :]).astype(np.float32)
        ref = ref + (ev + od)
    return ref


def inputs(kind, M, N, K, rng):
    if kind == "int8":
        return (rng.integers(0, 256, (M, K), dtype=np.uint8),
                rng.integers(-128, 128, (K, N), dtype=np.int8),
                rng.integers(-2**31, 2**31, (M, N),
                             dtype=np.int64).astype(np.int32))
    return (bf16_bits(rng.standard_normal((M, K))),
            bf16_bits(rng.standard_normal((K, N))),
            rng.standard_normal((M, N)).astype(np.float32))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=["int8", "bf16", "both"],
                    default="both")
    ap.add_argument("--size", type=int, nargs=3, default=[64, 256, 128],
                    metavar=("M", "N", "K"))
    ap.add_argument("--steps", action="store_true",
                    help="print every intermediate procedure")
    ap.add_argument("--emulate", action="store_true",
                    help="run through the emulation layer")
    args = ap.parse_args(argv)
    kinds = ["int8", "bf16"] if args.kind == "both" else [args.kind]
    M, N, K = args.size
    rng = np.random.default_rng(0)
    ok = True
    for kind in kinds:
        st = stages(gemm_bf16 if kind == "bf16" else gemm_u8s8)
        for what, p in (st if args.steps else st[-1:]):
            print(f"# {kind}: {what}\n{p}\n")
        f = st[-1][1].compile(emulate=args.emulate or None)
        A, B, C = inputs(kind, M, N, K, rng)
        got = C.copy()
        f(M, N, K, A, B, got)
        same = np.array_equal(got, reference(kind, A, B, C))
        how = ("emulating " + ", ".join(sorted(f.emulated))
               if f.emulated else "native")
        print(f"{kind} {M}x{N}x{K} ({how}): "
              f"{'bit-exact' if same else 'MISMATCH'}")
        ok &= same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
