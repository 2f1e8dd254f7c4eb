"""Control arithmetic that may overflow the C's 64 bits is refused
(exo_hl/effects/overflow.py): the proofs reason on unbounded integers, the
C would wrap (undefined behaviour) and index out of bounds."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import BoundsError, SchedulingError, f32, proc, seq, size


def test_a_huge_constant_multiple_is_refused_at_decoration():
    """Proven in bounds on unbounded integers, (i * K) % 4 wrapped to -3 in
    C at i = 3 and wrote A[-3]."""
    with pytest.raises(BoundsError, match=r"'i \* 3074457345618258603' may "
                       r"overflow the 64-bit integers"):
        @proc
        def wraps(n: size, A: f32[4]):
            assert n <= 4
            for i in seq(0, n):
                A[(i * 3074457345618258603) % 4] = 1.0


def test_a_chain_of_small_constants_is_refused_too():
    with pytest.raises(BoundsError, match="may overflow"):
        @proc
        def chain(n: size, A: f32[4]):
            for i in seq(0, n):
                if i * 100000 * 100000 * 100000 * 3074457 > 0:
                    A[0] = 1.0


@proc
def fine(n: size, A: f32[n]):
    assert n < 9223372036854775807
    for i in seq(0, n):
        if i * 1000000 + n * 4 > 20:
            A[i] = 1.0


def test_32_bit_values_times_32_bit_constants_are_fine():
    A = np.zeros(5, np.float32)
    fine.compile()(n=5, A=A)
    assert A.tolist() == [0, 1, 1, 1, 1]


def test_a_rewrite_that_would_overflow_is_refused():
    with pytest.raises(SchedulingError, match="may overflow"):
        fine.add_guard(fine.find_loop('i'), "n * 4611686018427387904 > 0")


@proc
def bounded_guard(n: size, A: f32[4]):
    for i in seq(0, 4):
        if i * 1099511627776 > 0:
            A[0] = 1.0


def test_a_remembered_statement_is_asked_again_under_other_ranges():
    """check_control_ranges remembers the statements that passed under the
    intervals of the names they mention: the same guard (the same object)
    passes with ``i < 4`` and must still be refused with ``i < n``, where
    ``i * 2**40`` may reach 2**71; and a statement moved under another loop
    is asked again."""
    from exo_hl.core_ir.nodes import IR
    from exo_hl.effects.overflow import check_control_ranges
    ir = bounded_guard.ir()
    check_control_ranges(ir)            # remembered as passed
    loop = ir.body[0]
    n = ir.args[0]
    wide = ir.update(body=(loop.update(hi=IR.Read(n.name, (), type=n.type)), ))
    assert wide.body[0].body[0] is loop.body[0]
    with pytest.raises(BoundsError, match="may overflow"):
        check_control_ranges(wide)
    check_control_ranges(ir)            # and the bounded one still passes
