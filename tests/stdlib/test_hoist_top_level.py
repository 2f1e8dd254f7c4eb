"""``hoist`` (and ``bind_const``) put the assignment at the top of the
procedure, as docs/api.md §9 says, also when a loop comes before the one it
left: its own allocation, lifted out of the loop, used to stop it right
there. The allocation moves to the front, then the assignment up to it,
each swap proven by ``reorder_stmts``; an earlier statement it does not
commute with keeps it after that statement."""
from __future__ import annotations

from exo_hl import f32, proc, seq, size
from exo_hl.stdlib import bind_const, hoist


@proc
def after_a_loop(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] + 1.0
    for j in seq(0, n):
        c: f32
        c = 0.5
        z[j] = c * x[j]


def test_hoist_goes_before_earlier_loops(equiv, same_text):
    p = hoist(after_a_loop, "c = _")
    same_text(p, """
def after_a_loop(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM,
                 z: f32[n] @ DRAM):
    c: f32 @ DRAM
    c = 0.5
    for i in seq(0, n):
        y[i] = x[i] + 1.0
    for j in seq(0, n):
        z[j] = c * x[j]""")
    equiv(after_a_loop, p, [{"n": 1}, {"n": 5}])


def test_bind_const_in_the_second_loop_goes_to_the_top(equiv, same_text):
    p = bind_const(after_a_loop, "0.5", "half")
    same_text(p, """
def after_a_loop(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM,
                 z: f32[n] @ DRAM):
    half: f32 @ DRAM
    half = 0.5
    for i in seq(0, n):
        y[i] = x[i] + 1.0
    for j in seq(0, n):
        c: f32 @ DRAM
        c = half
        z[j] = c * x[j]""")
    equiv(after_a_loop, p, [{"n": 1}, {"n": 4}])


@proc
def reads_a_result(n: size, x: f32[n], y: f32[n], z: f32[n]):
    for i in seq(0, n):
        y[i] = x[i] + 1.0
    for j in seq(0, n):
        c: f32
        c = y[0]
        z[j] = c * x[j]


def test_hoist_stays_after_a_loop_it_does_not_commute_with(equiv):
    # c = y[0] reads what the first loop writes: it may not go above it
    p = hoist(reads_a_result, "c = _")
    lines = [ln.strip() for ln in str(p).splitlines()]
    assert lines.index("c = y[0]") > lines.index("y[i] = x[i] + 1.0")
    assert lines.index("c = y[0]") < lines.index("for j in seq(0, n):")
    equiv(reads_a_result, p, [{"n": 1}, {"n": 5}])
