"""The printer: exact expected text of small procedures (docs/api.md §5)."""
from __future__ import annotations

import textwrap

from exo_hl import DRAM, DRAM_STATIC, config, f32, i8, i32, index, instr, \
    par, proc, seq, size, stride  # noqa: F401
from exo_hl.api import Procedure
from exo_hl.core_ir.extern import relu, select  # noqa: F401
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.printer import (alpha_equal, expr_to_str, proc_to_str,
                                    stmt_to_str)
from exo_hl.core_ir.srcinfo import SrcInfo
from exo_hl.core_ir.syms import Sym
from exo_hl.core_ir.traversal import subst


def expect(p, text):
    assert str(p) == textwrap.dedent(text).strip("\n")


def test_gemm_text():
    @proc
    def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N] @ DRAM,
             C: f32[M, N] @ DRAM):
        for i in seq(0, M):
            for j in seq(0, N):
                for k in seq(0, K):
                    C[i, j] += A[i, k] * B[k, j]

    expect(gemm, """
        def gemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM, B: f32[K, N] @ DRAM,
                 C: f32[M, N] @ DRAM):
            for i in seq(0, M):
                for j in seq(0, N):
                    for k in seq(0, K):
                        C[i, j] += A[i, k] * B[k, j]
        """)
    assert proc_to_str(gemm.ir()) == str(gemm)
    assert not str(gemm).endswith("\n")


def test_precedence_minimal_parentheses():
    @proc
    def ops(n: size, x: f32[n] @ DRAM, y: f32 @ DRAM):
        for i in seq(0, n):
            x[i] = (x[i] + y) * (y - x[i] - (y - 2.0))
            x[i] = -(x[i] * y) + -x[i] * y / (y * 3.0)
            x[i] = x[i] - x[i] * y - -1.5
        for i in seq(0, n - (n - 1)):
            x[(i + 1) % 2 * 0] = y

    expect(ops, """
        def ops(n: size, x: f32[n] @ DRAM, y: f32 @ DRAM):
            for i in seq(0, n):
                x[i] = (x[i] + y) * (y - x[i] - (y - 2.0))
                x[i] = -(x[i] * y) + -x[i] * y / (y * 3.0)
                x[i] = x[i] - x[i] * y - -1.5
            for i in seq(0, n - (n - 1)):
                x[(i + 1) % 2 * 0] = y
        """)


def test_boolean_precedence_and_elif():
    @proc
    def conds(n: size, a: bool, b: bool, x: f32[n] @ DRAM):
        for i in seq(0, n):
            if a and b or not (a or b):
                x[i] = 1.0
            elif a and (b or i < 2):
                x[i] = 2.0
            elif not a:
                pass
            else:
                if i == 3:
                    x[i] = 3.0
                x[i] = 4.0

    expect(conds, """
        def conds(n: size, a: bool, b: bool, x: f32[n] @ DRAM):
            for i in seq(0, n):
                if a and b or not (a or b):
                    x[i] = 1.0
                elif a and (b or i < 2):
                    x[i] = 2.0
                elif not a:
                    pass
                else:
                    if i == 3:
                        x[i] = 3.0
                    x[i] = 4.0
        """)


def test_nested_comparison_parenthesised():
    i = Sym("i")
    si = SrcInfo("t.py", 1)
    ri = IR.Read(i, (), type=IR.Index, srcinfo=si)
    lt = IR.BinOp("<", ri, IR.Const(3, type=IR.Int), type=IR.Bool)
    e = IR.BinOp("==", lt, IR.Const(True, type=IR.Bool), type=IR.Bool)
    assert expr_to_str(e) == "(i < 3) == True"
    e2 = IR.BinOp("==", IR.Const(True, type=IR.Bool), lt, type=IR.Bool)
    assert expr_to_str(e2) == "True == (i < 3)"
    minus = IR.BinOp("-", ri, IR.BinOp("+", ri, ri, type=IR.Index),
                     type=IR.Index)
    assert expr_to_str(minus) == "i - (i + i)"
    neg = IR.USub(IR.Const(-2, type=IR.Int), type=IR.Int)
    assert expr_to_str(neg) == "--2"


def test_allocs_windows_calls_configs_externs():
    @config
    class Cfg:
        scale: f32
        ld: stride

    @proc
    def axpy(n: size, a: f32 @ DRAM, x: [f32][n] @ DRAM):
        for i in seq(0, n):
            x[i] = a * x[i]

    @proc
    def user(n: size, A: f32[n, 16] @ DRAM, s: f32 @ DRAM):
        assert n % 4 == 0
        assert stride(A, 0) == 16
        t: f32[16, 16] @ DRAM_STATIC
        u: f32
        u = 0.5
        Cfg.scale = s
        Cfg.ld = stride(A, 0)
        row = A[1, 0:16]
        axpy(16, s, row)
        axpy(n, s, A[0:n, 3])
        axpy(8, u, row[4:12])
        for i in par(0, n):
            A[i, 2] = relu(A[i, 0]) + select(s, 0.0, A[i, 1], Cfg.scale)

    expect(user, """
        def user(n: size, A: f32[n, 16] @ DRAM, s: f32 @ DRAM):
            assert n % 4 == 0
            assert stride(A, 0) == 16
            t: f32[16, 16] @ DRAM_STATIC
            u: f32 @ DRAM
            u = 0.5
            Cfg.scale = s
            Cfg.ld = stride(A, 0)
            row = A[1, 0:16]
            axpy(16, s, row)
            axpy(n, s, A[0:n, 3])
            axpy(8, u, row[4:12])
            for i in par(0, n):
                A[i, 2] = relu(A[i, 0]) + select(s, 0.0, A[i, 1], Cfg.scale)
        """)
    call = user.ir().body[7]
    assert stmt_to_str(call) == "axpy(n, s, A[0:n, 3])"


def test_instr_header():
    @instr('ld({n}, &{dst_data}, "{{x}}");')
    def ld(n: size, src: [i8][n] @ DRAM, dst: [i8][n] @ DRAM):
        assert n <= 16
        for i in seq(0, n):
            dst[i] = src[i]

    expect(ld, r'''
        @instr("ld({n}, &{dst_data}, \"{{x}}\");")
        def ld(n: size, src: [i8][n] @ DRAM, dst: [i8][n] @ DRAM):
            assert n <= 16
            for i in seq(0, n):
                dst[i] = src[i]
        ''')
    g = ld.ir().update(instr=IR.Instr("f();", "#include <a.h>\n"))
    assert proc_to_str(g).splitlines()[0] == \
        '@instr("f();", c_global="#include <a.h>\\n")'


def test_long_lines_are_wrapped_deterministically():
    @proc
    def long_one(n: size, xxxxxxxxxxxxxxxxxxxx: f32[n] @ DRAM,
                 yyyyyyyyyyyyyyyyyyyyyyyyy: f32[n] @ DRAM):
        for i in seq(0, n):
            xxxxxxxxxxxxxxxxxxxx[i] = yyyyyyyyyyyyyyyyyyyyyyyyy[i] * yyyyyyyyyyyyyyyyyyyyyyyyy[i] + xxxxxxxxxxxxxxxxxxxx[i]  # noqa: E501

    text = str(long_one)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert text == str(long_one) == proc_to_str(long_one.ir())


def test_shadowed_names_are_disambiguated(assert_roundtrip):
    @proc
    def two(n: size, A: f32[n, n] @ DRAM):
        for i in seq(0, n):
            for j in seq(0, n):
                A[i, j] = 1.0
        for i in seq(0, n):
            A[i, 0] = 2.0

    p = two.ir()
    outer = p.body[0]
    inner = outer.body[0]
    fresh = Sym("i")   # a different symbol spelled like the outer iterator
    inner2 = subst(inner, {inner.iter: fresh}).update(iter=fresh)
    q = Procedure(p.update(body=(outer.update(body=(inner2, )), ) +
                           p.body[1:]))
    # sequential loops reusing a name print unchanged; only the shadow moves
    expect(q, """
        def two(n: size, A: f32[n, n] @ DRAM):
            for i in seq(0, n):
                for i_1 in seq(0, n):
                    A[i, i_1] = 1.0
            for i in seq(0, n):
                A[i, 0] = 2.0
        """)
    r = assert_roundtrip(q)
    assert alpha_equal(q.ir(), r.ir())
    assert alpha_equal(two.ir(), q.ir())  # only a renaming of j
    # the disambiguated spelling avoids names already used elsewhere
    taken = Sym("i_1")
    body = q.ir().body
    alloc = IR.Alloc(taken, IR.F32, DRAM)
    q2 = Procedure(q.ir().update(body=body + (alloc, )))
    assert "for i_2 in seq(0, n):" in str(q2)
    assert_roundtrip(q2)


def test_stmt_and_expr_helpers():
    @proc
    def small(n: size, x: f32[n] @ DRAM):
        for i in seq(0, n):
            if i < n - 1:
                x[i] += x[i + 1]

    loop = small.ir().body[0]
    assert stmt_to_str(loop) == textwrap.dedent("""\
        for i in seq(0, n):
            if i < n - 1:
                x[i] += x[i + 1]""")
    assert stmt_to_str(loop, indent=1).startswith("    for i")
    assert expr_to_str(loop.body[0].cond) == "i < n - 1"


def test_alpha_equal_distinguishes_structure():
    @proc
    def f1(n: size, x: f32[n] @ DRAM):
        for i in seq(0, n):
            x[i] = 1.0

    @proc
    def f2(n: size, x: f32[n] @ DRAM):
        for j in seq(0, n):
            x[j] = 1.0

    @proc
    def f3(n: size, x: f32[n] @ DRAM):
        for i in seq(0, n):
            x[i] = 2.0

    assert alpha_equal(f1.ir(), f2.ir().update(name="f1"))
    assert not alpha_equal(f1.ir(), f2.ir())  # names of procs matter
    assert not alpha_equal(f1.ir(), f3.ir().update(name="f1"))
    # inconsistent renaming: two different symbols cannot map onto one
    n, x = f1.ir().args[0].name, f1.ir().args[1].name
    loop = f1.ir().body[0]
    bad = loop.update(body=(loop.body[0].update(
        idx=(IR.Read(n, (), type=IR.Size), )), ))
    assert not alpha_equal(f1.ir(), f1.ir().update(body=(bad, )))
    del x


def test_data_literals_print_as_reals():
    zero_num = IR.Const(0, type=IR.Num)
    assert expr_to_str(zero_num) == "0.0"
    assert expr_to_str(IR.Const(0, type=IR.Int)) == "0"
    assert expr_to_str(IR.Const(-3, type=IR.F32)) == "-3.0"
    assert expr_to_str(IR.Const(1e-05, type=IR.Num)) == "1e-05"


# ---------------------------------------------------------------------------
# line breaking: between arguments or operands, never inside a subscript


def _open_brackets_at_line_ends(text):
    """Lines that end inside a [...] (a subscript or window broken up)."""
    depth, bad = 0, []
    for ln in text.splitlines():
        for ch in ln:
            depth += (ch == "[") - (ch == "]")
        if depth:
            bad.append(ln)
    return bad


def test_long_statements_break_between_operands_not_in_subscripts(
        assert_roundtrip):
    @proc
    def conv(oc_n: size, no_n: size, y: f32[oc_n, 8 * no_n] @ DRAM,
             w: f32[oc_n, 8 * no_n + 8] @ DRAM, x: f32[8 * no_n + 8] @ DRAM):
        for oc in seq(0, oc_n):
            for no in seq(0, no_n):
                for ni in seq(0, 8):
                    y[oc, 8 * no + ni] += w[oc, 8 * no + ni + 1] * x[8 * no + ni] + w[oc, 8 * no + ni] * x[8 * no + ni + 1]  # noqa: E501
                    y[oc, 8 * no + ni] = select(x[8 * no + ni], w[oc, 8 * no + ni + 1], x[8 * no + ni + 1], w[oc, 8 * no + ni])  # noqa: E501

    expect(conv, """
        def conv(oc_n: size, no_n: size, y: f32[oc_n, 8 * no_n] @ DRAM,
                 w: f32[oc_n, 8 * no_n + 8] @ DRAM, x: f32[8 * no_n + 8] @ DRAM):
            for oc in seq(0, oc_n):
                for no in seq(0, no_n):
                    for ni in seq(0, 8):
                        y[oc, 8 * no + ni] += (w[oc, 8 * no + ni + 1] * x[8 * no + ni] +
                                               w[oc, 8 * no + ni] * x[8 * no + ni + 1])
                        y[oc, 8 * no + ni] = select(x[8 * no + ni],
                                                    w[oc, 8 * no + ni + 1],
                                                    x[8 * no + ni + 1],
                                                    w[oc, 8 * no + ni])
        """)
    assert_roundtrip(conv)


def test_line_breaking_never_splits_a_subscript(assert_roundtrip):
    @proc
    def deep(n: size, A: f32[n, 2 * n + 1000000000, n] @ DRAM,
             B: f32[n, 2 * n + 1000000000, n] @ DRAM):
        for iiiiiiiiiiii in seq(0, n):
            for jjjjjjjjjjjj in seq(0, n):
                for kkkkkkkkkkkk in seq(0, n):
                    A[iiiiiiiiiiii, jjjjjjjjjjjj + kkkkkkkkkkkk + 999999999, kkkkkkkkkkkk] = B[iiiiiiiiiiii, jjjjjjjjjjjj + kkkkkkkkkkkk + 999999999, kkkkkkkkkkkk] * 2.0  # noqa: E501
                    A[iiiiiiiiiiii, jjjjjjjjjjjj + kkkkkkkkkkkk + 999999999, kkkkkkkkkkkk] = B[iiiiiiiiiiii, jjjjjjjjjjjj + kkkkkkkkkkkk + 999999999, kkkkkkkkkkkk]  # noqa: E501
                    if iiiiiiiiiiii + jjjjjjjjjjjj < n and jjjjjjjjjjjj + kkkkkkkkkkkk < n and iiiiiiiiiiii < kkkkkkkkkkkk:  # noqa: E501
                        pass

    text = str(deep)
    assert _open_brackets_at_line_ends(text) == []
    body = text.splitlines()
    # an operand wider than a line stays whole; a lone subscript stays long
    sub = "iiiiiiiiiiii, jjjjjjjjjjjj + kkkkkkkkkkkk + 999999999, kkkkkkkkkkkk"
    assert body[5:13] == [
        f"                A[{sub}] = (",
        f"                    B[{sub}] *",
        "                    2.0)",
        f"                A[{sub}] = B[{sub}]",
        "                if (iiiiiiiiiiii + jjjjjjjjjjjj < n and",
        "                        jjjjjjjjjjjj + kkkkkkkkkkkk < n and",
        "                        iiiiiiiiiiii < kkkkkkkkkkkk):",
        "                    pass"]
    assert_roundtrip(deep)


def test_large_procedure_prints_in_linear_work(monkeypatch):
    """10,000 statements: no line is long enough to need the line breaker,
    so it is never called, and respelling 5,000 buffers all named 't'
    probes a linear number of candidate names (printing used to run a
    formatter over every statement and try t_1, t_2, ... from the start for
    each buffer)."""
    from exo_hl.core_ir import printer

    n = 5000
    x = Sym("x")
    xt = IR.Tensor((IR.Const(n, type=IR.Int), ), False, IR.F32)
    body = []
    for k in range(n):
        t = Sym("t")
        body.append(IR.Alloc(t, IR.F32, DRAM))
        body.append(IR.Assign(x, IR.F32, (IR.Const(k, type=IR.Int), ),
                              IR.Read(t, (), type=IR.F32)))
    big = IR.Proc("big", (IR.FnArg(x, xt, DRAM, None), ), (), tuple(body),
                  None, None)

    calls = {"break": 0, "probe": 0}
    real_break = printer.break_line

    def counting_break(line, *a):
        calls["break"] += 1
        return real_break(line, *a)

    class CountingSet(set):
        def __contains__(self, item):
            calls["probe"] += 1
            return super().__contains__(item)

    class CountingNamer(printer._Namer):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.avoid = CountingSet(self.avoid)

    monkeypatch.setattr(printer, "break_line", counting_break)
    monkeypatch.setattr(printer, "_Namer", CountingNamer)
    text = printer.proc_to_str(big)
    lines = text.splitlines()
    assert len(lines) == 1 + 2 * n
    assert lines[-2:] == [f"    t_{n - 1}: f32 @ DRAM",
                          f"    x[{n - 1}] = t_{n - 1}"]
    assert calls["break"] == 0
    assert calls["probe"] <= 3 * n


@proc
def _negated_saturating(y: i32[4]):
    t: i32
    t = 10000000000.0
    y[0] = -t
    y[1] = -(-10000000000.0)


def test_negation_of_a_literal_reads_back_as_a_negation(assert_roundtrip):
    """``inline_assign`` puts the literal under the negation of ``-t``:
    printed ``-10000000000.0`` it read back as the literal, which
    saturates to -2**31 where the negation of the saturated 2**31 - 1 is
    -2**31 + 1 (a new seed of the literal fuzzer, session 12)."""
    import numpy as np
    q = _negated_saturating.inline_assign('t = _')
    assert "y[0] = -(+10000000000.0)" in str(q)
    r = assert_roundtrip(q)
    for p in (_negated_saturating, q, r):
        y = np.zeros(4, np.int32)
        p.interpret(y)
        assert list(y[:2]) == [-2**31 + 1, -2**31]
