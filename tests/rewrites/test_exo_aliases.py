"""Exo's spellings: each gives exactly the primitive's result, and rejects
what the primitive rejects (or what has no equivalent here)."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, par, proc, seq, size


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
         C: f32[M, N]):
    assert M % 4 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def two_stage(n: size, x: f32[n, 4], y: f32[n, 4], z: f32[n, 4]):
    for i in seq(0, n):
        for j in seq(0, 4):
            y[i, j] = x[i, j] * 2.0
            z[i, j] = x[i, j] + 1.0


@proc
def with_tmp(n: size, x: f32[n, 8], y: f32[n, 8]):
    for i in seq(0, n):
        for j in seq(0, 8):
            t: f32
            t = x[i, j] * 2.0
            y[i, j] = t + 1.0


@proc
def two_loops(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = x[i] * 2.0
    for i in seq(0, n):
        y[i] = x[i] + 1.0


SIZES = [{"M": 4, "N": 3, "K": 2}, {"M": 8, "N": 5, "K": 3}]


# -- divide_loop -------------------------------------------------------
@pytest.mark.parametrize("tail", ["guard", "cut"])
def test_divide_loop_is_split(tail, equiv):
    p = gemm.divide_loop("j", 4, ["jo", "ji"], tail=tail)
    assert str(p) == str(gemm.split("j", 4, "jo", "ji", tail=tail))
    equiv(gemm, p, SIZES)


def test_divide_loop_perfect(equiv):
    p = gemm.divide_loop("i", 4, ["io", "ii"], perfect=True)
    assert str(p) == str(gemm.split("i", 4, "io", "ii", tail="perfect"))
    assert "for ii in seq(0, 4):" in str(p)
    equiv(gemm, p, SIZES)


def test_divide_loop_rejects():
    with pytest.raises(SchedulingError, match="divisible|perfect|prove"):
        gemm.divide_loop("j", 4, ["jo", "ji"], perfect=True)  # N % 4 unknown
    with pytest.raises(SchedulingError, match="cut_and_guard"):
        gemm.divide_loop("j", 4, ["jo", "ji"], tail="cut_and_guard")
    with pytest.raises(SchedulingError, match="tail"):
        gemm.divide_loop("j", 4, ["jo", "ji"], tail="mask")
    with pytest.raises(SchedulingError, match="two names"):
        gemm.divide_loop("j", 4, "jo ji")


# -- reorder_loops -----------------------------------------------------
def test_reorder_loops_two_names(equiv):
    p = gemm.reorder_loops("j k")
    assert str(p) == str(gemm.reorder("j", "k"))
    equiv(gemm, p, SIZES)
    assert str(gemm.reorder_loops(gemm.find_loop("j"))) == str(p)
    assert str(gemm.reorder_loops("j")) == str(p)


def test_reorder_loops_rejects():
    with pytest.raises(SchedulingError):
        gemm.reorder_loops("i k")       # k is not directly inside i

    @proc
    def tri(n: size, x: f32[n, n]):
        for i in seq(0, n):
            for j in seq(0, i):
                x[i, j] = 0.0
    with pytest.raises(SchedulingError):
        tri.reorder_loops("i j")        # inner bound depends on i


# -- fission / autofission ---------------------------------------------
def test_fission_at_gap(equiv):
    gap = two_stage.find("y[_] = _").after()
    p = two_stage.fission(gap, n_lifts=2)
    assert str(p) == str(two_stage.fission_after("y[_] = _", n_lifts=2))
    assert str(p).count("for i in seq(0, n):") == 2
    equiv(two_stage, p, [{"n": 1}, {"n": 3}])
    q = two_stage.fission(two_stage.find("z[_] = _").before(), n_lifts=2)
    assert str(q) == str(p)
    assert str(two_stage.autofission(gap, n_lifts=2)) == str(p)


def test_fission_rejects():
    @proc
    def dep(n: size, x: f32[n + 1]):
        for i in seq(0, n):
            x[i] = 1.0
            x[i + 1] = x[i] + 2.0
    with pytest.raises(SchedulingError, match="cannot be split"):
        dep.fission(dep.find("x[_] = 1.0").after())
    with pytest.raises(SchedulingError, match="nothing precedes the gap"):
        two_stage.fission(two_stage.find("y[_] = _").before())


# -- autolift_alloc ----------------------------------------------------
def test_autolift_alloc_adds_dims(equiv, assert_roundtrip):
    p = with_tmp.autolift_alloc("t : _", n_lifts=2)
    manual = (with_tmp.expand_dim("t", 8, "j").lift_alloc("t : _")
              .expand_dim("t", "n", "i").lift_alloc("t : _"))
    assert str(p) == str(manual)
    assert str(p) == """\
def with_tmp(n: size, x: f32[n, 8] @ DRAM, y: f32[n, 8] @ DRAM):
    t: f32[n, 8] @ DRAM
    for i in seq(0, n):
        for j in seq(0, 8):
            t[i, j] = x[i, j] * 2.0
            y[i, j] = t[i, j] + 1.0"""
    assert_roundtrip(p)
    equiv(with_tmp, p, [{"n": 1}, {"n": 3}])
    # then the loops can be split apart, which the scalar forbade
    q = p.fission(p.find("t = _").after(), n_lifts=2)
    equiv(with_tmp, q, [{"n": 2}])


def test_autolift_alloc_nonzero_lower_bound(equiv):
    @proc
    def off(n: size, x: f32[n + 2], y: f32[n + 2]):
        for i in seq(2, n + 2):
            t: f32
            t = x[i] * 2.0
            y[i] = t
    p = off.autolift_alloc("t : _")
    assert "t: f32[n + 2 - 2]" in str(p) or "t: f32[n]" in str(p)
    equiv(off, p, [{"n": 1}, {"n": 4}])


def test_autolift_alloc_rejects():
    with pytest.raises(SchedulingError, match="keep_dims"):
        with_tmp.autolift_alloc("t : _", keep_dims=False)
    with pytest.raises(SchedulingError, match="only inside 2"):
        with_tmp.autolift_alloc("t : _", n_lifts=3)
    with pytest.raises(SchedulingError, match="not an allocation"):
        with_tmp.autolift_alloc("x")

    @proc
    def tri(n: size, x: f32[n, n]):
        for i in seq(0, n):
            for j in seq(0, i):
                t: f32
                t = x[i, j]
                x[i, j] = t * 2.0
    with pytest.raises(SchedulingError):
        tri.autolift_alloc("t : _", n_lifts=2)   # size i depends on i


# -- the rest: same result as the primitive ------------------------------
def test_fuse_is_fuse_loop(equiv):
    p = two_loops.fuse("i", "i #1")
    assert str(p) == str(two_loops.fuse_loop("i", "i #1"))
    equiv(two_loops, p, [{"n": 3}])

    @proc
    def rev(n: size, x: f32[n + 1], y: f32[n]):
        for i in seq(0, n):
            x[i] = 2.0
        for i in seq(0, n):
            y[i] = x[i + 1]
    with pytest.raises(SchedulingError):
        rev.fuse("i", "i #1")


def test_parallelize_loop_is_parallelize():
    p = two_loops.parallelize_loop("i")
    assert str(p) == str(two_loops.parallelize("i"))
    assert "par(0, n)" in str(p)

    @proc
    def scan(n: size, x: f32[n + 1]):
        for i in seq(0, n):
            x[i + 1] = x[i] + 1.0
    with pytest.raises(SchedulingError):
        scan.parallelize_loop("i")


def test_unroll_loop_without_factor_is_unroll(equiv):
    @proc
    def four(x: f32[4]):
        for i in seq(0, 4):
            x[i] = x[i] + 1.0
    p = four.unroll_loop("i")
    assert str(p) == str(four.unroll("i"))
    assert "for" not in str(p).split("\n", 1)[1]
    equiv(four, p, [{}])
    with pytest.raises(SchedulingError):
        two_loops.unroll_loop("i")      # no constant trip count


def test_write_config_at_gap():
    from exo_hl import config, index

    @config
    class Cfg:
        s: index

    @proc
    def ld(n: size, x: f32[n]):
        for i in seq(0, n):
            x[i] = 1.0
    g = ld.find_loop("i").before()
    p = ld.write_config(g, Cfg, "s", "n")
    assert str(p) == str(ld.configwrite_at("i", Cfg, "s", "n", before=True))
    assert "Cfg.s = n" in str(p)
    p2 = ld.write_config(ld.find_loop("i").after(), Cfg, "s", "n")
    assert str(p2) == str(ld.configwrite_at("i", Cfg, "s", "n"))
    with pytest.raises(SchedulingError):
        ld.write_config(g, Cfg, "s", "1.5")
    with pytest.raises(SchedulingError, match="gap cursor"):
        ld.configwrite_at(g, Cfg, "s", "n", before=True)


# -- Exo's AVX2 6x16 SGEMM micro-kernel, step by step in Exo's spellings --
@proc
def rank_k_reduce_6x16(K: size, A: f32[6, K], B: f32[K, 16], C: f32[6, 16]):
    for i in seq(0, 6):
        for j in seq(0, 16):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def test_exo_avx2_sgemm_microkernel_port(equiv):
    from exo_hl.hw_libs.avx2 import (AVX2, mm256_broadcast_ss,
                                     mm256_fmadd_ps, mm256_loadu_ps,
                                     mm256_storeu_ps)
    avx = rank_k_reduce_6x16.rename("rank_k_reduce_6x16_scheduled")
    avx = avx.reorder_loops("j k")
    avx = avx.reorder_loops("i k")
    avx = avx.divide_loop("j", 8, ["jo", "ji"], perfect=True)
    # C stays in registers across the k loop
    avx = avx.stage_mem("for k in _: _", "C[0:6, 0:16]", "C_reg")
    avx = avx.simplify()
    avx = avx.divide_loop("for i1 in _: _ #0", 8, ["i1o", "i1i"], perfect=True)
    avx = avx.divide_loop("for i1 in _: _ #0", 8, ["i1o", "i1i"], perfect=True)
    avx = avx.divide_dim("C_reg : _", 1, 8)
    avx = avx.set_memory("C_reg", AVX2)
    avx = avx.replace("for i1i in _: _ #0", mm256_loadu_ps)
    avx = avx.replace("for i1i in _: _ #0", mm256_storeu_ps)
    # B: one row of 16 per k, loaded once (hoisted out of i)
    avx = avx.bind_expr("B[_]", "B_reg")
    avx = avx.autolift_alloc("B_reg : _", n_lifts=2)
    avx = avx.lift_alloc("B_reg : _")
    avx = avx.fission(avx.find("B_reg = _").after(), n_lifts=3)
    avx = avx.remove_loop("for i in _: _ #0")
    avx = avx.set_memory("B_reg", AVX2)
    avx = avx.replace("for ji in _: _ #0", mm256_loadu_ps)
    # A: broadcast once per (k, i), hoisted out of jo
    avx = avx.bind_expr("A[_]", "A_reg")
    avx = avx.autolift_alloc("A_reg : _", n_lifts=1)
    avx = avx.lift_alloc("A_reg : _")
    avx = avx.fission(avx.find("A_reg = _").after(), n_lifts=2)
    avx = avx.remove_loop(avx.find("A_reg = _").parent().parent())
    avx = avx.set_memory("A_reg", AVX2)
    avx = avx.replace(avx.find("A_reg = _").parent(), mm256_broadcast_ss)
    avx = avx.replace(avx.find("C_reg += _").parent(), mm256_fmadd_ps)
    assert str(avx) == """\
def rank_k_reduce_6x16_scheduled(K: size, A: f32[6, K] @ DRAM,
                                 B: f32[K, 16] @ DRAM, C: f32[6, 16] @ DRAM):
    C_reg: f32[6, 2, 8] @ AVX2
    for i0 in seq(0, 6):
        for i1o in seq(0, 2):
            mm256_loadu_ps(C_reg[i0, i1o, 0:8], C[i0, 8 * i1o:8 * i1o + 8])
    for k in seq(0, K):
        B_reg: f32[2, 8] @ AVX2
        for jo in seq(0, 2):
            mm256_loadu_ps(B_reg[jo, 0:8], B[k, 8 * jo:8 * jo + 8])
        for i in seq(0, 6):
            A_reg: f32[8] @ AVX2
            mm256_broadcast_ss(A_reg[0:8], A[i, k:k + 1])
            for jo in seq(0, 2):
                mm256_fmadd_ps(C_reg[i, jo, 0:8], A_reg[0:8], B_reg[jo, 0:8])
    for i0 in seq(0, 6):
        for i1o in seq(0, 2):
            mm256_storeu_ps(C[i0, 8 * i1o:8 * i1o + 8], C_reg[i0, i1o, 0:8])"""
    assert avx.is_eq(rank_k_reduce_6x16)
    equiv(rank_k_reduce_6x16, avx, [{"K": 1}, {"K": 7}])


# -- an x86 conv layer (Exo's apps/x86/conv style), vector width 8 -------
@proc
def conv(N: size, H: size, W: size, C: size, K: size,
         inp: f32[N, H + 2, W + 2, C], wt: f32[3, 3, C, K], bias: f32[K],
         out: f32[N, H, W, K]):
    assert K % 8 == 0
    for n in seq(0, N):
        for oy in seq(0, H):
            for ox in seq(0, W):
                for oc in seq(0, K):
                    res: f32
                    res = bias[oc]
                    for ky in seq(0, 3):
                        for kx in seq(0, 3):
                            for kc in seq(0, C):
                                res += (wt[ky, kx, kc, oc]
                                        * inp[n, oy + ky, ox + kx, kc])
                    out[n, oy, ox, oc] = res


def test_exo_x86_conv_port(equiv):
    from exo_hl.hw_libs.avx2 import (AVX2, mm256_broadcast_ss,
                                     mm256_fmadd_ps, mm256_loadu_ps,
                                     mm256_storeu_ps)
    p = conv.rename("conv_avx2")
    p = p.divide_loop("oc", 8, ["oco", "oci"], perfect=True)
    # a scalar accumulator shared by the 8 lanes cannot be split apart:
    # in scope of the cut only, and without a dimension per lane
    with pytest.raises(SchedulingError, match="lift the allocation"):
        p.fission(p.find("res = _").after())
    q = p.lift_alloc("res : _")
    with pytest.raises(SchedulingError, match="cannot be split"):
        q.fission(q.find("res = _").after())
    p = p.autolift_alloc("res : _", n_lifts=1)
    p = p.fission(p.find("res = _").after())
    p = p.fission(p.find("out = _").before())
    p = p.reorder_loops("oci ky")
    p = p.reorder_loops("oci kx")
    p = p.reorder_loops("oci kc")
    p = p.set_memory("res", AVX2)
    p = p.replace(p.find("res = _").parent(), mm256_loadu_ps)
    p = p.replace(p.find("out = _").parent(), mm256_storeu_ps)
    p = p.bind_expr("inp[_]", "in_vec")
    p = p.autolift_alloc("in_vec : _", n_lifts=1)
    p = p.fission(p.find("in_vec = _").after())
    p = p.set_memory("in_vec", AVX2)
    p = p.replace(p.find("in_vec = _").parent(), mm256_broadcast_ss)
    p = p.bind_expr("wt[_]", "w_vec")
    p = p.autolift_alloc("w_vec : _", n_lifts=1)
    p = p.fission(p.find("w_vec = _").after())
    p = p.set_memory("w_vec", AVX2)
    p = p.replace(p.find("w_vec = _").parent(), mm256_loadu_ps)
    p = p.replace(p.find("res += _").parent(), mm256_fmadd_ps)
    assert str(p) == """\
def conv_avx2(N: size, H: size, W: size, C: size, K: size,
              inp: f32[N, H + 2, W + 2, C] @ DRAM, wt: f32[3, 3, C, K] @ DRAM,
              bias: f32[K] @ DRAM, out: f32[N, H, W, K] @ DRAM):
    assert K % 8 == 0
    for n in seq(0, N):
        for oy in seq(0, H):
            for ox in seq(0, W):
                for oco in seq(0, K / 8):
                    res: f32[8] @ AVX2
                    mm256_loadu_ps(res[0:8], bias[8 * oco:8 * oco + 8])
                    for ky in seq(0, 3):
                        for kx in seq(0, 3):
                            for kc in seq(0, C):
                                in_vec: f32[8] @ AVX2
                                mm256_broadcast_ss(
                                    in_vec[0:8],
                                    inp[n, oy + ky, ox + kx, kc:kc + 1])
                                w_vec: f32[8] @ AVX2
                                mm256_loadu_ps(
                                    w_vec[0:8],
                                    wt[ky, kx, kc, 8 * oco:8 * oco + 8])
                                mm256_fmadd_ps(res[0:8], w_vec[0:8],
                                               in_vec[0:8])
                    mm256_storeu_ps(out[n, oy, ox, 8 * oco:8 * oco + 8],
                                    res[0:8])"""
    equiv(conv, p, [{"N": 1, "H": 2, "W": 3, "C": 2, "K": 8},
                    {"N": 2, "H": 1, "W": 2, "C": 3, "K": 16}])


def test_reorder_stmts_of_a_block(equiv):
    b = two_stage.find("y[_] = _").expand(0, 1)
    p = two_stage.reorder_stmts(b)
    assert str(p) == str(two_stage.reorder_stmts("y[_] = _", "z[_] = _"))
    equiv(two_stage, p, [{"n": 2}])
    with pytest.raises(SchedulingError, match="exactly two"):
        two_stage.reorder_stmts(two_stage.find("y[_] = _").as_block())

    @proc
    def dep(x: f32[2]):
        x[0] = 1.0
        x[1] = x[0]
    with pytest.raises(SchedulingError):
        dep.reorder_stmts(dep.find("x[0] = _").expand(0, 1))


def test_mult_loops_nest_pattern(equiv):
    @proc
    def grid(n: size, x: f32[n, 4]):
        for i in seq(0, n):
            for j in seq(0, 4):
                x[i, j] = 1.0
    p = grid.mult_loops("i j", "ij")
    assert str(p) == str(grid.mult_loops("i", "j", "ij"))
    equiv(grid, p, [{"n": 3}])
    with pytest.raises(SchedulingError, match="two loop names"):
        grid.mult_loops("i", "ij")
