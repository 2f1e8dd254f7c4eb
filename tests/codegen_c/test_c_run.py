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


def _three_way_cases():
    """(kernel, args, numpy expectation of the written buffers) per feature
    the backend supports; ``args`` are fresh copies per use."""
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    cases = []
    for M, N, Kd in [(1, 1, 1), (2, 3, 5), (7, 4, 9), (16, 16, 16)]:
        A, B, C = r(M, Kd), r(Kd, N), r(M, N)
        cases.append((f"gemm{M}x{N}x{Kd}", K.gemm,
                      dict(M=M, N=N, K=Kd, A=A, B=B, C=C),
                      {"C": C + A @ B}))
    A = r(5, 3)
    cases.append(("windows", K.scale_rows_cols,
                  dict(m=5, n=3, A=A, alpha=np.array(2, np.float32),
                       beta=np.array([3.0], np.float32)), {"A": A * 6.0}))
    x, y = r(6), r(6)
    cases.append(("data_scalar", K.dot,
                  dict(n=6, x=x, y=y, r=np.zeros((), np.float32)),
                  {"r": x @ y}))
    x = r(7)
    want = x.copy()
    want[1:-1] = 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]
    cases.append(("allocs_if_else", K.blur3,
                  dict(n=7, x=x, y=np.zeros(7, np.float32)), {"y": want}))
    a = np.array([-128, -7, 0, 9, 127], np.int8)
    fu = np.array([0, 3, 128, 250, 255], np.uint8)
    d = (a.astype(np.float64) * 3 * 0.5).astype(np.float32)
    z = dict(b=np.zeros(5, np.int32), c=np.zeros(5, np.float64),
             d=np.zeros(5, np.float32), e=np.zeros(5, np.int16),
             g=np.zeros(5, np.uint16), h=np.zeros(5, np.float16))
    cases.append(("precisions", K.casts, dict(n=5, a=a, f=fu, **z),
                  {"b": a.astype(np.int32) * 3, "c": a * 3.0, "d": d,
                   "e": a.astype(np.int16), "g": fu.astype(np.uint16),
                   "h": d.astype(np.float16)}))
    A = r(2, 8)
    cases.append(("instr", K.dbl_rows,
                  dict(m=2, A=A, B=np.zeros((2, 8), np.float32)),
                  {"B": 2 * A}))
    return cases


@pytest.mark.parametrize("case", _three_way_cases(), ids=lambda c: c[0])
def test_numpy_interpret_and_compile_agree(case):
    _, p, args, want = case
    got_i = {k: (v.copy() if isinstance(v, np.ndarray) else v)
             for k, v in args.items()}
    got_c = {k: (v.copy() if isinstance(v, np.ndarray) else v)
             for k, v in args.items()}
    p.interpret(**got_i)
    p.compile()(**got_c)
    for name, w in want.items():
        np.testing.assert_allclose(got_i[name].astype(np.float64),
                                   np.asarray(w, np.float64), rtol=1e-4,
                                   atol=1e-5, err_msg=f"interpret {name}")
        np.testing.assert_allclose(got_c[name].astype(np.float64),
                                   np.asarray(w, np.float64), rtol=1e-4,
                                   atol=1e-5, err_msg=f"compile {name}")
        assert got_i[name].dtype == got_c[name].dtype


def test_config_state_across_calls_interpret_and_compile_agree():
    from exo_hl.core_ir.interpret import ConfigState
    f = K.scale_by_cfg.compile()
    st = ConfigState()
    xi, xc = np.ones(4, np.float32), np.ones(4, np.float32)
    for k, s in enumerate([2.0, 3.0, 0.5], start=1):
        K.scale_by_cfg.interpret(4, xi, np.array(s, np.float32),
                                 config_state=st)
        f(4, xc, np.array(s, np.float32))
        assert st[K.Cfg.count] == f.get_config(K.Cfg, "count") == k
        assert st[K.Cfg.scale] == f.get_config(K.Cfg, "scale") == s
    np.testing.assert_array_equal(xi, np.full(4, 3.0, np.float32))
    np.testing.assert_array_equal(xi, xc)


def test_integer_precisions_mix_as_c_ints():
    """Integers of every width compute in C's int, as the interpreter
    computes them exactly: a mix needs no binding first."""
    from exo_hl import i8, i16, i32, ui8

    @proc
    def imix(n: size, a: i8[n], b: ui8[n], c: i16[n], d: i32[n]):
        for i in seq(0, n):
            d[i] = a[i] * b[i] + c[i] * d[i]
            c[i] = a[i] + b[i]

    a = np.array([-128, 127, 5], np.int8)
    b = np.array([255, 255, 0], np.uint8)
    c = np.array([300, -300, 7], np.int16)
    d = np.array([1000, -1000, 3], np.int32)
    want = [x.copy() for x in (a, b, c, d)]
    imix.interpret(3, *want)
    assert list(want[3]) == [-128 * 255 + 300000, 127 * 255 + 300000, 21]
    got = [x.copy() for x in (a, b, c, d)]
    imix.compile()(3, *got)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
