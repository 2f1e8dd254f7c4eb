"""replace(block, sub_proc): unification, printed results, semantics,
rejections (non-matching bodies, element types, memories, preconditions)."""
from __future__ import annotations

import pytest

from exo_hl import (DRAM, R, SchedulingError, config, f16, f32, f64, instr,
                    par, proc, seq, size, stride)


class SCRATCH(DRAM):
    """A scratchpad (a DRAM subclass, so the C still runs on the host)."""


# ---------------------------------------------------------------------------
# sub-procedures

LD2D_C = """
static void ld2d_impl(const float *s, int_fast32_t ss, float *d,
                      int_fast32_t ds, int_fast32_t n, int_fast32_t m) {
    for (int_fast32_t i = 0; i < n; i++)
        for (int_fast32_t j = 0; j < m; j++)
            d[i * ds + j] = s[i * ss + j];
}
"""


@instr("ld2d_impl(&{src_data}, {src}.strides[0], &{dst_data}, "
       "{dst}.strides[0], {n}, {m});", LD2D_C)
def ld2d(n: size, m: size, src: [f32][n, m] @ DRAM,
         dst: [f32][n, m] @ DRAM):
    assert n <= 16 and m <= 16
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@proc
def axpy(n: size, x: [f32][n], y: [f32][n]):
    for i in seq(0, n):
        y[i] += x[i] * 2.0


@proc
def scale3(s: f32, x: [f32][4]):
    for i in seq(0, 4):
        x[i] = x[i] * s


@proc
def zero_const(x: [f32][8]):
    for i in seq(0, 8):
        x[i] = 0.0


@proc
def two_axpy(x: [f32][2, 4], y: [f32][2, 4]):
    axpy(4, x[0, 0:4], y[0, 0:4])
    axpy(4, x[1, 0:4], y[1, 0:4])


@proc
def cube_copy(a: [f32][2, 3], b: [f32][2, 3]):
    for i in seq(0, 2):
        for j in seq(0, 3):
            b[i, j] = a[i, j]


# ---------------------------------------------------------------------------
# callers

@proc
def tiled_copy(N: size, A: f32[N, 16], B: f32[N, 16]):
    assert N % 4 == 0
    for io in seq(0, N / 4):
        for ii in seq(0, 4):
            for j in seq(0, 16):
                B[4 * io + ii, j] = A[4 * io + ii, j]


def test_replace_2d_tiles_and_loop_bounds(equiv):
    q = tiled_copy.replace("ii", ld2d)
    assert str(q).rstrip() == """\
def tiled_copy(N: size, A: f32[N, 16] @ DRAM, B: f32[N, 16] @ DRAM):
    assert N % 4 == 0
    for io in seq(0, N / 4):
        ld2d(4, 16, A[4 * io:4 * io + 4, 0:16], B[4 * io:4 * io + 4, 0:16])"""
    equiv(tiled_copy, q, [{"N": 4}, {"N": 12}])
    # the C of the call site is the instr's template
    assert "ld2d_impl(&" in q.c_code_str()


@proc
def rows_cols(A: f32[8, 12], B: f32[12, 8]):
    for r in seq(0, 8):
        for c in seq(0, 4):
            B[c + 2, r] += A[r, c + 3] * 2.0


def test_replace_row_and_column_windows(equiv):
    q = rows_cols.replace("c", axpy)
    assert str(q).rstrip().splitlines()[-1].strip() == \
        "axpy(4, A[r, 3:7], B[2:6, r])"
    equiv(rows_cols, q, [{}])


@proc
def cube(A: f32[4, 5, 6], B: f32[3, 4, 5]):
    for k in seq(0, 3):
        for i in seq(0, 2):
            for j in seq(0, 3):
                B[k, i + 1, j] = A[k + 1, 2 + i, j + 3]


def test_replace_3d_buffers(equiv):
    q = cube.replace("i", cube_copy)
    assert "cube_copy(A[k + 1, 2:4, 3:6], B[k, 1:3, 0:3])" in str(q)
    equiv(cube, q, [{}])


@proc
def scal_use(A: f32[3, 4], s: f32):
    for r in seq(0, 3):
        for i in seq(0, 4):
            A[r, i] = A[r, i] * s


def test_replace_scalars_and_constant_sizes(equiv):
    q = scal_use.replace("i", scale3)
    assert "scale3(s, A[r, 0:4])" in str(q)
    equiv(scal_use, q, [{}])


@proc
def two_calls(A: f32[6, 4], B: f32[6, 4]):
    for k in seq(0, 3):
        axpy(4, A[2 * k, 0:4], B[2 * k, 0:4])
        axpy(4, A[2 * k + 1, 0:4], B[2 * k + 1, 0:4])


def test_replace_nested_calls(equiv):
    q = two_calls.replace(("axpy(_)", "axpy(_) #1"), two_axpy)
    assert "two_axpy(A[2 * k:2 * k + 2, 0:4], B[2 * k:2 * k + 2, 0:4])" \
        in str(q)
    equiv(two_calls, q, [{}])


@proc
def sized(n: size, A: f32[n, 8]):
    for r in seq(0, n):
        for i in seq(0, 8):
            A[r, i] = 0.0


def test_replace_block_cursor_and_forward(equiv):
    loop = sized.find_loop("i")
    q = sized.replace(loop.as_block(), zero_const)
    assert "zero_const(A[r, 0:8])" in str(q)
    equiv(sized, q, [{"n": 1}, {"n": 3}])
    from exo_hl.cursors import InvalidCursorError
    with pytest.raises(InvalidCursorError):
        q.forward(loop)  # the replaced loop is gone
    outer = q.forward(sized.find_loop("r"))
    assert outer.node() is q.ir().body[0]


def test_replace_is_deterministic():
    a = str(rows_cols.replace("c", axpy))
    b = str(rows_cols.replace("c", axpy))
    assert a == b


# ---------------------------------------------------------------------------
# config preconditions

@config
class CfgS:
    s: stride


LD1D_C = """
static void ld1d_impl(const float *s, int_fast32_t ss, float *d,
                      int_fast32_t ds, int_fast32_t n) {
    for (int_fast32_t i = 0; i < n; i++)
        d[i * ds] = s[i * ss];
}
"""


@instr("ld1d_impl(&{src_data}, {src}.strides[0], &{dst_data}, "
       "{dst}.strides[0], {n});", LD1D_C)
def ld_cfg(n: size, src: [f32][n] @ DRAM, dst: [f32][n] @ DRAM):
    assert CfgS.s == stride(src, 0)
    for i in seq(0, n):
        dst[i] = src[i]


@proc
def col_cfg(A: f32[4, 6], B: f32[4]):
    CfgS.s = stride(A, 0)
    for i in seq(0, 4):
        B[i] = A[i, 2]


@proc
def col_nocfg(A: f32[4, 6], B: f32[4]):
    CfgS.s = stride(A, 1)
    for i in seq(0, 4):
        B[i] = A[i, 2]


def test_replace_config_precondition_in_context(equiv):
    q = col_cfg.replace("i", ld_cfg)
    assert "ld_cfg(4, A[0:4, 2], B[0:4])" in str(q)
    equiv(col_cfg, q, [{}])


def test_replace_rejects_unprovable_precondition():
    with pytest.raises(SchedulingError) as e:
        col_nocfg.replace("i", ld_cfg)
    msg = str(e.value)
    assert "precondition" in msg and "ld_cfg" in msg
    assert "col_nocfg" in msg


@instr("small({x_data});")
def small_only(n: size, x: [f32][n]):
    assert n <= 4
    for i in seq(0, n):
        x[i] = 0.0


@proc
def big_zero(A: f32[8]):
    for i in seq(0, 8):
        A[i] = 0.0


def test_replace_rejects_violated_size_precondition():
    with pytest.raises(SchedulingError) as e:
        big_zero.replace("i", small_only)
    assert "n <= 4" in str(e.value)


CFG_C = "static void set_s(int_fast32_t s) { (void)s; }\n"


@instr("set_s({s});", CFG_C)
def set_stride(s: stride):
    CfgS.s = s


@proc
def ld_and_cfg(n: size, src: [f32][n], dst: [f32][n]):
    set_stride(stride(src, 0))
    ld_cfg(n, src, dst)


@proc
def two_instrs(A: f32[4, 6], B: f32[2, 4]):
    for k in seq(0, 2):
        set_stride(stride(A, 0))
        ld_cfg(4, A[0:4, k + 1], B[k, 0:4])


def test_replace_sub_proc_calling_instrs(equiv):
    blk = two_instrs.find("set_stride(_)").expand(0, 1)
    q = two_instrs.replace(blk, ld_and_cfg)
    assert "ld_and_cfg(4, A[0:4, k + 1], B[k, 0:4])" in str(q)
    equiv(two_instrs, q, [{}])


@proc
def cfg_then_copy(n: size, src: [f32][n], dst: [f32][n]):
    set_stride(stride(src, 0))
    for i in seq(0, n):
        dst[i] = src[i]


@proc
def two_instrs_wrong_dim(A: f32[4, 6], B: f32[2, 4]):
    for k in seq(0, 2):
        set_stride(stride(A, 1))
        for i in seq(0, 4):
            B[k, i] = A[i, k + 1]


def test_replace_rejects_stride_of_other_dimension():
    blk = two_instrs_wrong_dim.find("set_stride(_)").expand(0, 1)
    with pytest.raises(SchedulingError) as e:
        two_instrs_wrong_dim.replace(blk, cfg_then_copy)
    assert "stride(src, 0)" in str(e.value) and "stride(A, 1)" in str(e.value)


# ---------------------------------------------------------------------------
# rejections: structure, types, memories

@proc
def assign_not_reduce(A: f32[8, 12], B: f32[12, 8]):
    for r in seq(0, 8):
        for c in seq(0, 4):
            B[c + 2, r] = A[r, c + 3] * 2.0


def test_replace_rejects_different_statement_kind():
    with pytest.raises(SchedulingError) as e:
        assign_not_reduce.replace("c", axpy)
    msg = str(e.value)
    assert "expected an accumulation 'y[...] += ...', found an assignment " \
        "'B[...] = ...'" in msg
    # where, in the user's terms: the instruction's statement, not a path
    # of statement numbers (issue 34 item 7)
    assert "its statement 'y[i] += x[i] * 2.0'" in msg, msg
    assert "sub_proc body" not in msg and "statement 0" not in msg
    assert "assign_not_reduce" in msg


@proc
def wrong_op(A: f32[8], B: f32[8]):
    for c in seq(0, 8):
        B[c] += A[c] + 2.0


def test_replace_rejects_different_operator():
    with pytest.raises(SchedulingError) as e:
        wrong_op.replace("c", axpy)
    assert "operator '*'" in str(e.value) and "'+'" in str(e.value)


@proc
def wrong_const(A: f32[8], B: f32[8]):
    for c in seq(0, 8):
        B[c] += A[c] * 3.0


def test_replace_rejects_different_constant():
    with pytest.raises(SchedulingError) as e:
        wrong_const.replace("c", axpy)
    assert "constant 2.0 vs 3.0" in str(e.value)


@proc
def f64_rows(A: f64[8], B: f64[8]):
    for c in seq(0, 8):
        B[c] += A[c] * 2.0


def test_replace_rejects_element_types():
    with pytest.raises(SchedulingError) as e:
        f64_rows.replace("c", axpy)
    assert "element types differ" in str(e.value)
    assert "f32" in str(e.value) and "f64" in str(e.value)


@proc
def r_temp(x: [f32][1], y: [f32][1]):
    t: R
    t = x[0] + 1.0
    y[0] = t


@proc
def f16_temp(x: f32[1], y: f32[1]):
    t: f16
    t = x[0] + 1.0
    y[0] = t


@proc
def f32_temp(x: f32[1], y: f32[1]):
    t: f32
    t = x[0] + 1.0
    y[0] = t


def test_replace_r_allocation_is_f32(equiv):
    """An R parameter takes the precision of the buffer passed, an R
    allocation is f32: it matched the block's f16 temporary, and the call
    rounded 2048 + 1 to 2049 where the block gave 2048."""
    with pytest.raises(SchedulingError, match=r"it has R \(f32 in "
                       r"an allocation\), yours f16"):
        f16_temp.replace((f16_temp.find("t : _"), f16_temp.find("y[_] = _")),
                         r_temp)
    p = f32_temp.replace((f32_temp.find("t : _"), f32_temp.find("y[_] = _")),
                         r_temp)
    assert str(p).endswith("r_temp(x[0:1], y[0:1])")
    equiv(f32_temp, p, [{}])


@proc
def diag(A: f32[8, 8], B: f32[8]):
    for c in seq(0, 8):
        B[c] += A[c, c] * 2.0


def test_replace_rejects_unmatchable_indices():
    with pytest.raises(SchedulingError) as e:
        diag.replace("c", axpy)
    msg = str(e.value)
    assert "x[i]" in msg and "A[c, c]" in msg


@proc
def too_many(A: f32[8], B: f32[8]):
    for c in seq(0, 8):
        B[c] += A[c] * 2.0
        A[c] = 0.0


def test_replace_rejects_statement_count():
    with pytest.raises(SchedulingError) as e:
        too_many.replace("c", axpy)
    assert "1 statement(s)" in str(e.value) and "2" in str(e.value)


@instr("ld1d_impl(&{src_data}, {src}.strides[0], &{dst_data}, "
       "{dst}.strides[0], {n});", LD1D_C)
def ld_scratch(n: size, src: [f32][n] @ DRAM, dst: [f32][n] @ SCRATCH):
    for i in seq(0, n):
        dst[i] = src[i]


@proc
def to_scratch(A: f32[8]):
    t: f32[8] @ SCRATCH
    for i in seq(0, 8):
        t[i] = A[i]
    for i in seq(0, 8):
        A[i] = t[i] * 2.0


@proc
def to_dram(A: f32[8], B: f32[8]):
    for i in seq(0, 8):
        B[i] = A[i]


def test_replace_memories(equiv):
    q = to_scratch.replace("i", ld_scratch)
    assert "ld_scratch(8, A[0:8], t[0:8])" in str(q)
    equiv(to_scratch, q, [{}])
    with pytest.raises(SchedulingError) as e:
        to_dram.replace("i", ld_scratch)
    assert "memory SCRATCH" in str(e.value)


@proc
def uses_after(A: f32[4]):
    t: f32[4]
    for i in seq(0, 4):
        t[i] = A[i]
    for i in seq(0, 4):
        A[i] = t[i]


@proc
def alloc_and_copy(x: [f32][4]):
    t: f32[4]
    for i in seq(0, 4):
        t[i] = x[i]


def test_replace_rejects_block_binding_used_later():
    with pytest.raises(SchedulingError) as e:
        uses_after.replace(("t : _", "for i in _: _"), alloc_and_copy)
    assert "'t' is bound in the block and used after it" in str(e.value)


def test_replace_rejects_non_procedure():
    with pytest.raises(SchedulingError):
        to_dram.replace("i", "not a proc")


# ---------------------------------------------------------------------------
# bound symbols, control parameters, ambiguous windows

@proc
def tmp_sum(n: size, x: [f32][n], y: [f32][1]):
    t: f32
    t = 0.0
    for i in seq(0, n):
        if i < n - 1:
            t += x[i]
    w = y[0:1]
    w[0] = t


@proc
def tmp_host(A: f32[3, 6], B: f32[3]):
    for r in seq(0, 3):
        s: f32
        s = 0.0
        for k in seq(0, 6):
            if k < 5:
                s += A[r, k]
        v = B[r:r + 1]
        v[0] = s


def test_replace_unifies_allocations_windows_and_ifs(equiv):
    blk = tmp_host.find("s : _").expand(0, 4)
    q = tmp_host.replace(blk, tmp_sum)
    assert "tmp_sum(6, A[r, 0:6], B[r:r + 1])" in str(q)
    equiv(tmp_host, q, [{}])


@proc
def one_elem(x: [f32][1]):
    x[0] = 1.0


@proc
def point_host(A: f32[4, 5]):
    A[2, 3] = 1.0


def test_replace_ambiguous_window_prefers_trailing_dimension(equiv):
    # A[2, 3:4] and A[2:3, 3] both fit; the contiguous one is chosen
    q = point_host.replace("A[_] = _", one_elem)
    assert "one_elem(A[2, 3:4])" in str(q)
    equiv(point_host, q, [{}])


@proc
def cond_fill(n: size, flag: bool, x: [f32][n]):
    for i in seq(0, n):
        if flag:
            x[i] = 1.0
        else:
            x[i] = 2.0


@proc
def cond_host(m: size, A: f32[4, 8]):
    for r in seq(0, 4):
        for i in seq(0, 8):
            if m < 3:
                A[r, i] = 1.0
            else:
                A[r, i] = 2.0


@proc
def cond_bad(A: f32[4, 8]):
    for r in seq(0, 4):
        for i in seq(0, 8):
            if r < 3:
                A[r, i] = 1.0
            else:
                A[r, i] = 2.0


@proc
def cond_inner(A: f32[4, 8]):
    for r in seq(0, 4):
        for i in seq(0, 8):
            if i < 3:
                A[r, i] = 1.0
            else:
                A[r, i] = 2.0


def test_replace_bool_parameters(equiv):
    q = cond_host.replace("i", cond_fill)
    assert "cond_fill(8, m < 3, A[r, 0:8])" in str(q)
    equiv(cond_host, q, [{"m": 1}, {"m": 5}])
    q2 = cond_bad.replace("i", cond_fill)  # r is fixed for the whole block
    assert "cond_fill(8, r < 3, A[r, 0:8])" in str(q2)
    equiv(cond_bad, q2, [{}])
    with pytest.raises(SchedulingError) as e:
        cond_inner.replace("i", cond_fill)  # i is bound inside the block
    assert "'flag'" in str(e.value) and "bound inside the block" in \
        str(e.value)


@proc
def offs(n: size, k: size, x: [f32][n + k]):
    for i in seq(0, n):
        x[i + k] = 0.0


@proc
def offs_host(A: f32[20]):
    for i in seq(0, 6):
        A[i + 4] = 0.0


def test_replace_underdetermined_sizes_take_the_simplest_values(equiv):
    # x[i + k] vs A[i + 4]: offset + k == 4 leaves freedom; the simplest
    # solution (k = 1 positive size, window offset 3) is chosen, deterministically
    q = offs_host.replace("i", offs)
    line = str(q).splitlines()[-1].strip()
    assert line == str(offs_host.replace("i", offs)).splitlines()[-1].strip()
    assert line == "offs(6, 4, A[0:10])"  # fewest nonzero coefficients
    equiv(offs_host, q, [{}])


@proc
def par_host(A: f32[8]):
    for i in par(0, 8):
        A[i] = 0.0


def test_replace_rejects_loop_kind():
    with pytest.raises(SchedulingError) as e:
        par_host.replace("i", zero_const)
    assert "loop kinds differ" in str(e.value)


# ---------------------------------------------------------------------------
# the paper's example: a 16x16 matmul instruction in a tiled GEMM

@proc
def mm16(N: size, M: size, K: size, a: [f32][N, K], b: [f32][K, M],
         c: [f32][N, M]):
    assert N <= 16 and M <= 16 and K <= 16
    for i in seq(0, N):
        for j in seq(0, M):
            for k in seq(0, K):
                c[i, j] += a[i, k] * b[k, j]


@proc
def gemm32(A: f32[32, 32], B: f32[32, 32], C: f32[32, 32]):
    for i in seq(0, 32):
        for j in seq(0, 32):
            for k in seq(0, 32):
                C[i, j] += A[i, k] * B[k, j]


def test_replace_matmul_tile_in_tiled_gemm(equiv):
    g = gemm32.split("i", 16, "io", "ii").split("j", 16, "jo", "ji")
    g = g.split("k", 16, "ko", "ki")
    g = g.reorder("ii", "jo").reorder("ji", "ko").reorder("ii", "ko")
    q = g.replace("ii", mm16)
    assert ("mm16(16, 16, 16, A[16 * io:16 * io + 16, 16 * ko:16 * ko + 16]"
            ) in " ".join(str(q).split())
    equiv(gemm32, q, [{}])


@proc
def sym_rows(M: size, N: size, A: f32[M, N], B: f32[M, N]):
    for r in seq(0, M):
        for c in seq(0, N):
            B[r, c] += A[r, c] * 2.0


def test_replace_symbolic_sizes(equiv):
    q = sym_rows.replace("c", axpy)
    assert "axpy(N, A[r, 0:N], B[r, 0:N])" in str(q)
    equiv(sym_rows, q, [{"M": 1, "N": 1}, {"M": 2, "N": 5}])
