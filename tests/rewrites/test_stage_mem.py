"""stage_mem: load / re-index / store around a block, proven to cover it."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (DRAM_STATIC, SchedulingError, config, f32, i8, index,
                    proc, seq, size)


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
         C: f32[M, N]):
    assert M % 4 == 0
    assert N % 16 == 0
    for io in seq(0, M / 4):
        for jo in seq(0, N / 16):
            for k in seq(0, K):
                for ii in seq(0, 4):
                    for ji in seq(0, 16):
                        C[4 * io + ii, 16 * jo + ji] += \
                            A[4 * io + ii, k] * B[k, 16 * jo + ji]


GEMM_SIZES = [{"M": 4, "N": 16, "K": 1}, {"M": 8, "N": 32, "K": 3}]
TILE = "C[4 * io:4 * io + 4, 16 * jo:16 * jo + 16]"


def test_gemm_register_block(equiv, assert_roundtrip):
    p = gemm.stage_mem(gemm.find_loop("k"), TILE, "C_reg")
    assert str(p) == """\
def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
         C: f32[M, N] @ DRAM):
    assert M % 4 == 0
    assert N % 16 == 0
    for io in seq(0, M / 4):
        for jo in seq(0, N / 16):
            C_reg: f32[4, 16] @ DRAM
            for i0 in seq(0, 4):
                for i1 in seq(0, 16):
                    C_reg[i0, i1] = C[4 * io + i0, 16 * jo + i1]
            for k in seq(0, K):
                for ii in seq(0, 4):
                    for ji in seq(0, 16):
                        C_reg[ii, ji] += A[4 * io + ii, k] * B[k, 16 * jo + ji]
            for i0 in seq(0, 4):
                for i1 in seq(0, 16):
                    C[4 * io + i0, 16 * jo + i1] = C_reg[i0, i1]"""
    assert_roundtrip(p)
    q = p.set_memory("C_reg", DRAM_STATIC)
    assert "C_reg: f32[4, 16] @ DRAM_STATIC" in str(q)
    assert "float C_reg[64];" in q.c_code_str()
    equiv(gemm, q, GEMM_SIZES)
    # cursors into the block follow it
    assert q.forward(gemm.find_loop("k")).node() is \
        q.ir().body[0].body[0].body[2]


def test_gemm_accum(equiv):
    p = gemm.stage_mem(gemm.find_loop("k"), TILE, "acc", accum=True)
    text = str(p)
    assert "acc[i0, i1] = 0.0" in text
    assert "C[4 * io + i0, 16 * jo + i1] += acc[i0, i1]" in text
    assert "= C[" not in text  # no load
    equiv(gemm, p, GEMM_SIZES)


def test_point_window(equiv):
    p = gemm.stage_mem(gemm.find_loop("ji"), "C[4 * io + ii, 16 * jo:16 * jo + 16]",
                       "row")
    text = str(p)
    assert "row: f32[16] @ DRAM" in text
    assert "row[ji] += A[4 * io + ii, k] * B[k, 16 * jo + ji]" in text
    equiv(gemm, p, GEMM_SIZES[:1])


def test_window_must_cover():
    with pytest.raises(SchedulingError, match="does not cover") as e:
        gemm.stage_mem(gemm.find_loop("k"),
                       "C[4 * io:4 * io + 2, 16 * jo:16 * jo + 16]", "C_reg")
    assert "gemm" in str(e.value) and "C[4 * io + ii, 16 * jo + ji]" in \
        str(e.value)
    # a point that differs from the accessed row
    with pytest.raises(SchedulingError, match="does not cover"):
        gemm.stage_mem(gemm.find_loop("ji"),
                       "C[4 * io, 16 * jo:16 * jo + 16]", "row")


def test_window_in_bounds():
    # a point of the window must lie in the buffer
    with pytest.raises(SchedulingError, match="out of bounds"):
        gemm.stage_mem(gemm.find_loop("ji"),
                       "C[4 * io + ii + 4, 16 * jo:16 * jo + 16]", "row")
    # a slice may run past the buffer: its copies are guarded
    p = gemm.stage_mem(gemm.find_loop("k"),
                       "C[4 * io:4 * io + 8, 16 * jo:16 * jo + 16]", "C_reg")
    assert "if i0 < M - 4 * io:" in str(p)


@proc
def aliased(n: size, x: f32[n, 8], y: f32[8]):
    w = x[0, 0:8]
    for j in seq(0, 8):
        x[0, j] = y[j]
        y[j] = w[j]


def test_alias_through_window_rejected():
    with pytest.raises(SchedulingError, match="aliasing") as e:
        aliased.stage_mem(aliased.find_loop("j"), "x[0, 0:8]", "xs")
    assert "'w'" in str(e.value)


@proc
def reads_c(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] += y[i] * x[i]


def test_accum_requires_reduce_only(equiv):
    with pytest.raises(SchedulingError, match="only reduce"):
        reads_c.stage_mem(reads_c.find_loop("i"), "x[0:n]", "t", accum=True)
    # without accum it is fine (and both loaded and stored)
    p = reads_c.stage_mem(reads_c.find_loop("i"), "x[0:n]", "t")
    assert "t[i0] = x[i0]" in str(p) and "x[i0] = t[i0]" in str(p)
    equiv(reads_c, p, [{"n": 1}, {"n": 5}])


@proc
def partial_write(x: f32[8], y: f32[8]):
    for i in seq(0, 2):
        x[i + 1] = y[i]


@proc
def full_write(x: f32[8], y: f32[8]):
    for i in seq(0, 4):
        x[i + 2] = y[i]


@proc
def cond_write(n: size, x: f32[8], y: f32[8]):
    for i in seq(0, 4):
        if i < n:
            x[i] = y[i]


def test_write_only_loads_unless_fully_overwritten(equiv):
    # the store writes back x[0:4]; x[0] and x[3] must hold their old values
    p = partial_write.stage_mem(partial_write.find_loop("i"), "x[0:4]", "t")
    assert "t[i0] = x[i0]" in str(p)
    equiv(partial_write, p, [{}])
    # every location of x[2:6] is written: no load
    q = full_write.stage_mem(full_write.find_loop("i"), "x[2:6]", "t")
    assert str(q).splitlines()[1:] == """\
    t: f32[4] @ DRAM
    for i in seq(0, 4):
        t[i] = y[i]
    for i0 in seq(0, 4):
        x[i0 + 2] = t[i0]""".splitlines()
    equiv(full_write, q, [{}])
    # a guarded write does not overwrite for sure
    r = cond_write.stage_mem(cond_write.find_loop("i"), "x[0:4]", "t")
    assert "t[i0] = x[i0]" in str(r)
    equiv(cond_write, r, [{"n": 1}, {"n": 9}])


@proc
def two(x: f32[4], y: f32[4]):
    x[0] = 1.0
    y[0] = 2.0


def test_untouched_buffer_and_bad_window():
    with pytest.raises(SchedulingError, match="no access of the block"):
        two.stage_mem(two.find("x[_] = _"), "y[0:1]", "t")
    with pytest.raises(SchedulingError, match="not defined"):
        two.stage_mem(two.find("x[_] = _"), "z[0:4]", "t")
    with pytest.raises(SchedulingError, match="already used"):
        two.stage_mem(two.find("x[_] = _"), "x[0:1]", "y")


@proc
def add1(x: [f32][4]):
    for i in seq(0, 4):
        x[i] += 1.0


@proc
def calls_add1(n: size, y: f32[n, 8]):
    for j in seq(0, n):
        add1(y[j, 2:6])


def test_windows_passed_to_calls(equiv):
    # the callee reduces into its parameter: load + store, window re-indexed
    p = calls_add1.stage_mem(calls_add1.find("add1(_)"), "y[j, 0:8]", "t")
    assert "add1(t[2:6])" in str(p) and "t[i0] = y[j, i0]" in str(p)
    equiv(calls_add1, p, [{"n": 2}])
    q = calls_add1.stage_mem(calls_add1.find("add1(_)"), "y[j, 2:6]", "t",
                             accum=True)
    assert "y[j, i0 + 2] += t[i0]" in str(q)
    equiv(calls_add1, q, [{"n": 2}])
    with pytest.raises(SchedulingError, match="does not cover"):
        calls_add1.stage_mem(calls_add1.find("add1(_)"), "y[j, 0:4]", "t")


@proc
def two_writes(n: size, x: f32[n], y: f32[4]):
    for i in seq(0, n):
        y[0] = x[i]
    y[1] = x[0]
    x[0] = 2.0


def test_block_pair_of_patterns_is_the_first_sibling_pair(equiv):
    # the first 'y[_] = _' is inside the loop; the block is the pair of
    # siblings 'y[1] = x[0]' .. 'x[0] = 2.0'
    p = two_writes.stage_mem(("y[_] = _", "x[_] = _"), "x[0]", "t")
    assert str(p).splitlines()[3:] == [
        "    t: f32 @ DRAM", "    t = x[0]", "    y[1] = t", "    t = 2.0",
        "    x[0] = t"]
    equiv(two_writes, p, [{"n": 3}])


# ----------------------------------------------------------------------
# load only when the block may read old values of the window
@proc
def write_then_read(x: f32[8], y: f32[8]):
    for i in seq(0, 4):
        x[i + 2] = y[i]
    for i in seq(0, 4):
        y[i] = x[i + 2] * 2.0
    x[3] += 1.0


@proc
def read_then_write(x: f32[8], y: f32[8]):
    y[0] = x[2]
    for i in seq(0, 4):
        x[i + 2] = y[i]


@proc
def reduce_then_write(x: f32[8], y: f32[8]):
    for i in seq(0, 4):
        x[i + 2] += y[i]
    for i in seq(0, 4):
        x[i + 2] = x[i + 2] * 2.0


@proc
def same_loop(x: f32[8], y: f32[8]):
    for i in seq(0, 4):
        x[i + 2] = y[i]
        y[i] = x[i + 2] + 1.0


def _block(p):
    return p.body()


def test_no_load_when_overwritten_before_read(equiv):
    p = write_then_read.stage_mem(_block(write_then_read), "x[2:6]", "t")
    assert str(p).splitlines()[1:] == """\
    t: f32[4] @ DRAM
    for i in seq(0, 4):
        t[i] = y[i]
    for i in seq(0, 4):
        y[i] = t[i] * 2.0
    t[1] += 1.0
    for i0 in seq(0, 4):
        x[i0 + 2] = t[i0]""".splitlines()
    equiv(write_then_read, p, [{}])


def test_load_when_read_or_reduced_first(equiv):
    for q in (read_then_write, reduce_then_write, same_loop):
        p = q.stage_mem(_block(q), "x[2:6]", "t")
        assert "t[i0] = x[i0 + 2]" in str(p), str(p)
        equiv(q, p, [{}])


@config
class CfgN:
    n: index


@proc
def cfg_bound(A: f32[8]):
    CfgN.n = 8
    CfgN.n = 2
    for x in seq(0, CfgN.n):
        A[x] = 1.0


@proc
def cfg_bound_plain(A: f32[8]):
    CfgN.n = 2
    for x in seq(0, CfgN.n):
        A[x] = 1.0


@proc
def cfg_bound_full(A: f32[8]):
    CfgN.n = 2
    CfgN.n = 8
    for x in seq(0, CfgN.n):
        A[x] = 1.0


def test_overwrite_is_proven_where_the_loop_runs(equiv):
    # the loop bound reads the field the block sets to 2 first: only A[0:2]
    # is written, whatever CfgN.n was before the block
    for q in (cfg_bound, cfg_bound_plain):
        blk = (q.find("CfgN.n = 2"), q.find_loop("x"))
        p = q.stage_mem(blk, "A[0:8]", "t")
        assert "t[i0] = A[i0]" in str(p), str(p)
        a = np.arange(8, dtype=np.float32)
        want = a.copy()
        q.interpret(want)
        for run in (p.interpret, p.compile()):
            got = a.copy()
            run(got)
            np.testing.assert_array_equal(got, want)
    # set to 8 in the block before the loop: the whole window is written
    blk = (cfg_bound_full.find("CfgN.n = 8"), cfg_bound_full.find_loop("x"))
    p = cfg_bound_full.stage_mem(blk, "A[0:8]", "t")
    assert "t[i0] = A[i0]" not in str(p)
    equiv(cfg_bound_full, p, [{}])


@proc
def cfg_offset(A: f32[8], y: f32[4]):
    CfgN.n = 0
    for x in seq(0, 4):
        A[x + CfgN.n] = y[x]
        CfgN.n = 4


def test_offset_written_in_the_block_keeps_the_load(equiv):
    # the offset changes between iterations: A[0] then A[5], A[6], A[7]
    blk = (cfg_offset.find("CfgN.n = 0"), cfg_offset.find_loop("x"))
    p = cfg_offset.stage_mem(blk, "A[0:8]", "t")
    assert "t[i0] = A[i0]" in str(p)
    equiv(cfg_offset, p, [{}])


@proc
def i8_acc(x: i8[4], y: i8[4]):
    for i in seq(0, 4):
        x[i] += y[i] * y[i]


def test_staged_integers_keep_their_values():
    # the staged buffer has the buffer's own precision: i8 wrapping of the
    # partial sums is the wrapping the buffer itself would do
    for accum in (False, True):
        p = i8_acc.stage_mem(i8_acc.find_loop("i"), "x[0:4]", "t",
                             accum=accum)
        assert "t: i8[4] @ DRAM" in str(p)
        y = np.array([100, -100, 11, -128], np.int8)
        x = np.array([127, -128, 5, 0], np.int8)
        want = x.copy()
        i8_acc.interpret(want, y)
        for run in (p.interpret, p.compile()):
            got = x.copy()
            run(got, y)
            np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------
# a window made in the block views the staged copy: not usable after it
@proc
def win_in_block(A: f32[8], y: f32[8]):
    w = A[2:6]
    w[0] = y[0]
    w[1] = w[0] + y[1]
    y[2] = A[3]


@proc
def win_chain(A: f32[8], y: f32[8]):
    w = A[2:6]
    v = w[1:3]
    v[0] = y[0]
    y[1] = v[1]


def test_window_bound_in_block_used_after_it_rejected():
    p = win_in_block
    # 'w' would view the staged copy, stored back and dead after the block
    with pytest.raises(SchedulingError, match="window 'w' is bound in the "
                       "block and used after it"):
        p.stage_mem((p.find("w = _"), p.find("w[_] = _ #0")), "A[2:6]", "As")
    # also through a window of that window
    q = win_chain
    with pytest.raises(SchedulingError, match="window 'v' is bound in the "
                       "block and used after it"):
        q.stage_mem((q.find("w = _"), q.find("v[_] = _")), "A[2:6]", "As")


def test_window_bound_in_block_with_all_uses_inside(equiv):
    p = win_in_block
    q = p.stage_mem((p.find("w = _"), p.find("w[_] = _ #1")), "A[2:6]", "As")
    assert str(q).splitlines()[1:] == """\
    As: f32[4] @ DRAM
    for i0 in seq(0, 4):
        As[i0] = A[i0 + 2]
    w = As[0:4]
    w[0] = y[0]
    w[1] = w[0] + y[1]
    for i0 in seq(0, 4):
        A[i0 + 2] = As[i0]
    y[2] = A[3]""".splitlines()
    equiv(p, q, [{}])


def test_stage_mem_accum_refuses_saturating_reduction():
    """accum=True sums into a zero-initialised copy and adds it back: for
    ``x += f`` (a float into an i8, truncated and saturated at each step)
    that changes the result (x = 38, F = [640422.6, 10.49, -0.54]: 126 in
    the original, -92 staged)."""
    @proc
    def sat(n: size, F: f32[n], x: i8[1]):
        for i in seq(0, n):
            x[0] += F[i]
    with pytest.raises(SchedulingError, match="truncates and saturates"):
        sat.stage_mem(sat.find_loop("i"), "x[0:1]", "xs", accum=True)
    # without accum the staged copy is loaded and stored back: exact
    q = sat.stage_mem(sat.find_loop("i"), "x[0:1]", "xs")
    F = np.array([640422.6, 10.49, -0.54], dtype=np.float32)
    outs = []
    for p in (sat, q):
        x = np.array([38], dtype=np.int8)
        p.interpret(3, F, x)
        outs.append(x[0])
    assert outs == [126, 126]
