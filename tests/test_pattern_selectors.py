"""Pattern selectors and buffer patterns (issue 33, items 10 and 12).

A ``#`` that is not one trailing ``#<digits>`` was read as a Python comment,
so ``'i #-1'`` silently meant the first ``i`` loop and ``'i #1 #2'`` the
second; ``'x : _'`` matched allocations only, not arguments."""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, f32, proc, seq, size
from exo_hl.cursors import ArgCursor


@proc
def three(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] = x[i]
    for i in seq(0, n):
        y[i] += x[i]
    for i in seq(0, n):
        y[i] += 1.0


@pytest.mark.parametrize("bad", ["i #-1", "i #x", "i #1.0", "i #+1",
                                 "i #1 #2", "i # 1 2", "i #", "#1",
                                 "for i in _: _ # first", "i #\u0661"])
def test_bad_selectors_are_refused(bad):
    with pytest.raises(SchedulingError, match="selector|pattern"):
        three.find(bad)
    with pytest.raises(SchedulingError):
        three.parallelize(bad)


@pytest.mark.parametrize("good,k", [("i", 0), ("i #0", 0), ("i #1", 1),
                                    ("i#2", 2), ("i # 2", 2),
                                    ("for i in _: _ #1", 1)])
def test_digit_selectors_pick_the_kth(good, k):
    assert three.find(good).path() == (("body", k), )


def test_selector_past_the_matches_is_refused():
    with pytest.raises(SchedulingError, match="no code matches"):
        three.find("i #3")


def test_typed_buffer_pattern_matches_an_argument():
    c = three.find("x : _")
    assert isinstance(c, ArgCursor) and c.name() == "x"
    assert three.find("x : f32[_]").name() == "x"
    with pytest.raises(SchedulingError):
        three.find("x : i8[_]")      # the type must still match


def test_typed_buffer_pattern_names_an_argument_for_a_rewrite():
    p = three.set_precision("x : _", "f64")
    assert "x: f64[n]" in str(p)


@proc
def alloc_i_first(x: f32[4], y: f32[4]):
    for a in seq(0, 4):
        i: f32[4]
        for k in seq(0, 4):
            i[k] = x[k]
        y[a] = i[a]
    for i in seq(0, 4):
        y[i] += 1.0
    for i in seq(0, 4):
        y[i] += 2.0


def test_a_count_over_loops_and_buffers_is_refused():
    # 'i #1' was the second i loop to unroll (loops counted) but the first
    # to stage_mem (the allocation i counted too): staged around the loop
    # adding 1.0, silently; now a statement search counting both refuses
    p = alloc_i_first
    assert p.find_loop('i #1').path() == (("body", 2), )
    for call in (lambda: p.find('i #1'),
                 lambda: p.stage_mem('i #1', 'y[0:4]', 'yy'),
                 lambda: p.fission_after('i #0')):
        with pytest.raises(SchedulingError, match="ambiguous.*for i in _"):
            call()
    q = p.stage_mem('for i in _: _ #1', 'y[0:4]', 'yy')
    assert q.body()[1].text() == p.body()[1].text()
    assert p.find('i : _ #0').is_alloc()
    assert p.find('i').is_alloc()       # no count: the first match


@proc
def negated(b: bool, x: f32[4]):
    if not b:
        x[0] = 1.0


def test_not_name_is_an_expression_not_a_loop_nest():
    # 'not b' was read as the loop nest shorthand 'a b' (a loop 'not'
    # holding a loop 'b') and matched nothing
    for pat in ("not b", "not _", "not b #0"):
        assert negated.find(pat).path() == ((("body", 0), ),
                                            (("cond", None), ))
