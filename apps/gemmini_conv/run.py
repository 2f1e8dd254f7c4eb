"""Print the Gemmini conv schedule, check it against numpy, count the
simulated instructions and configuration writes.

    python run.py                     # the layers' channels, batch 1, D = 7
    python run.py --full              # the paper's layers, batch 4
    python run.py --layer 28x128x128 --batch 4 --dim 28
    python run.py --relu              # the ReLU variant
    python run.py --steps             # every intermediate procedure
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from apps.gemmini_conv.conv import (BATCH, LAYERS, conv,  # noqa: E402
                                    conv_relu, stages)
from exo_hl.hw_libs.gemmini import (config_count, instr_count,  # noqa: E402
                                    reset_instr_count)


def reference(inp, w, bias, scale, relu=False):
    """numpy: zero padding 1, i32 accumulation of the nine taps plus bias,
    f32 scale, round half to even, ReLU, saturate to i8."""
    B, D, _, IC = inp.shape
    x = np.pad(inp.astype(np.int32), ((0, 0), (1, 1), (1, 1), (0, 0)))
    acc = np.broadcast_to(bias.astype(np.int32),
                          (B, D, D, w.shape[3])).copy()
    for ky in range(3):
        for kx in range(3):
            acc += (x[:, ky:ky + D, kx:kx + D, :].reshape(-1, IC)
                    @ w[ky, kx].astype(np.int32)).reshape(acc.shape)
    y = np.rint(acc.astype(np.float32) * np.float32(scale))
    if relu:
        y = np.maximum(y, 0)
    return np.clip(y, -128, 127).astype(np.int8)


def inputs(B, D, IC, OC, rng):
    inp = rng.integers(-128, 128, (B, D, D, IC)).astype(np.int8)
    w = rng.integers(-128, 128, (3, 3, IC, OC)).astype(np.int8)
    bias = rng.integers(-20000, 20000, OC).astype(np.int32)
    return inp, w, bias


def default_scale(IC):
    """A scale that leaves most outputs unsaturated: the accumulator's
    spread grows with the square root of the 9 * IC products."""
    return float(np.float32(1.0 / (40.0 * np.sqrt(9.0 * IC))))


def _args(B, D, IC, OC, scale, inp, w, bias, out):
    return dict(B=B, D=D, IC=IC, OC=OC, scale=np.array([scale], np.float32),
                inp=inp, w=w, bias=bias, out=out)


def run_compiled(p, B, D, IC, OC, scale, inp, w, bias):
    """(output of the compiled kernel, instructions, configuration writes
    the C model issued)."""
    f = p.compile()
    reset_instr_count(f)
    out = np.zeros((B, D, D, OC), np.int8)
    f(**_args(B, D, IC, OC, scale, inp, w, bias, out))
    return out, instr_count(f), config_count(f)


def run_interpreted(p, B, D, IC, OC, scale, inp, w, bias):
    out = np.zeros((B, D, D, OC), np.int8)
    p.interpret(**_args(B, D, IC, OC, scale, inp, w, bias, out))
    return out


def tiles_and_taps(D):
    """(accumulator tiles, tile-taps inside the image) per image and
    16-channel output block. An output row has 2 border tiles of one
    column and (D - 2) / 16 rounded up interior tiles; a border tile has 2
    horizontal taps inside the image, an interior tile 3. Summed over the
    output rows, 3D - 2 vertical taps are inside the image (D >= 2)."""
    interior = -(-(D - 2) // 16)
    return D * (2 + interior), (3 * D - 2) * (2 * 2 + 3 * interior)


def naive_count(B, D, IC, OC):
    """Instructions of the same tiling with nothing shared: per tile a
    configured bias load and a configured store (4), per tile-tap inside
    the image and 16-channel input block a configured input load, a
    configured weight load and preload + compute (6)."""
    tiles, taps = tiles_and_taps(D)
    return B * (OC // 16) * (tiles * 4 + taps * (IC // 16) * 6)


def naive_config_count(B, D, IC, OC):
    """Configuration writes of the naive count (one per load and store)."""
    tiles, taps = tiles_and_taps(D)
    return B * (OC // 16) * (tiles * 2 + taps * (IC // 16) * 2)


def expected_count(B, D, IC, OC):
    """Instructions of the schedule: 4 configuration writes, then per tile
    a bias load and a store, per tile-tap and block two loads and the
    matmul (preload + compute)."""
    tiles, taps = tiles_and_taps(D)
    return 4 + B * (OC // 16) * (tiles * 2 + taps * (IC // 16) * 4)


def _body_lines(p):
    lines = str(p).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("def "))
    return "\n".join(lines[start:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", action="store_true")
    ap.add_argument("--layer", default="all",
                    help="DxOCxIC, or 'all' for the ResNet-50 layers")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dim", type=int, default=7,
                    help="cut D to this (0: the layer's own)")
    ap.add_argument("--full", action="store_true",
                    help="the paper's sizes: --batch 4 --dim 0")
    ap.add_argument("--relu", action="store_true")
    ap.add_argument("--interpret", action="store_true",
                    help="also run interpret() (slow on large layers)")
    args = ap.parse_args(argv)
    if args.full:
        args.batch, args.dim = BATCH, 0

    st = stages(conv_relu if args.relu else conv)
    if args.steps:
        for what, q in st:
            print(f"# --- {what}")
            print(_body_lines(q))
            print()
    p = st[-1][1].rename("conv_gemmini")
    print(f"# scheduled kernel ({len(st) - 1} stages of checked rewrites; "
          "no unchecked step)")
    print(p)
    print()
    layers = (LAYERS if args.layer == "all" else
              [tuple(int(x) for x in args.layer.split("x"))])
    rng = np.random.default_rng(0)
    ok = True
    print("| B, D, OC, IC | instructions | config writes "
          "| naive per-tile count | naive config writes | numpy |")
    print("|---|---:|---:|---:|---:|---|")
    for D, OC, IC in layers:
        B, D = args.batch, (min(D, args.dim) if args.dim else D)
        inp, w, bias = inputs(B, D, IC, OC, rng)
        scale = default_scale(IC)
        want = reference(inp, w, bias, scale, args.relu)
        out, n, n_cfg = run_compiled(p, B, D, IC, OC, scale, inp, w, bias)
        same = np.array_equal(out, want)
        if args.interpret:
            same = same and np.array_equal(
                run_interpreted(p, B, D, IC, OC, scale, inp, w, bias), want)
        ok = ok and same
        print(f"| {B}, {D}, {OC}, {IC} | {n} | {n_cfg} | "
              f"{naive_count(B, D, IC, OC)} | "
              f"{naive_config_count(B, D, IC, OC)} | "
              f"{'equal' if same else 'DIFFERENT'} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
