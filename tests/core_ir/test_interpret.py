"""The reference interpreter against numpy (docs/api.md §5)."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import (DRAM, DRAM_STATIC, R, config, f16, f32, f64, i8, i32,
                    index, instr, par, proc, seq, size, stride, ui8)
from exo_hl.core_ir.interpret import (ConfigState, InterpreterError,
                                      run_interpreter)
from exo_hl.core_ir.nodes import IR
from kernels import gemm  # the suite's shared GEMM


@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (3, 5, 7), (16, 9, 4),
                                   (64, 64, 64)])
def test_gemm_matches_numpy(M, N, K):
    rng = np.random.default_rng(M * 100 + N)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C0 = rng.standard_normal((M, N)).astype(np.float32)
    C = C0.copy()
    assert gemm.interpret(M, N, K, A, B, C) is None
    np.testing.assert_allclose(C, C0 + A @ B, rtol=1e-4, atol=1e-4)
    assert C.dtype == np.float32


def test_f32_accumulation_rounds_like_c():
    """Each += rounds to float32 (a double accumulator would not)."""
    @proc
    def acc(n: size, x: f32[n] @ DRAM, s: f32 @ DRAM):
        for i in seq(0, n):
            s += x[i]

    x = np.full(4, 1e-8, np.float32)
    s = np.ones(1, np.float32)
    acc.interpret(n=4, x=x, s=s)
    assert s[0] == np.float32(1.0)  # each tiny add is lost in float32
    s64 = np.float64(1.0) + 4 * np.float64(np.float32(1e-8))
    assert s64 != 1.0


@config
class St:
    x0: stride
    v0: stride
    v1: stride


@proc
def vadd(n: size, x: [f32][n] @ DRAM, y: [f32][n] @ DRAM):
    for i in seq(0, n):
        y[i] += x[i]


def test_windows_rows_and_columns():
    @proc
    def rows_cols(n: size, A: f32[n, n] @ DRAM, B: f32[n, n] @ DRAM):
        assert n >= 2
        for i in seq(0, n):
            vadd(n, A[i, 0:n], B[i, 0:n])      # rows
            vadd(n, A[0:n, i], B[0:n, i])      # columns
        col = A[0:n, 1]
        vadd(n - 1, col[1:n], B[0:n - 1, 0])   # a window of a window

    n = 5
    A = np.arange(n * n, dtype=np.float32).reshape(n, n)
    B = np.zeros((n, n), np.float32)
    rows_cols.interpret(n=n, A=A, B=B)
    expect = A + A
    expect[0:n - 1, 0] += A[1:n, 1]
    np.testing.assert_array_equal(B, expect)


def test_window_arguments_may_be_strided_views():
    n = 6
    M = np.arange(2 * n * 3, dtype=np.float32).reshape(2 * n, 3)
    x = M[::2, 1]            # a strided column view
    y = np.ones(n, np.float32)
    vadd.interpret(n, x, y)
    np.testing.assert_array_equal(y, 1 + M[::2, 1])

    @proc
    def strides(n: size, x: [f32][n] @ DRAM, A: f32[n, 7] @ DRAM):
        assert stride(A, 0) == 7
        v = A[1:n, 2:5]
        St.x0 = stride(x, 0)
        St.v0 = stride(v, 0)
        St.v1 = stride(v, 1)
        if stride(v, 0) == 7:
            A[0, 0] = 1.0

    st = ConfigState()
    A = np.zeros((n, 7), np.float32)
    strides.interpret(n=n, x=x, A=A, config_state=st)
    assert (st[St.x0], st[St.v0], st[St.v1]) == (6, 7, 1)
    assert A[0, 0] == 1.0


def test_point_indexed_window_of_3d():
    @proc
    def pick(T: f32[3, 4, 5] @ DRAM, out: f32[4] @ DRAM):
        plane = T[1, 0:4, 0:5]
        vadd(4, plane[0:4, 2], out)

    T = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    out = np.zeros(4, np.float32)
    pick.interpret(T=T, out=out)
    np.testing.assert_array_equal(out, T[1, :, 2])


def test_data_scalars_zero_d_and_one_element():
    @proc
    def scal(n: size, a: f32 @ DRAM, x: f32[n] @ DRAM, total: f64 @ DRAM):
        for i in seq(0, n):
            x[i] = a * x[i]
            total += x[i]
        a = 0.5

    x = np.arange(4, dtype=np.float32)
    a = np.array(3.0, np.float32)          # 0-d
    total = np.zeros(1, np.float64)        # 1-element
    scal.interpret(4, a, x, total)
    np.testing.assert_array_equal(x, [0, 3, 6, 9])
    assert total[0] == 18.0
    assert a[()] == 0.5                    # written back in place


def test_scalar_passed_to_callee_by_reference():
    @proc
    def bump(s: f32 @ DRAM):
        s += 1.0

    @proc
    def caller(out: f32[2] @ DRAM):
        t: f32
        t = 1.0
        bump(t)
        bump(t)
        out[0] = t

    out = np.zeros(2, np.float32)
    caller.interpret(out=out)
    assert out[0] == 3.0


def test_allocations_and_if_else():
    @proc
    def clamp_copy(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
        t: f32[n] @ DRAM
        for i in seq(0, n):
            t[i] = x[i]
        for i in seq(0, n):
            if i < 2:
                y[i] = 0.0
            elif i % 3 == 0:
                y[i] = t[i] * 10.0
            else:
                y[i] = -t[i]

    x = np.arange(1, 9, dtype=np.float32)
    y = np.zeros(8, np.float32)
    clamp_copy.interpret(n=8, x=x, y=y)
    expect = [0, 0, -3, 40, -5, -6, 70, -8]
    np.testing.assert_array_equal(y, expect)


@pytest.mark.no_c_audit("reads an uninitialised buffer on purpose")
def test_uninitialised_float_alloc_reads_nan():
    @proc
    def bug(y: f32[2] @ DRAM):
        t: f32[2] @ DRAM_STATIC
        y[0] = t[1]

    y = np.zeros(2, np.float32)
    bug.interpret(y=y)
    assert np.isnan(y[0])


def test_precision_casts_i8_i32_f64():
    @proc
    def widen(n: size, a: i8[n] @ DRAM, b: i8[n] @ DRAM, acc: i32[n] @ DRAM,
              wrap: i8[n] @ DRAM, d: f64[n] @ DRAM, h: f16[n] @ DRAM,
              u: ui8[n] @ DRAM):
        for i in seq(0, n):
            acc[i] += a[i] * b[i]          # int arithmetic, no i8 overflow
            wrap[i] = a[i] * b[i]          # wraps on the i8 store
            d[i] = acc[i] / 3.0            # i32 division, then -> double
            h[i] = d[i] / 1000000.0        # rounds to half
            u[i] = -a[i]                   # wraps modulo 256

    a = np.array([100, -128, 7, 127], np.int8)
    b = np.array([100, -128, -3, 2], np.int8)
    acc = np.array([1, 2, 3, 2**31 - 16385], np.int32)
    n = 4
    wrap, d = np.zeros(n, np.int8), np.zeros(n, np.float64)
    h, u = np.zeros(n, np.float16), np.zeros(n, np.uint8)
    widen.interpret(n, a, b, acc, wrap, d, h, u)
    prod = a.astype(np.int64) * b.astype(np.int64)
    exp_acc = (np.array([1, 2, 3, 2**31 - 16385]) + prod)
    exp_acc = ((exp_acc + 2**31) % 2**32) - 2**31
    np.testing.assert_array_equal(acc, exp_acc.astype(np.int32))
    np.testing.assert_array_equal(wrap, prod.astype(np.int8))
    # a literal takes the type of the other operand (docs/semantics.md):
    # integer division, truncating toward zero
    quot = np.trunc(exp_acc / 3.0)
    np.testing.assert_array_equal(d, quot)
    np.testing.assert_array_equal(h, (quot / 1e6).astype(np.float16))
    np.testing.assert_array_equal(u, (-a.astype(np.int64)) % 256)


def test_float_to_int_truncates_toward_zero():
    @proc
    def trunc(x: f32[4] @ DRAM, y: i32[4] @ DRAM):
        for i in seq(0, 4):
            y[i] = x[i]

    x = np.array([2.7, -2.7, 0.5, -0.5], np.float32)
    y = np.zeros(4, np.int32)
    trunc.interpret(x=x, y=y)
    assert list(y) == [2, -2, 0, 0]


def test_mixed_precision_arithmetic_follows_c():
    @proc
    def mix(a: f32[1] @ DRAM, b: f64[1] @ DRAM, c: f32[1] @ DRAM,
            d: f64[2] @ DRAM):
        d[0] = a[0] * a[0]      # float product, then widened
        d[1] = a[0] * b[0]      # double product
        c[0] = a[0] * b[0]      # double product rounded to float

    a = np.array([1.1], np.float32)
    b = np.array([1.1], np.float64)
    c, d = np.zeros(1, np.float32), np.zeros(2, np.float64)
    mix.interpret(a=a, b=b, c=c, d=d)
    assert d[0] == np.float64(a[0] * a[0])
    assert d[1] == np.float64(a[0]) * b[0]
    assert c[0] == np.float32(np.float64(a[0]) * b[0])


def test_control_floor_division_and_modulo():
    @proc
    def idx(n: size, off: index, out: i32[8] @ DRAM):
        for i in seq(0, 8):
            out[(i + off) / 2 % 8] += 1.0
        out[(off - 8) % 3] = 100.0      # negative dividend: floor modulo

    out = np.zeros(8, np.int32)
    idx.interpret(n=1, off=-5, out=out)
    exp = np.zeros(8, np.int32)
    for i in range(8):
        exp[((i - 5) // 2) % 8] += 1
    exp[(-13) % 3] = 100
    np.testing.assert_array_equal(out, exp)


def test_par_loops_run_all_iterations():
    @proc
    def fill(n: size, x: f32[n] @ DRAM):
        for i in par(0, n):
            x[i] = 2.0

    x = np.zeros(5, np.float32)
    fill.interpret(n=5, x=x)
    assert (x == 2.0).all()


def test_empty_and_reversed_loop_bounds():
    @proc
    def none(n: size, x: f32[n] @ DRAM):
        for i in seq(n, n):
            x[0] = 1.0
        for i in seq(n - 1, 0):
            x[0] = 2.0

    x = np.zeros(3, np.float32)
    none.interpret(n=3, x=x)
    assert (x == 0).all()


@config
class Cnt:
    k: index
    scale: f32


@proc
def set_scale(s: f32 @ DRAM):
    Cnt.scale = s
    Cnt.k = Cnt.k + 1


@proc
def use_scale(n: size, x: f32[n] @ DRAM):
    for i in seq(0, n):
        x[i] = x[i] * Cnt.scale
    Cnt.k = Cnt.k + 10


def test_configs_persist_across_calls_and_runs():
    @proc
    def both(n: size, x: f32[n] @ DRAM, s: f32 @ DRAM):
        set_scale(s)
        use_scale(n, x)
        set_scale(s)

    x = np.ones(3, np.float32)
    st = ConfigState()
    both.interpret(n=3, x=x, s=np.array(2.5, np.float32), config_state=st)
    np.testing.assert_array_equal(x, [2.5] * 3)
    assert st[Cnt.k] == 12 and st[(Cnt, "k")] == 12
    assert st[Cnt.scale] == np.float32(2.5)
    # the state persists into a later run; unset fields read as zero
    use_scale.interpret(n=3, x=x, config_state=st)
    np.testing.assert_array_equal(x, [6.25] * 3)
    assert st[Cnt.k] == 22
    fresh = np.ones(2, np.float32)
    use_scale.interpret(n=2, x=fresh)
    assert (fresh == 0).all()
    # a run can start from given values
    st2 = ConfigState({(Cnt, "scale"): np.float32(-1)})
    run_interpreter(use_scale.ir(), (2, fresh + 3), {}, config_state=st2)
    assert st2[Cnt.k] == 10


@config
class LdCfg:
    src_stride: stride


@instr("config_ld({s});")
def config_ld(s: stride):
    LdCfg.src_stride = s


@instr("THIS IS NOT PYTHON {n} {src} {dst_data}")
def ld(n: size, m: size, src: [i8][n, m] @ DRAM, dst: [i8][n, 16] @ DRAM):
    assert n <= 16 and m <= 16
    assert LdCfg.src_stride == stride(src, 0)
    for i in seq(0, n):
        for j in seq(0, m):
            dst[i, j] = src[i, j]


@pytest.mark.no_c_audit("the instr template is deliberately not C")
def test_instr_interpreted_by_body():
    @proc
    def tile(A: i8[8, 12] @ DRAM, B: i8[8, 16] @ DRAM):
        config_ld(stride(A, 0))
        ld(4, 12, A[0:4, 0:12], B[0:4, 0:16])
        ld(4, 5, A[4:8, 7:12], B[4:8, 0:16])

    A = np.arange(96, dtype=np.int8).reshape(8, 12)
    B = np.zeros((8, 16), np.int8)
    tile.interpret(A=A, B=B)
    np.testing.assert_array_equal(B[0:4, 0:12], A[0:4])
    np.testing.assert_array_equal(B[4:8, 0:5], A[4:8, 7:12])
    assert (B[0:4, 12:] == 0).all() and (B[4:8, 5:] == 0).all()


@pytest.mark.no_c_audit("the instr template is deliberately not C")
def test_callee_precondition_checked_at_run_time():
    @proc
    def tile_cfg(A: i8[8, 12] @ DRAM, B: i8[8, 16] @ DRAM):
        config_ld(stride(A, 0))
        ld(4, 12, A[0:4, 0:12], B[0:4, 0:16])

    # drop the config write (as a buggy rewrite might): the static checks
    # are bypassed, the interpreter still catches the violated precondition
    p = tile_cfg.ir()
    no_cfg = p.update(body=p.body[1:])
    args = (np.zeros((8, 12), np.int8), np.zeros((8, 16), np.int8))
    st = ConfigState({LdCfg.src_stride: 5})
    with pytest.raises(InterpreterError, match="src_stride"):
        run_interpreter(no_cfg, args, {}, config_state=st)
    st = ConfigState({LdCfg.src_stride: 12})
    run_interpreter(no_cfg, args, {}, config_state=st)


def test_generic_R_callee_runs_f32_data_and_refuses_others():
    """A procedure's ``R`` is f32 in ``interpret()`` as in C: f32 data
    runs, f64 or i8 data is refused (run at the caller's precision, as
    before, its ``R`` locals stayed f32 and rewrites proven for f32 could
    change results; tests/core_ir/test_interpret_r_precision.py)."""
    @proc
    def scale2(n: size, x: [R][n] @ DRAM):
        for i in seq(0, n):
            x[i] = x[i] * 3.0 + 0.1

    @proc
    def one_precision(z: f32[2] @ DRAM):
        scale2(2, z)

    z = np.array([1.0, 50.0], np.float32)
    one_precision.interpret(z=z)
    np.testing.assert_array_equal(
        z, np.float32([1.0, 50.0]) * np.float32(3) + np.float32(0.1))
    for ty, dt in ((f64, np.float64), (i8, np.int8)):
        @proc
        def other(x: ty[2] @ DRAM):
            scale2(2, x)
        with pytest.raises(InterpreterError, match="compiles as float"):
            other.interpret(x=np.ones(2, dt))


def test_externs_and_bool_args():
    @proc
    def ext(n: size, neg: bool, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
        for i in seq(0, n):
            if neg:
                y[i] = relu(-x[i])
            else:
                y[i] = select(x[i], 0.0, sqrt(-x[i]), fmax(x[i], 1.0))

    x = np.array([-4.0, 0.5, 3.0], np.float32)
    y = np.zeros(3, np.float32)
    ext.interpret(3, False, x, y)
    np.testing.assert_array_equal(y, [2.0, 1.0, 3.0])
    ext.interpret(3, True, x, y)
    np.testing.assert_array_equal(y, [4.0, 0.0, 0.0])


# ---------------------------------------------------------------------------
# argument validation


def test_argument_errors_name_the_argument():
    A = np.zeros((2, 3), np.float32)
    B = np.zeros((3, 4), np.float32)
    C = np.zeros((2, 4), np.float32)
    with pytest.raises(TypeError, match="missing argument 'C'"):
        gemm.interpret(2, 4, 3, A, B)
    with pytest.raises(TypeError, match="unexpected argument 'D'"):
        gemm.interpret(2, 4, 3, A, B, C=C, D=C)
    with pytest.raises(TypeError, match="'B'.*float32.*float64"):
        gemm.interpret(2, 4, 3, A, B.astype(np.float64), C)
    with pytest.raises(ValueError, match=r"'C' must have shape \(2, 4\)"):
        gemm.interpret(2, 4, 3, A, B, C.T.copy())
    with pytest.raises(TypeError, match=r"'M' \(size\) must be an int"):
        gemm.interpret(2.0, 4, 3, A, B, C)
    with pytest.raises(ValueError, match=r"'N' \(size\) must be positive"):
        gemm.interpret(2, 0, 3, A, B, np.zeros((2, 0), np.float32))
    with pytest.raises(TypeError, match="'A' must be a numpy array"):
        gemm.interpret(2, 4, 3, A.tolist(), B, C)
    with pytest.raises(ValueError, match="'A'.*C-contiguous"):
        gemm.interpret(2, 4, 3, np.asfortranarray(A), B, C)
    with pytest.raises(TypeError, match="given twice"):
        gemm.interpret(2, 4, 3, A, B, C, C=C)


def test_scalar_argument_errors():
    @proc
    def sc(s: f32 @ DRAM, b: bool):
        s = 1.0

    with pytest.raises(TypeError, match="'s' must be a 0-d or 1-element"):
        sc.interpret(1.0, True)
    with pytest.raises(ValueError, match="'s' is a scalar"):
        sc.interpret(np.zeros(2, np.float32), True)
    with pytest.raises(TypeError, match="'b' must be a bool"):
        sc.interpret(np.zeros(1, np.float32), 1)


def test_precondition_violation_is_value_error():
    @proc
    def pre(n: size, x: f32[n] @ DRAM):
        assert n % 4 == 0
        x[0] = 1.0

    with pytest.raises(ValueError, match=r"'pre'.*assert n % 4 == 0"):
        pre.interpret(6, np.zeros(6, np.float32))
    x = np.zeros(8, np.float32)
    pre.interpret(8, x)
    assert x[0] == 1.0


def test_interpreter_is_deterministic_and_pure_between_runs():
    A = np.ones((2, 2), np.float32)
    C1 = np.zeros((2, 2), np.float32)
    C2 = np.zeros((2, 2), np.float32)
    gemm.interpret(2, 2, 2, A, A, C1)
    run_interpreter(gemm.ir(), (2, 2, 2, A, A, C2), {})
    np.testing.assert_array_equal(C1, C2)
    assert (A == 1).all()
    assert isinstance(gemm.ir(), IR.Proc)




def test_negative_index_from_a_bad_rewrite_is_caught():
    """numpy would wrap x[-1] silently; the interpreter refuses."""
    from exo_hl.api import Procedure
    from exo_hl.core_ir.traversal import subst

    @proc
    def shift(n: size, x: f32[n] @ DRAM):
        for i in seq(0, n):
            x[i] = 1.0

    loop = shift.ir().body[0]
    ri = IR.Read(loop.iter, (), type=IR.Index)
    bad_idx = IR.BinOp("-", ri, IR.Const(1, type=IR.Int), type=IR.Index)
    bad = loop.update(body=tuple(subst(s, {loop.iter: bad_idx})
                                 for s in loop.body))
    p = Procedure(shift.ir().update(body=(bad, )))
    assert "x[i - 1] = 1.0" in str(p)
    with pytest.raises(InterpreterError, match="negative index -1"):
        p.interpret(3, np.zeros(3, np.float32))
