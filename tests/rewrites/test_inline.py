"""inline(call): printed result, semantics, rejected requests."""
from __future__ import annotations

import pytest

from exo_hl import DRAM, SchedulingError, f32, instr, proc, seq, size, stride


@proc
def scale_row(n: size, x: [f32][n], y: [f32][n]):
    assert n <= 8
    for i in seq(0, n):
        y[i] += x[i] * 2.0


@proc
def rows(m: size, A: f32[m, 8], B: f32[m, 8]):
    for r in seq(0, m):
        scale_row(8, A[r, 0:8], B[r, 0:8])


def test_inline_prints_composed_window_accesses():
    q = rows.inline("scale_row(_)")
    assert str(q).rstrip() == """\
def rows(m: size, A: f32[m, 8] @ DRAM, B: f32[m, 8] @ DRAM):
    for r in seq(0, m):
        for i in seq(0, 8):
            B[r, i] += A[r, i] * 2.0"""


def test_inline_equivalent(equiv):
    q = rows.inline("scale_row(_)")
    equiv(rows, q, [{"m": 1}, {"m": 3}])


@proc
def acc(n: size, x: [f32][n], s: [f32][1]):
    for i in seq(0, n):
        s[0] += x[i]


@proc
def inner2(n: size, w: [f32][n, 4], out: [f32][n]):
    if stride(w, 1) == 1:
        for i in seq(0, n):
            sub = w[i, 1:3]
            acc(2, sub, out[i:i + 1])
    else:
        pass


@proc
def nested(m: size, A: f32[m, 6, 4], o: f32[m, 6]):
    for r in seq(0, m):
        inner2(5, A[r, 1:6, 0:4], o[r, 0:5])


def test_inline_windows_strides_and_nested_calls(equiv):
    q = nested.inline("inner2(_)")
    text = str(q)
    assert "stride(A, 2) == 1" in text
    assert "sub = A[r, i + 1, 1:3]" in text
    assert "acc(2, sub, o[r, i:i + 1])" in text
    equiv(nested, q, [{"m": 1}, {"m": 2}])
    # and the nested call can be inlined in turn
    q2 = q.inline("acc(_)")
    assert "acc(" not in str(q2)
    equiv(nested, q2, [{"m": 2}])


@proc
def scal(s: f32, x: f32):
    x = s * 3.0


@proc
def uses_scalar(n: size, a: f32[n], b: f32[n]):
    t: f32
    u: f32
    for i in seq(0, n):
        t = a[i]
        scal(t, u)
        b[i] = u


def test_inline_data_scalar_params(equiv):
    q = uses_scalar.inline("scal(_)")
    assert "u = t * 3.0" in str(q)
    equiv(uses_scalar, q, [{"n": 1}, {"n": 5}])


@instr("my_copy(&{dst_data}, &{src_data}, {n});",
       c_global="static inline void my_copy(float *d, const float *s, "
                "int_fast32_t n) {\n"
                "    for (int_fast32_t i = 0; i < n; i++) d[i] = s[i];\n}\n")
def my_copy(n: size, src: [f32][n] @ DRAM, dst: [f32][n] @ DRAM):
    for i in seq(0, n):
        dst[i] = src[i]


@proc
def calls_instr(n: size, a: f32[n, 4], b: f32[n, 4]):
    for i in seq(0, n):
        my_copy(4, a[i, 0:4], b[i, 0:4])


def test_inline_instr_back_into_its_body():
    q = calls_instr.inline("my_copy(_)")
    assert str(q).rstrip() == """\
def calls_instr(n: size, a: f32[n, 4] @ DRAM, b: f32[n, 4] @ DRAM):
    for i in seq(0, n):
        for i_1 in seq(0, 4):
            b[i, i_1] = a[i, i_1]"""


def test_inline_twice_gives_fresh_symbols(equiv):
    @proc
    def twice(m: size, A: f32[m, 8], B: f32[m, 8]):
        for r in seq(0, m):
            scale_row(8, A[r, 0:8], B[r, 0:8])
            scale_row(4, B[r, 4:8], A[r, 0:4])
    q = twice.inline("scale_row(_)").inline("scale_row(_)")
    loops = [s for s in q.find("for i in _: _", many=True)]
    assert len(loops) == 2
    assert loops[0].node().iter is not loops[1].node().iter
    equiv(twice, q, [{"m": 2}])


def test_inline_rejects_non_call():
    with pytest.raises(SchedulingError, match="expected a call"):
        rows.inline("for r in _: _")


def test_inline_rejects_missing_pattern():
    with pytest.raises(SchedulingError):
        rows.inline("nothing_here(_)")
