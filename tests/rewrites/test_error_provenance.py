"""Errors after many rewrites still point at the user's algorithm.

A SchedulingError raised on a heavily scheduled procedure must name the
file:line of the original statement the offending one was derived from
(srcinfo survives split, reorder, stage_mem, unroll, inline, ...) and print
that statement as it reads *now*, so the user can find both.
"""
from __future__ import annotations

import os

import pytest

from exo_hl import DRAM_STATIC, SchedulingError, f32, proc, seq, size

HERE = os.path.abspath(__file__)


@proc
def scale_row(n: size, a: [f32][n], b: [f32][n]):
    for t in seq(0, n):
        b[t] = a[t] * 2.0


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
         C: f32[M, N], D: f32[M, N]):
    assert M % 4 == 0
    assert N % 16 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]
    for i in seq(0, M):
        scale_row(N, C[i, 0:N], D[i, 0:N])


def _line(snippet: str, after: str = "def gemm(") -> int:
    """1-based line in this file of the first ``snippet`` after ``after``."""
    with open(HERE) as f:
        lines = f.read().splitlines()
    start = next(n for n, l in enumerate(lines) if after in l)
    for n in range(start, len(lines)):
        if snippet in lines[n]:
            return n + 1
    raise AssertionError(snippet)


def _tiled():
    p = gemm.split('i', 4, 'io', 'ii', tail='perfect')
    p = p.split('j', 16, 'jo', 'ji', tail='perfect')
    p = p.reorder('ii', 'jo')
    p = p.split('k', 4, 'ko', 'ki', tail='cut')
    p = p.fission_after('ko', n_lifts=2)
    p = p.reorder('ji', 'ko')
    p = p.reorder('ii', 'ko')
    p = p.reorder('ji', 'ki')
    p = p.reorder('ii', 'ki')
    jo = p.find_loop('jo')
    p = p.stage_mem((jo.body()[0], jo.body()[1]),
                    'C[4*io:4*io+4, 16*jo:16*jo+16]', 'Ct')
    p = p.set_memory('Ct', DRAM_STATIC)
    p = p.unroll('ii')
    p = p.unroll('ki')
    p = p.inline('scale_row(_)')
    p = p.parallelize('io')
    return p.simplify()


@pytest.fixture(scope="module")
def tiled():
    return _tiled()


def _err(fn) -> str:
    with pytest.raises(SchedulingError) as ei:
        fn()
    return str(ei.value)


def test_loop_error_names_original_loop_line(tiled):
    msg = _err(lambda: tiled.parallelize('ko'))
    head = msg.splitlines()[0]
    # 'ko' came from splitting 'for k': the error points at that line
    assert head.startswith(f"{HERE}:{_line('for k in seq(0, K):')}: ")
    assert "in procedure 'gemm'" in head
    assert "parallelize" in head and "race" in head
    body = [l.strip() for l in msg.splitlines()[1:]]
    assert body[0] == "for ko in seq(0, K / 4):"  # as it reads now
    assert any(l.startswith("Ct[0, ji] += A[4 * io, 4 * ko]") for l in body)


def test_statement_error_prints_current_text(tiled):
    """A bad stage_mem on an unrolled, staged statement."""
    s = tiled.find('Ct[1, ji] += _')
    msg = _err(lambda: tiled.stage_mem(s, 'Ct[0:1, 0:16]', 'z'))
    head, *rest = msg.splitlines()
    reduce_line = _line('C[i, j] += A[i, k] * B[k, j]')
    assert head.startswith(f"{HERE}:{reduce_line}: in procedure 'gemm': ")
    assert "stage_mem" in head and "cover" in head
    assert [l.strip() for l in rest] == [
        "Ct[1, ji] += A[4 * io + 1, 4 * ko] * B[4 * ko, 16 * jo + ji]"]
    # the original spelling is not what is shown
    assert "C[i, j]" not in msg


def test_generated_staging_code_points_at_its_origin(tiled):
    """The load nest stage_mem made carries a real source line too."""
    msg = _err(lambda: tiled.reorder_stmts(tiled.find_loop('i0'),
                                           tiled.find_loop('ko')))
    head, *rest = msg.splitlines()
    path, line = head.split(": in procedure")[0].rsplit(":", 1)
    assert path == HERE
    assert _line("for i in seq(0, M):") <= int(line) \
        <= _line('C[i, j] += A[i, k] * B[k, j]')
    assert "commute" in head
    assert rest[0].strip() == "for i0 in seq(0, 4):"
    assert "Ct[i0, i1] = C[4 * io + i0, 16 * jo + i1]" in msg


def test_inlined_statement_names_callee_line(tiled):
    """After inline, a statement of the callee body names the callee's
    source line, and reads with the caller's buffers substituted."""
    loop = tiled.find_loop('t')
    msg = _err(lambda: tiled.unroll(loop))
    head, *rest = msg.splitlines()
    assert head.startswith(
        f"{HERE}:{_line('for t in seq(0, n):', 'def scale_row(')}: ")
    assert "unroll" in head and "constant" in head
    assert rest[0].strip() == "for t in seq(0, N):"
    assert "D[i, t] = C[i, t] * 2.0" in [l.strip() for l in rest]


def test_errors_on_every_level_of_derivation():
    """Each intermediate procedure also reports the original line."""
    p = gemm
    for step in (lambda q: q.split('i', 4, 'io', 'ii', tail='perfect'),
                 lambda q: q.split('j', 16, 'jo', 'ji', tail='perfect'),
                 lambda q: q.reorder('ii', 'jo')):
        p = step(p)
        msg = _err(lambda: p.remove_loop('k'))
        assert msg.startswith(f"{HERE}:{_line('for k in seq(0, K):')}: ")
        assert "for k in seq(0, K):" in msg
