"""The layer in numpy: the float64 reference the kernels are checked
against, and the im2col + BLAS baseline of the benchmark."""
from __future__ import annotations

import numpy as np


def reference(inp, wt, bias):
    """relu(bias + conv3x3) in float64, NHWC."""
    N, H2, W2, IC = inp.shape
    H, W = H2 - 2, W2 - 2
    OC = wt.shape[3]
    acc = np.zeros((N * H * W, OC), np.float64)
    for ky in range(3):
        for kx in range(3):
            x = inp[:, ky:ky + H, kx:kx + W, :].astype(np.float64)
            acc += x.reshape(N * H * W, IC) @ wt[ky, kx].astype(np.float64)
    return np.maximum(acc + bias, 0.0).reshape(N, H, W, OC)


def im2col_conv(inp, wt2d, bias, cols, out2d):
    """out = relu(patches @ wt2d + bias) with numpy and its BLAS."""
    N, H, W = cols.shape[:3]
    for ky in range(3):
        for kx in range(3):
            cols[:, :, :, ky, kx, :] = inp[:, ky:ky + H, kx:kx + W, :]
    np.matmul(cols.reshape(N * H * W, -1), wt2d, out=out2d)
    out2d += bias
    np.maximum(out2d, 0.0, out=out2d)
