"""replace(block, sub_proc): unification, printed results, semantics,
rejections (non-matching bodies, element types, memories, preconditions)."""
from __future__ import annotations

import pytest

from exo_hl import (DRAM, SchedulingError, config, f32, f64, i8, instr, proc,
                    seq, size, stride)


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
    with pytest.raises(Exception):
        q.forward(loop)  # the replaced loop is gone


def test_replace_is_deterministic():
    a = str(rows_cols.replace("c", axpy))
    b = str(rows_cols.replace("c", axpy))
    assert a == b


# ---------------------------------------------------------------------------
# config preconditions

@config
class CfgS:
    s: stride


@instr("ld_cfg({src_data}, {dst_data}, {n});")
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
    equiv(col_cfg, q, [{}], compiled=False)


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
    assert "expected a Reduce into 'y', found an Assign into 'B'" in msg
    assert "statement 0 of the body of loop 'i' in statement 0 of " \
        "sub_proc body" in msg
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


@instr("ld_s({src_data}, {dst_data}, {n});")
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
    assert "ld_s(" not in str(q) and "ld_scratch(8, A[0:8], t[0:8])" in str(q)
    equiv(to_scratch, q, [{}], compiled=False)
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
