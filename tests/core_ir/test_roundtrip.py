"""Round trip: ``str(p)`` parses back to an alpha-equal, identically printed
procedure, for every construct of the surface language."""
from __future__ import annotations

import pytest

from exo_hl import (DRAM, DRAM_STATIC, Memory, R, config, extern, f32, f64,
                    i8, i32, index, instr, par, proc, seq, size, stride)
from exo_hl.api import Procedure
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.printer import alpha_equal
from exo_hl.core_ir.syms import Sym
from exo_hl.core_ir.traversal import fresh_copy


class SCRATCH(DRAM):
    """A user memory (only its name matters to the printer)."""


@config
class CfgLd:
    src_stride: stride
    scale: f32
    on: bool


@extern("my_sq({0})", c_global="float my_sq(float x);")
def my_sq(x):
    return x * x


@instr("config_ld({src_stride});", c_global="void config_ld(long s);")
def config_ld(src_stride: stride):
    CfgLd.src_stride = src_stride


@instr("mvin({src}.data, &{dst_data}, {m}, {n});", c_global="void mvin(const void *, void *, long, long);")
def ld_data(n: size, m: size, src: [i8][n, m] @ DRAM,
            dst: [i8][n, 16] @ SCRATCH):
    assert n <= 16 and m <= 16
    assert CfgLd.src_stride == stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
         C: f32[M, N] @ DRAM):
    assert M % 4 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def scal(n: size, a: R @ DRAM, x: [R][n] @ DRAM):
    for i in seq(0, n):
        x[i] = a * x[i]


@proc
def uses_everything(n: size, m: size, flag: bool, off: index,
                    A: f32[n, 16] @ DRAM, x: [f32][n] @ DRAM, s: f32 @ DRAM,
                    big: f64[4] @ DRAM, q: i8[n, 16] @ DRAM):
    assert n % 4 == 0 and n >= 8
    assert m > 2 or flag
    assert stride(x, 0) == 1
    t: f32[16, 16] @ DRAM_STATIC
    u: f32
    u = 0.5
    w: i32[n] @ SCRATCH
    sp: i8[16, 16] @ SCRATCH
    CfgLd.scale = s
    CfgLd.on = not flag
    for i in par(0, n):
        if i < 2:
            A[i, 0] += x[i] * s
        elif i == 4 or flag and i > 5:
            A[i, 1] = -(A[i, 2] + x[i]) * (s - 1.5) / 3.0
        elif not (i < n / 2 - 1):
            A[i, 2] = my_sq(A[i, 3]) + select(s, 0.0, A[i, 4], -2.0)
        else:
            pass
    row = A[0, 0:16]
    sub = row[2:8]
    scal(16, s, row)
    scal(n, s, A[0:n, 3])
    scal(6, u, sub)
    scal(4, s, x[0:4])
    for j in seq(0, n / 4 - 1):
        x[(j * 4 + 1) % 4] = CfgLd.scale + u
        w[j] = -7
    big[off % 4] += relu(t[0, 1])
    config_ld(stride(q, 0))
    ld_data(4, 8, q[0:4, 0:8], sp[0:4, :])
    if CfgLd.on:
        s = s * CfgLd.scale


@proc
def calls_gemm(A: f32[8, 8] @ DRAM, C: f32[8, 8] @ DRAM):
    gemm(8, 8, 8, A, A, C)
    for i in seq(0, 8):
        C[i, i] = 0.0


ALL = [gemm, scal, uses_everything, calls_gemm, config_ld, ld_data]


@pytest.mark.parametrize("p", ALL, ids=lambda p: p.name())
def test_roundtrip(p, assert_roundtrip):
    q = assert_roundtrip(p)
    assert q.ir().instr == p.ir().instr
    assert q.name() == p.name()


def test_instr_text_has_decorator():
    text = str(ld_data)
    assert text.startswith(
        '@instr("mvin({src}.data, &{dst_data}, {m}, {n});", '
        'c_global="void mvin(const void *, void *, long, long);")\n'
        'def ld_data('.replace(", c_global", ",\n       c_global"))


def test_roundtrip_after_duplicating_a_block(assert_roundtrip):
    """Two copies of a loop nest (as unroll/inline make) reparse equal."""
    body = gemm.ir().body
    twice = gemm.ir().update(body=body + fresh_copy(body))
    q = assert_roundtrip(Procedure(twice))
    assert len(q.ir().body) == 2


def test_roundtrip_with_shadowing_alloc(assert_roundtrip):
    """An allocation shadowing a visible buffer of the same name."""
    p = scal.ir()
    loop = p.body[0]
    t1, t2 = Sym("t"), Sym("t")
    si = loop.srcinfo
    inner = (IR.Alloc(t2, IR.F32, DRAM, srcinfo=si),
             IR.Assign(t2, IR.F32, (), IR.Const(1.0, type=IR.Num), srcinfo=si),
             IR.Assign(t1, IR.F32, (), IR.Read(t2, (), type=IR.F32),
                       srcinfo=si))
    body = (IR.Alloc(t1, IR.F32, DRAM, srcinfo=si),
            loop.update(body=loop.body + inner))
    q = Procedure(p.update(body=body))
    text = str(q)
    assert "t_1: f32 @ DRAM" in text and "t = t_1" in text
    r = assert_roundtrip(q)
    assert alpha_equal(r.ir(), q.ir())


@proc
def branch_locals(n: size, x: f32[n] @ DRAM, flag: bool):
    for i in seq(0, n):
        if flag:
            t: f32
            t = x[i]
            x[i] = t * t
        else:
            t: f32
            t = -x[i]
            x[i] = t
    for i in seq(0, n):
        x[i] += 1.0


def test_sibling_scopes_reuse_names(assert_roundtrip):
    text = str(branch_locals)
    assert "t_1" not in text and "i_1" not in text
    assert text.count("t: f32 @ DRAM") == 2
    assert_roundtrip(branch_locals)
