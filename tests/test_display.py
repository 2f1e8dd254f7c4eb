"""Seeing procedures: highlighted HTML, diffs between two procedures, and
the scheduling history as a snippet that re-runs."""
from __future__ import annotations

import inspect

from exo_hl import DRAM, DRAM_STATIC, Procedure, f32, proc, seq, size
from exo_hl.core_ir.printer import alpha_equal
from exo_hl.cursors import ExprCursor


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
         C: f32[M, N]):
    assert M % 4 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def _scheduled():
    p = gemm.split('i', 4, 'io', 'ii', tail='perfect')
    p = p.reorder('ii', 'j')
    p = p.stage_mem(p.find_loop('k'), 'C[4*io+ii, j:j+1]', 'acc')
    return p.set_memory('acc', DRAM_STATIC)


def test_history_reruns_to_the_same_procedure():
    p = _scheduled()
    text = p.history()
    lines = [ln for ln in text.splitlines() if not ln.startswith("from ")]
    assert lines[0] == "p = gemm"
    assert lines[1] == "p = p.split('i', 4, 'io', 'ii', tail='perfect')"
    assert "p = p.stage_mem(p.find_loop('k'), " in text
    assert lines[-1] == "p = p.set_memory('acc', DRAM_STATIC)"
    scope = {"gemm": gemm, "DRAM_STATIC": DRAM_STATIC}
    exec(text, scope)
    assert alpha_equal(scope["p"].ir(), p.ir())


def test_history_of_an_unscheduled_procedure():
    assert gemm.history() == f"from {__name__} import gemm\np = gemm"


def test_diff_shows_changed_lines_only():
    p = gemm.split('i', 4, 'io', 'ii', tail='perfect')
    d = gemm.diff(p)
    text = str(d)
    assert "-    for i in seq(0, M):" in text
    assert "+    for io in seq(0, M / 4):" in text
    assert "assert M % 4 == 0" not in [ln.strip("+- ") for ln in d.lines
                                       if ln[:1] in "+-"]
    assert "background:#e6ffed" in d._repr_html_()
    assert str(gemm.diff(gemm)) == "(no difference)"
    assert not gemm.diff(gemm)


def test_html_is_highlighted():
    h = gemm._repr_html_()
    assert "<span" in h and "gemm" in h and "seq" in h


def test_every_public_method_has_a_docstring():
    missing = [n for n, f in inspect.getmembers(Procedure,
                                                inspect.isfunction)
               if not n.startswith("_") and not (f.__doc__ or "").strip()]
    assert missing == []


def test_scheduling_docstrings_show_an_example():
    for n in ("split", "reorder", "stage_mem", "replace", "fission_after",
              "bind_expr", "parallelize", "compile", "cpu_features"):
        assert ">>>" in getattr(Procedure, n).__doc__, n


@proc
def two_writes(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        x[i] = 1.0
        y[i] = 2.0


def test_history_shows_gap_and_block_cursors():
    p = two_writes.reorder_stmts(two_writes.find('x[_] = _').expand(0, 1))
    p = p.fission(p.find('y[_] = _').after())
    text = p.history()
    assert text.splitlines()[2:] == [
        "p = p.reorder_stmts(p.find('x[i] = 1.0').expand(0, 1))",
        "p = p.fission(p.find('y[i] = 2.0').after())"]
    scope = {"two_writes": two_writes}
    exec(text, scope)
    assert alpha_equal(scope["p"].ir(), p.ir())


# ---------------------------------------------------------------------------
# exec(p.history()) in a fresh namespace rebuilds p (issue 34 item 8: the
# snippet named the procedure, memories and instructions without importing
# them, so exec raised NameError)

def _reruns(p):
    text = p.history()
    scope = {}
    exec(text, scope)
    assert str(scope["p"]) == str(p), text
    assert alpha_equal(scope["p"].ir(), p.ir())
    return text


@proc
def axpy8(n: size, a: f32[n] @ DRAM, x: f32[n, 8] @ DRAM, y: f32[8] @ DRAM):
    for k in seq(0, n):
        for i in seq(0, 8):
            y[i] += a[k] * x[k, i]


def test_history_imports_what_it_names():
    text = _reruns(_scheduled())
    assert f"from {__name__} import gemm" in text
    assert "from exo_hl import DRAM_STATIC" in text
    _reruns(gemm)
    _reruns(two_writes.fission(two_writes.find('y[_] = _').before()))


def test_history_with_avx2_instructions_and_set_memory_reruns():
    from exo_hl.hw_libs.avx2 import (AVX2, mm256_fmadd_bcst_ps,
                                     mm256_loadu_ps, mm256_storeu_ps)
    p = axpy8.stage_mem(axpy8.find_loop('k'), 'y[0:8]', 'yr')
    p = p.stage_mem(p.find_loop('i'), 'x[k, 0:8]', 'xr')
    p = p.set_memory('yr', AVX2).set_memory('xr', AVX2)
    p = p.replace(p.find_loop('i0'), mm256_loadu_ps)
    p = p.replace(p.find_loop('i1'), mm256_loadu_ps)
    p = p.replace(p.find_loop('i'), mm256_fmadd_bcst_ps)
    p = p.replace(p.find_loop('i0'), mm256_storeu_ps)
    text = _reruns(p)
    assert ("from exo_hl.hw_libs.avx2 import AVX2, mm256_loadu_ps, "
            "mm256_fmadd_bcst_ps, mm256_storeu_ps") in text


def test_history_with_configs_and_an_unimportable_name():
    from exo_hl.hw_libs.gemmini import ConfigLoad
    from exo_hl import i8

    @proc
    def load(A: i8[16, 16] @ DRAM, B: i8[16, 16] @ DRAM):
        for i in seq(0, 16):
            for j in seq(0, 16):
                B[i, j] = A[i, j]
    p = load.configwrite_at(load.find_loop('i'), ConfigLoad, 'src_stride',
                            'stride(A, 0)', before=True)
    text = p.history()
    assert "from exo_hl.hw_libs.gemmini import ConfigLoad" in text
    # a procedure local to this function: no module holds it
    assert "# load: not a global of any imported module" in text
    scope = {"load": load}
    exec(text, scope)
    assert str(scope["p"]) == str(p)


def test_history_spells_each_step_as_the_call_had_it():
    """A step's cursors are spelled when ``history()`` is read; everything
    else at the call, so a list the caller changes afterwards (or a cursor
    inside it) reads as it was passed."""
    from exo_hl.display import StepText, step_text
    names = ['io', 'ii']
    p = gemm.split('i', 4, *names, tail='perfect')
    names[0] = 'changed'
    loops = [p.find_loop('io'), (p.find_loop('j'), 3)]
    eager = step_text('m', (loops, 'x'), {'k': names})
    lazy = StepText('m', (loops, 'x'), {'k': names})
    loops[0] = None
    names.append('more')
    assert str(lazy) == eager == (
        "p.m([p.find_loop('io'), (p.find_loop('j'), 3)], 'x', "
        "k=['changed', 'ii'])")
    assert "p = p.split('i', 4, 'io', 'ii', tail='perfect')" in p.history()


@proc
def _repeats(n: size, x: f32[n], y: f32[n]):
    c: f32
    c = 0.5
    for i in seq(0, n):
        y[i] = x[i] * c + c
        y[i] = y[i] * c
    for i in seq(0, n):
        x[i] = x[i] * c


def _expr_cursors(stmt):
    """Every expression cursor inside the statement cursor ``stmt``."""
    from exo_hl.core_ir.nodes import IR
    out, todo = [], [((), stmt.node())]
    while todo:
        epath, node = todo.pop()
        for field in node._fields:
            v = getattr(node, field)
            for i, x in (enumerate(v) if isinstance(v, tuple)
                         else [(None, v)]):
                if isinstance(x, IR.expr):
                    sub = epath + ((field, i), )
                    out.append(ExprCursor(stmt.proc(), stmt.path(), sub))
                    todo.append((sub, x))
    return out


def test_history_spells_every_cursor_so_that_it_finds_it_again():
    """A cursor's spelling in ``history()`` finds that cursor, not an
    earlier node of the same text: every statement and every expression
    of procedures with repeated text (a read of the scalar ``c`` was
    spelled ``p.find('c')``, which finds the allocation ``c: f32``)."""
    from exo_hl.core_ir.paths import walk_with_paths
    from exo_hl.cursors import StmtCursor
    from exo_hl.display import _cursor_text
    from exo_hl.hw_libs import avx2
    from exo_hl.stdlib import vectorize
    vec = vectorize(_repeats, 'i #1', 8, avx2.AVX2, avx2.INSTRS, tail='cut')
    for p in (_repeats, _scheduled(), vec):
        cursors = []
        for path, _ in walk_with_paths(p.ir().body):
            s = StmtCursor(p, path)
            cursors += [s] + _expr_cursors(s)
        assert len(cursors) > 20
        for c in cursors:
            text = _cursor_text(c, "p")
            assert eval(text, {"p": p}) == c, (text, c)


def test_history_reruns_vectorize_of_a_literal():
    """``vectorize`` binds a literal to ``c`` and broadcasts the read of
    ``c`` (a cursor on a bare read): ``exec(p.history())`` rebuilds it."""
    from exo_hl.hw_libs import avx2
    from exo_hl.stdlib import vectorize
    p = vectorize(_repeats, 'i #1', 8, avx2.AVX2, avx2.INSTRS, tail='cut')
    ns = {}
    exec(p.history().replace("from tests.test_display import _repeats",
                             ""), {**globals(), **ns}, ns)
    assert str(ns["p"]) == str(p)
