"""compile(): numerics against numpy and the interpreter, argument checks."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import f32, proc, seq, size

import cg_kernels as K

rng = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.fixture(scope="module")
def gemm_c():
    return K.gemm.compile()


@pytest.mark.parametrize("M,N,K", [(1, 1, 1), (3, 5, 7), (16, 16, 16),
                                   (17, 9, 33)])
def test_gemm_matches_numpy(gemm_c, M, N, K):
    A, B, C = rand(M, K), rand(K, N), rand(M, N)
    want = C + A @ B
    gemm_c(M, N, K, A, B, C)
    np.testing.assert_allclose(C, want, rtol=1e-4, atol=1e-5)


def test_gemm_keywords_and_interpreter_agree(gemm_c):
    A, B, C = rand(4, 6), rand(6, 5), rand(4, 5)
    C2 = C.copy()
    gemm_c(A=A, B=B, C=C, M=4, N=5, K=6)
    K.gemm.interpret(M=4, N=5, K=6, A=A, B=B, C=C2)
    np.testing.assert_allclose(C, C2, rtol=1e-5, atol=1e-6)


def test_row_and_column_windows():
    f = K.scale_rows_cols.compile()
    A = rand(5, 7)
    want = A * 2.0 * 3.0
    f(5, 7, A, np.float32(2.0), np.array(3.0, dtype=np.float32))
    np.testing.assert_allclose(A, want, rtol=1e-6)


def test_window_argument_from_strided_numpy_view():
    f = K.row_sums.compile()
    big = rand(8, 10)
    view = big[1:7:2, 3:9:2]            # strided in both dimensions
    out = np.zeros(3, dtype=np.float32)
    f(3, 3, view, out)
    np.testing.assert_allclose(out, view.sum(axis=1), rtol=1e-5)


def test_data_scalar_updated_in_place():
    f = K.dot.compile()
    x, y = rand(9), rand(9)
    for r in (np.zeros((), np.float32), np.zeros(1, np.float32)):
        f(9, x, y, r)
        assert float(r.reshape(())) == pytest.approx(float(x @ y), rel=1e-5)


def test_dram_and_dram_static_allocations_and_if_else():
    f = K.blur3.compile()
    x = rand(11)
    y = np.zeros(11, np.float32)
    f(11, x, y)
    want = x.copy()
    want[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    np.testing.assert_allclose(y, want, rtol=1e-6)
    y2 = np.zeros(11, np.float32)
    K.blur3.interpret(n=11, x=x, y=y2)
    np.testing.assert_allclose(y, y2, rtol=1e-6)


def test_all_precisions_and_casts():
    f = K.casts.compile()
    n = 6
    a = np.array([-128, -3, 0, 5, 100, 127], np.int8)
    fu = np.array([0, 1, 77, 128, 200, 255], np.uint8)
    outs = dict(b=np.zeros(n, np.int32), c=np.zeros(n, np.float64),
                d=np.zeros(n, np.float32), e=np.zeros(n, np.int16),
                g=np.zeros(n, np.uint16), h=np.zeros(n, np.float16))
    f(n=n, a=a, f=fu, **outs)
    np.testing.assert_array_equal(outs["b"], a.astype(np.int32) * 3)
    np.testing.assert_array_equal(outs["c"], a.astype(np.float64) * 3)
    np.testing.assert_array_equal(outs["d"], (a.astype(np.float64) * 3 * 0.5).astype(np.float32))
    np.testing.assert_array_equal(outs["e"], a.astype(np.int16))
    np.testing.assert_array_equal(outs["g"], fu.astype(np.uint16))
    np.testing.assert_array_equal(outs["h"], outs["d"].astype(np.float16))


def test_floor_mod_of_negative_index():
    f = K.tiled_copy.compile()
    x = rand(12)
    y = np.zeros(12, np.float32)
    f(12, x, y)
    idx = np.arange(12)
    want = x[4 * (idx // 4) + (idx % 4 - 1) % 4] + x[idx // 2]
    np.testing.assert_allclose(y, want, rtol=1e-6)


def test_config_state_persists_across_calls():
    f = K.scale_by_cfg.compile()
    x = np.ones(4, np.float32)
    for k in range(1, 4):
        f(4, x, np.float32(2.0))
        assert f.get_config(K.Cfg, "count") == k
    assert f.get_config(K.Cfg, "scale") == 2.0
    np.testing.assert_array_equal(x, np.full(4, 8.0, np.float32))
    g = K.scale_by_cfg.compile()     # a new callable has its own state
    assert g.get_config(K.Cfg, "count") == 0


def test_instr_compiled_by_template_interpreted_by_body():
    f = K.dbl_rows.compile()
    A = rand(3, 8)
    B = np.zeros((3, 8), np.float32)
    f(3, A, B)
    np.testing.assert_array_equal(B, 2 * A)
    B2 = np.zeros((3, 8), np.float32)
    K.dbl_rows.interpret(m=3, A=A, B=B2)
    np.testing.assert_array_equal(B2, 2 * A)


def test_argument_validation(gemm_c):
    A, B, C = rand(2, 3), rand(3, 4), rand(2, 4)
    with pytest.raises(TypeError, match="'A'.*dtype"):
        gemm_c(2, 4, 3, A.astype(np.float64), B, C)
    with pytest.raises(ValueError, match="'B'.*shape"):
        gemm_c(2, 4, 3, A, rand(4, 3), C)
    with pytest.raises(ValueError, match="'C'.*contiguous"):
        gemm_c(2, 4, 3, A, B, rand(4, 2).T)
    with pytest.raises(TypeError, match="'M'"):
        gemm_c(2.0, 4, 3, A, B, C)
    with pytest.raises(ValueError, match="'M'.*positive"):
        gemm_c(0, 4, 3, A, B, C)
    with pytest.raises(TypeError, match="missing"):
        gemm_c(2, 4, 3, A, B)
    with pytest.raises(ValueError, match="overlap"):
        sq = rand(2, 2)
        gemm_c(2, 2, 2, sq, rand(2, 2), sq)


def test_precondition_checked_before_running():
    f = K.tiled_copy.compile()
    x = rand(6)
    y = np.zeros(6, np.float32)
    with pytest.raises(ValueError, match="precondition.*n % 4"):
        f(6, x, y)
    assert not y.any()


def test_written_data_scalar_needs_an_array():
    f = K.dot.compile()
    with pytest.raises(TypeError, match="'r'"):
        f(2, rand(2), rand(2), 0.0)


def test_cc_and_cflags_options_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EXO_HL_CACHE", str(tmp_path))

    @proc
    def add1(n: size, x: f32[n]):
        for i in seq(0, n):
            x[i] += 1.0

    f = add1.compile(cflags="-O1")
    g = add1.compile(cflags="-O1")
    assert f.library_path == g.library_path          # cached
    h = add1.compile(cflags="-O0")
    assert h.library_path != f.library_path
    x = np.zeros(3, np.float32)
    f(3, x)
    h(3, x)
    np.testing.assert_array_equal(x, [2, 2, 2])
    with pytest.raises(RuntimeError, match="failed"):
        add1.compile(cflags="-O1 --no-such-flag-exists")
