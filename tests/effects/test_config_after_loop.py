"""A config field a loop writes with a value of the iteration (``C.c = i``)
has, after the loop, the value of the last iteration when the loop runs and
its value before when it may run zero times (``effects.lift.valg_loop``).
It was ⊥ (unknown), so ``y[C.c % 8]`` after ``for i in seq(0, n): C.c =
i`` raised BoundsError. Values that depend on the state the body writes
(``C.c = (C.c + 1) % 8``) are what the last iteration wrote from some
state (``effects.loop_values``): ``y[C.c]`` after or inside such a loop
is proven when every value it writes is in bounds and the value before
is too (or the loop surely runs)."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import BoundsError, config, f32, index, proc, seq, size


@config
class LCf:
    c: index
    d: index


@proc
def mod_after(n: size, y: f32[8]):
    for i in seq(0, n):
        LCf.c = i
    y[LCf.c % 8] = 1.0


@proc
def last_after(n: size, y: f32[n]):
    for i in seq(0, n):            # a size is >= 1: the loop runs
        LCf.c = 2 * i + 1
    y[(LCf.c - 1) / 2] = 2.0


@proc
def maybe_zero_trip(n: size, y: f32[n]):
    LCf.c = 0
    for i in seq(0, n - 1):        # may run zero times: LCf.c stays 0
        LCf.c = i + 1
    y[LCf.c] = 3.0


@proc
def guarded_after(n: size, y: f32[8]):
    LCf.d = 1
    for i in seq(0, n):
        if i == 3:
            LCf.d = 5
    y[LCf.d] = 4.0


def test_printed():
    assert str(mod_after) == (
        "def mod_after(n: size, y: f32[8] @ DRAM):\n"
        "    for i in seq(0, n):\n"
        "        LCf.c = i\n"
        "    y[LCf.c % 8] = 1.0")


@pytest.mark.parametrize("p, where", [
    (mod_after, lambda n: (n - 1) % 8),
    (last_after, lambda n: n - 1),
    (maybe_zero_trip, lambda n: n - 1),
    (guarded_after, lambda n: 5 if n > 3 else 1),
])
def test_interpret_and_c_agree(p, where):
    f = p.compile()
    rng = np.random.default_rng(15)
    for n in (1, 2, 3, 4, 5, 9, 17):
        m = 8 if p in (mod_after, guarded_after) else n
        y0 = rng.integers(-4, 5, size=m).astype(np.float32)
        a, b = y0.copy(), y0.copy()
        p.interpret(n, a, config_state={(LCf, "c"): -7, (LCf, "d"): -7})
        f.set_config(LCf, "c", -7)
        f.set_config(LCf, "d", -7)
        f(n, b)
        assert np.array_equal(a, b)
        changed = np.flatnonzero(a != y0)
        k = where(n)
        assert a[k] != y0[k] or y0[k] in (1.0, 2.0, 3.0, 4.0)
        assert set(changed) <= {k}


def _refused(src_fn):
    with pytest.raises(BoundsError) as e:
        src_fn()
    return str(e.value)


def test_zero_trip_keeps_the_value_before():
    def build():
        @proc
        def zt(n: size, y: f32[n]):
            for i in seq(0, n - 1):
                LCf.c = i + 1
            y[LCf.c] = 3.0
    # no write before the loop: n = 1 leaves the caller's LCf.c
    assert "LCf.c" in _refused(build)


def test_last_value_must_be_in_bounds():
    def build():
        @proc
        def big(n: size, y: f32[8]):
            for i in seq(0, n):
                LCf.c = i
            y[LCf.c] = 1.0
    assert "counterexample" in _refused(build)


def test_value_depending_on_the_written_state_is_bounded_by_its_last_write():
    # after and inside the loop, the value is what the last (previous)
    # iteration wrote from some state: (u + 1) % 8 is in 0 .. 7
    @proc
    def acc(n: size, y: f32[8]):
        LCf.c = 0
        for i in seq(0, n):
            LCf.c = LCf.c + 1
        y[LCf.c % 8] = 1.0
    assert "y[LCf.c % 8] = 1.0" in str(acc)

    def grows():
        @proc
        def g(n: size, y: f32[8]):
            LCf.c = 0
            for i in seq(0, n):
                LCf.c = LCf.c + 1
            y[LCf.c] = 1.0

    def zero_trip():               # the caller's value when it runs 0 times
        @proc
        def z(n: size, y: f32[8]):
            for i in seq(0, n - 1):
                LCf.c = (LCf.c + 1) % 8
            y[LCf.c] = 1.0

    def first_iteration():         # the first iteration reads the caller's
        @proc
        def f(n: size, y: f32[8]):
            for i in seq(0, n):
                y[LCf.c] += 1.0
                LCf.c = (LCf.c + 1) % 8
    assert "LCf.c after the loop at line" in _refused(grows)
    assert "counterexample" in _refused(zero_trip)
    assert "LCf.c at the start of iteration i" in _refused(first_iteration)


@proc
def ring(n: size, y: f32[8]):
    assert LCf.c >= 0
    assert LCf.c < 8
    for i in seq(0, n):
        y[LCf.c] += 1.0
        LCf.c = (LCf.c + 3) % 8
    y[LCf.c] += 10.0


def test_ring_index_in_and_after_the_loop():
    assert str(ring).endswith("        LCf.c = (LCf.c + 3) % 8\n"
                              "    y[LCf.c] += 10.0")
    f = ring.compile()
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 8, 9, 30):
        c0 = int(rng.integers(0, 8))
        y0 = rng.integers(-4, 5, size=8).astype(np.float32)
        a, b = y0.copy(), y0.copy()
        st = {(LCf, "c"): c0}
        ring.interpret(n, a, config_state=st)
        f.set_config(LCf, "c", c0)
        f(n, b)
        assert np.array_equal(a, b)
        assert st[(LCf, "c")] == f.get_config(LCf, "c") == (c0 + 3 * n) % 8
        want = y0.copy()
        for k in range(n):
            want[(c0 + 3 * k) % 8] += 1.0
        want[(c0 + 3 * n) % 8] += 10.0
        assert np.array_equal(a, want)


def test_guarded_write_of_an_iteration_value_stays_unknown():
    def build():
        @proc
        def gi(n: size, y: f32[8]):
            LCf.d = 0
            for i in seq(0, n):
                if i < 3:
                    LCf.d = i + 6
            y[LCf.d] = 1.0
    _refused(build)


# The values inside a loop whose lower bound reads a field written before
# it: the bound was composed with the writes before the loop twice
# (``C.k = C.k + 1; for i in seq(C.k, n)`` took the first iteration to be
# k + 2), so the second iteration saw the entry value of a field the first
# wrote. The bounds check accepted an access 5 past the end, and
# rewrite_expr changed the results (context.py had the same composition).

@config
class QCf:
    k: index
    j: index


def test_bound_reading_a_field_written_before_the_loop():
    def build():
        @proc
        def twice(n: size, y: f32[1]):
            assert QCf.j == 0
            assert QCf.k >= 0
            assert QCf.k + 3 == n
            QCf.k = QCf.k + 1
            for i in seq(QCf.k, n):
                y[QCf.j * 5] = 1.0     # the second iteration: y[5]
                QCf.j = 1
    assert "counterexample" in _refused(build)


@proc
def second_sees(n: size, y: f32[2]):
    assert QCf.j == 0
    assert QCf.k >= 0
    assert QCf.k + 3 == n
    QCf.k = QCf.k + 1
    for i in seq(QCf.k, n):
        y[QCf.j] += 1.0
        QCf.j = 1


def test_context_of_a_loop_whose_bound_reads_a_written_field():
    from exo_hl import SchedulingError
    with pytest.raises(SchedulingError, match="cannot prove QCf.j == 0"):
        second_sees.rewrite_expr(second_sees.find('y[_] += _').idx()[0], '0')
    y = np.zeros(2, np.float32)
    second_sees.interpret(3, y, config_state={(QCf, "k"): 0, (QCf, "j"): 0})
    assert list(y) == [1.0, 1.0]
    # what is true is still proven: the first iteration reads the entry value
    q = second_sees.rewrite_expr(second_sees.find_loop('i').lo(), 'n - 2')
    assert "for i in seq(n - 2, n):" in str(q)
