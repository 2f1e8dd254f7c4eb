"""Control arithmetic that may overflow the C's 64 bits is refused
(exo_hl/core_ir/control_ranges.py): the proofs reason on unbounded integers, the
C would wrap (undefined behaviour) and index out of bounds."""
from __future__ import annotations

import numpy as np
import pytest

from exo_hl import BoundsError, SchedulingError, f32, index, proc, seq, size


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
    from exo_hl.core_ir.control_ranges import check_control_ranges
    ir = bounded_guard.ir()
    check_control_ranges(ir)            # remembered as passed
    loop = ir.body[0]
    n = ir.args[0]
    wide = ir.update(body=(loop.update(hi=IR.Read(n.name, (), type=n.type)), ))
    assert wide.body[0].body[0] is loop.body[0]
    with pytest.raises(BoundsError, match="may overflow"):
        check_control_ranges(wide)
    check_control_ranges(ir)            # and the bounded one still passes


def _reference_ranges():
    """The walk before nested operands were skipped: ``tree`` of every
    control expression ``walk`` yields."""
    from exo_hl.core_ir import types as T
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir.traversal import walk
    from exo_hl.core_ir import control_ranges as O

    class Ref(O._Ranges):
        calls = 0

        def exprs(self, n, s):
            for m in walk(n):
                if isinstance(m, IR.expr) and T.is_control(m.type):
                    self.tree(m, s)

        def rng(self, e):
            Ref.calls += 1
            return super().rng(e)
    return Ref


def test_nested_control_operands_bounded_once_with_the_same_verdicts():
    """Each control expression is bounded once, not once per enclosing
    operator; random nested index expressions (some overflowing, some not
    quasi-affine, some inside a data read's index) get the same verdict
    and message as from the walk that bounded every sub-expression."""
    import random
    from exo_hl.core_ir.nodes import IR
    from exo_hl.core_ir import control_ranges as O
    from exo_hl.errors import ExoTypeError
    Ref = _reference_ranges()
    ir = bounded_guard.ir()
    loop = ir.body[0]
    i = loop.iter
    rng = random.Random(7)

    def rand_expr(d):
        if d == 0 or rng.random() < 0.2:
            if rng.random() < 0.5:
                return IR.Read(i, (), type=IR.Index)
            return IR.Const(rng.choice([1, 3, 2**20, 2**40, 2**62]),
                            type=IR.Int)
        op = rng.choice(["+", "-", "*", "*", "/", "%"])
        a, b = rand_expr(d - 1), rand_expr(d - 1)
        if op in "*/%" and rng.random() < 0.8:
            b = IR.Const(rng.choice([2, 5, 2**21]), type=IR.Int)
        return IR.BinOp(op, a, b, type=IR.Index)

    def verdict(cls, body):
        cls.calls = 0
        r = cls(ir, {a.name: O.SIZE for a in ir.args if a.type is IR.Size})
        r.env[i] = (0, 3)
        try:
            r.stmts(body)
        except (BoundsError, ExoTypeError) as e:
            return type(e), str(e)
        return None

    class New(O._Ranges):
        calls = 0

        def rng(self, e):
            New.calls += 1
            return super().rng(e)

    assign = loop.body[0].body[0]          # A[0] = 1.0

    def idx(d):
        return IR.BinOp("%", rand_expr(d), IR.Const(4, type=IR.Int),
                        type=IR.Index)

    seen = set()
    for _ in range(300):
        # a data read's index inside the right-hand side, too
        rhs = IR.BinOp("+", IR.Read(assign.name, (idx(3), ), type=IR.F32),
                       IR.Const(1.0, type=IR.F32), type=IR.F32)
        stmt = assign.update(idx=(idx(5), ), rhs=rhs)
        O._PASSED.clear()
        want = verdict(Ref, (stmt, ))
        O._PASSED.clear()
        got = verdict(New, (stmt, ))
        assert got == want
        assert New.calls <= Ref.calls
        seen.add(None if want is None else want[0])
    assert seen == {None, BoundsError, ExoTypeError}
    # a chain nested 40 deep: bounded 41 times, not 40 * 41 / 2
    e = IR.Read(i, (), type=IR.Index)
    for _ in range(40):
        e = IR.BinOp("+", e, IR.Const(1, type=IR.Int), type=IR.Index)
    stmt = assign.update(idx=(IR.BinOp("-", e, e, type=IR.Index), ))
    O._PASSED.clear()
    assert verdict(New, (stmt, )) is None
    assert New.calls == 2 * (1 + 40 * 2) + 1


@proc
def uses_k(k: index, n: size, x: f32[2]):
    if k * 2147483648 > n:
        x[0] = 1.0


@proc
def compares_k(k: index, n: size, x: f32[2]):
    if k > n:
        x[1] = 1.0


def test_a_callee_given_a_wider_value_is_walked_with_it():
    """A callee is walked alone with 32-bit control arguments, but a call
    may pass more (``n * 4``): ``k * 2**31`` then overflowed in the
    callee's C (the branch went the other way than in interpret()). The
    call is refused when the callee's arithmetic may overflow with what
    it passes, and taken when it cannot (a comparison), C agreeing with
    interpret()."""
    with pytest.raises(BoundsError, match=r"the call passes 'n \* 4' as "
                       r"'k', which may not fit 32 bits.*'k \* 2147483648' "
                       r"may overflow"):
        @proc
        def wide_caller(n: size, x: f32[2]):
            uses_k(n * 4, n, x)

    @proc
    def wide_but_fine(n: size, x: f32[2]):
        compares_k(n * 4, n, x)
    for run in (wide_but_fine.interpret, wide_but_fine.compile()):
        x = np.zeros(2, np.float32)
        run(2**31 - 1, x)
        assert x.tolist() == [0, 1]
