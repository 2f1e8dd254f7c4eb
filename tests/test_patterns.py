"""Pattern strings: parsing, matching in program order, ``#k``, errors."""
from __future__ import annotations

import pytest

from exo_hl import (DRAM, DRAM_STATIC, SchedulingError, config, f32, i8,
                    instr, proc, seq, size, stride)  # noqa: F401
from exo_hl.core_ir.extern import relu  # noqa: F401
from exo_hl.cursors import ArgCursor, ExprCursor, StmtCursor
from exo_hl.core_ir.printer import expr_to_str, stmt_to_str
from exo_hl.patterns import PatternError, parse


@config
class Cfg:
    scale: stride


@proc
def helper(n: size, x: [f32][n] @ DRAM):
    for i in seq(0, n):
        x[i] = 0.0


@proc
def prog(M: size, N: size, A: f32[M, N] @ DRAM, C: f32[M, N] @ DRAM,
         s: f32 @ DRAM):
    assert M % 4 == 0
    t: f32[16] @ DRAM_STATIC
    for i in seq(0, M):
        for j in seq(0, N):
            C[i, j] = 0.0
            C[i, j] += A[i, j] * s
        if i < 4:
            t[0] = relu(A[i, 0])
        else:
            pass
        helper(N, C[i, 0:N])
        Cfg.scale = stride(A, 0)
    for i in seq(0, M + 1 - 1):
        row = A[i, 0:N]
        s = row[0] * 2.0


def text(c):
    if isinstance(c, StmtCursor):
        return stmt_to_str(c.node()).splitlines()[0]
    if isinstance(c, ExprCursor):
        return expr_to_str(c.node())
    return c.name()


def texts(pattern):
    return [text(c) for c in prog.find(pattern, many=True)]


def no_match(pattern):
    with pytest.raises(SchedulingError, match="no .* matches the pattern"):
        prog.find(pattern, many=True)
    return True


def test_parse_kinds_and_index():
    assert parse("i").kind == "name"
    assert parse("i #1").k == 1 and parse("i #1").name == "i"
    assert parse("for i in _: _").kind == "stmt"
    assert parse("C[_] += _").kind == "stmt"
    assert parse("A[i, k]").kind == "expr"
    assert parse("_ * _ #2").k == 2
    assert parse("  t : _  ").kind == "stmt"
    with pytest.raises(PatternError):
        parse("for i in")
    with pytest.raises(SchedulingError):  # PatternError is a SchedulingError
        parse("x = 1; y = 2")
    with pytest.raises(PatternError):
        parse("")


def test_loops_by_name_and_index():
    loops = prog.find("i", many=True)
    assert [c.node().iter.name for c in loops] == ["i", "i"]
    assert [c.path() for c in loops] == [(("body", 1), ), (("body", 2), )]
    second = prog.find("i #1")
    assert second == loops[1]
    assert prog.find_loop("j").path() == (("body", 1), ("body", 0))
    assert prog.find("for i in _: _ #1") == loops[1]
    assert prog.find("for j in seq(0, N): _").path() == \
        (("body", 1), ("body", 0))
    assert texts("for i in seq(0, M + 1 - 1): _") == \
        ["for i in seq(0, M + 1 - 1):"]
    # the body may be spelled out as a prefix of statements
    assert len(texts("for j in _: C[i, j] = _")) == 1
    assert no_match("for j in _: C[i, j] += _")


def test_buffers_allocations_and_args():
    t = prog.find("t")
    assert isinstance(t, StmtCursor) and t.is_alloc()
    assert prog.find("t : _") == t
    assert prog.find("t : f32[16]") == t
    assert prog.find("t : f32[_] @ DRAM_STATIC") == t
    assert no_match("t : i8[_]")
    a = prog.find("A")
    assert isinstance(a, ArgCursor) and a.name() == "A" and a.index() == 2
    assert prog.find("row").node().name.name == "row"  # a window statement


def test_statement_patterns():
    assert texts("C[_] += _") == ["C[i, j] += A[i, j] * s"]
    assert texts("C[i, j] = _") == ["C[i, j] = 0.0"]
    assert texts("C[_] = _") == ["C[i, j] = 0.0"]
    assert texts("C[i, _] = 0.0") == ["C[i, j] = 0.0"]
    assert texts("t[_] = _") == ["t[0] = relu(A[i, 0])"]
    assert texts("s = _") == ["s = row[0] * 2.0"]
    assert texts("Cfg.scale = _") == ["Cfg.scale = stride(A, 0)"]
    assert texts("helper(_)") == ["helper(N, C[i, 0:N])"]
    assert texts("helper(N, C[i, 0:N])") == ["helper(N, C[i, 0:N])"]
    assert texts("if _: _") == ["if i < 4:"]
    assert texts("if i < 4: _") == ["if i < 4:"]
    assert texts("if i < 4: _\nelse: pass") == ["if i < 4:"]
    assert texts("pass") == ["pass"]
    assert texts("row = A[i, _]") == ["row = A[i, 0:N]"]
    assert texts("row = A[i, 0:N]") == ["row = A[i, 0:N]"]


def test_expression_patterns_program_order():
    assert texts("A[i, j]") == ["A[i, j]"]
    assert texts("A[_]") == ["A[i, j]", "A[i, 0]", "A[i, 0:N]"]
    assert texts("A[i, 0]") == ["A[i, 0]"]
    assert texts("_ * _") == ["A[i, j] * s", "row[0] * 2.0"]
    assert texts("_ * _ #1") == ["row[0] * 2.0"]
    assert texts("M + 1") == ["M + 1"]
    assert texts("M + 1 - 1") == ["M + 1 - 1"]
    assert texts("stride(A, 0)") == ["stride(A, 0)"]
    assert texts("stride(A, _)") == ["stride(A, 0)"]
    assert texts("relu(_)") == ["relu(A[i, 0])"]
    assert texts("i < 4") == ["i < 4"]
    assert texts("2.0") == ["2.0"]
    c = prog.find("A[i, j]")
    assert isinstance(c, ExprCursor)
    assert c.stmt().node() == prog.find("C[_] += _").node()


def test_names_as_expressions_via_find_want():
    from exo_hl.cursors import find_want
    reads = find_want(prog, "N", "expr", many=True)
    assert [text(c) for c in reads] == ["N"] * len(reads)
    # N appears in: j loop bound, helper's size argument, the window bound,
    # and the second window bound
    assert len(reads) == 4
    assert find_want(prog, "i", "loop").path() == (("body", 1), )


def test_no_match_errors_name_pattern_and_proc():
    for pat in ["q", "k #0", "i #2", "B[_] += _", "foo(_)", "_ / _",
                "for q in _: _", "t : i8"]:
        with pytest.raises(SchedulingError) as e:
            prog.find(pat)
        msg = str(e.value)
        assert repr(pat) in msg and "prog" in msg
    with pytest.raises(SchedulingError, match="no loop"):
        prog.find_loop("t")


def test_wildcard_names():
    assert len(prog.find("for _ in _: _", many=True)) == 3
    assert texts("_[_] += _") == ["C[i, j] += A[i, j] * s"]
    assert texts("_(_)") == ["relu(A[i, 0])", "helper(N, C[i, 0:N])"]


def test_loop_nest_shorthand():
    # 'a b': the loop over a with a loop over b directly in its body
    assert prog.find("i j") == prog.find("i")
    assert prog.find("i j").path() == (("body", 1), )
    assert prog.find("_ j") == prog.find("i")
    assert len(prog.find("i j", many=True)) == 1   # the second i has no j
    assert no_match("i j #1")
    assert no_match("j i")
    assert parse("i  j #0").k == 0

    @proc
    def deep(n: size, x: f32[n, n, n]):
        for a in seq(0, n):
            for b in seq(0, n):
                for c in seq(0, n):
                    x[a, b, c] = 0.0
    assert deep.find("b c").path() == (("body", 0), ("body", 0))
    with pytest.raises(SchedulingError, match="no .* matches"):
        deep.find("a c")      # c is not directly inside a


def test_bare_name_matches_indexed_writes():
    # as in Exo: 'x = _' matches x[i] = _, 'x += _' matches x[i] += _
    assert texts("C = _") == ["C[i, j] = 0.0"]
    assert texts("C += _") == ["C[i, j] += A[i, j] * s"]
    assert texts("t = _") == ["t[0] = relu(A[i, 0])"]
    assert texts("s = _") == ["s = row[0] * 2.0"]
    assert no_match("A = _")
    # a bare name in an expression still means the unindexed read only
    assert texts("_ * s") == ["A[i, j] * s"]
    assert no_match("_ * C")


@proc
def _shifted(n: size, x: f32[n + 8], y: f32[n + 8]):
    for i in seq(0, n):
        y[i] = x[i + 1] * 2.0


@pytest.mark.parametrize("call", [
    lambda p, s: p.find(s),
    lambda p, s: p.cut_loop("i", s),
    lambda p, s: p.rewrite_expr("n", s),
    lambda p, s: p.specialize(p.find_loop("i"), [s + " > 0"]),
    lambda p, s: p.shift_loop("i", s),
    lambda p, s: p.add_guard(p.find_loop("i"), s + " > 0"),
])
def test_expressions_too_deep_for_python_are_scheduling_errors(call):
    """Python's parser raises RecursionError on an expression of a few
    thousand terms; a pattern or an expression argument that deep is a
    SchedulingError, quoted shortly."""
    text = "+".join(["n"] * 5000)
    with pytest.raises(SchedulingError) as e:
        call(_shifted, text)
    assert len(str(e.value)) < 1000
