"""Procedures shared by the C backend tests (each exercises one feature)."""
from __future__ import annotations

from exo_hl import (DRAM, DRAM_STATIC, config, f16, f32, f64, i8, i16, i32,
                    instr, proc, seq, size, ui8, ui16)
from kernels import gemm  # the suite's shared GEMM


@proc
def scale_vec(n: size, x: [f32][n], alpha: f32):
    for i in seq(0, n):
        x[i] = x[i] * alpha


@proc
def scale_rows_cols(m: size, n: size, A: f32[m, n], alpha: f32, beta: f32):
    for i in seq(0, m):
        scale_vec(n, A[i, 0:n], alpha)
    for j in seq(0, n):
        scale_vec(m, A[0:m, j], beta)


@proc
def row_sums(m: size, n: size, W: [f32][m, n], out: f32[m]):
    for i in seq(0, m):
        out[i] = 0.0
        row = W[i, 0:n]
        for j in seq(0, n):
            out[i] += row[j]


@proc
def dot(n: size, x: f32[n], y: f32[n], r: f32):
    r = 0.0
    for i in seq(0, n):
        r += x[i] * y[i]


@proc
def blur3(n: size, x: f32[n], y: f32[n]):
    assert n >= 3
    tmp: f32[n] @ DRAM
    w: f32[3] @ DRAM_STATIC
    w[0] = 0.25
    w[1] = 0.5
    w[2] = 0.25
    for i in seq(0, n):
        if i >= 1 and i < n - 1:
            tmp[i] = w[0] * x[i - 1] + w[1] * x[i] + w[2] * x[i + 1]
        else:
            tmp[i] = x[i]
    for i in seq(0, n):
        acc: f32 @ DRAM_STATIC
        acc = tmp[i]
        y[i] = acc


@proc
def casts(n: size, a: i8[n], b: i32[n], c: f64[n], d: f32[n], e: i16[n],
          f: ui8[n], g: ui16[n], h: f16[n]):
    for i in seq(0, n):
        t: i32
        t = a[i]
        b[i] = t * 3
        c[i] = b[i]
        d[i] = c[i] * 0.5
        e[i] = a[i]
        g[i] = f[i]
        h[i] = d[i]


@proc
def tiled_copy(n: size, x: f32[n], y: f32[n]):
    assert n % 4 == 0
    for io in seq(0, n / 4):
        for ii in seq(0, 4):
            y[4 * io + ii] = x[4 * io + (ii - 1) % 4] + x[(4 * io + ii) / 2]


@config
class Cfg:
    scale: f32
    count: int


@proc
def set_scale(s: f32):
    Cfg.scale = s


@proc
def scale_by_cfg(n: size, x: f32[n], s: f32):
    set_scale(s)
    for i in seq(0, n):
        x[i] = x[i] * Cfg.scale
    Cfg.count = Cfg.count + 1


@instr("exo_test_dbl(&{dst_data}, &{src_data}, {n});",
       c_global="static inline void exo_test_dbl(float *d, const float *s, "
                "int_fast32_t n) {\n"
                "    for (int_fast32_t i = 0; i < n; i++) d[i] = 2.0f * s[i];\n"
                "}")
def dbl(n: size, dst: [f32][n] @ DRAM, src: [f32][n] @ DRAM):
    for i in seq(0, n):
        dst[i] = 2.0 * src[i]


@proc
def dbl_rows(m: size, A: f32[m, 8], B: f32[m, 8]):
    for i in seq(0, m):
        dbl(8, B[i, 0:8], A[i, 0:8])


#: every public procedure above that is emitted as a C function
ALL = [gemm, scale_vec, scale_rows_cols, row_sums, dot, blur3, casts,
       tiled_copy, set_scale, scale_by_cfg, dbl_rows]
