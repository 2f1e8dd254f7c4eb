"""The re-check's shortcut for unrolled loops (``effects.unrolled``): the
copies of a loop known good keep the loop's bounds verdicts, and anything
that is not exactly such a copy is checked in full.

* an ``unroll`` result takes the shortcut (no copy walked by the bounds
  checker) and is still accepted, with the same verdict as the
  whole-procedure check;
* hand-made "unrolled" regions that are not the copies -- an index that
  simplification would not give (out of bounds or merely different), a
  copy missing, binders shared between copies, a non-literal bound, a
  loop writing config -- are not recognised, and the out-of-bounds ones
  are refused;
* a copy edited by a later rewrite is re-checked.
"""
from __future__ import annotations

import pytest

from exo_hl import SchedulingError, config, f32, index, proc, seq, size
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.traversal import bound_syms, subst
from exo_hl.effects import bounds, recheck
from exo_hl.effects.unrolled import copies_of
from exo_hl.rewrites._common import replace_block_at


@config
class UC:
    k: index


@proc
def tiles(x: f32[8], y: f32[4]):
    for i in seq(0, 4):
        t: f32[2]
        for j in seq(0, 2):
            t[j] = x[2 * i + j]
        y[i] = t[0] + t[1]
    for r in seq(0, 2):
        y[r + 2] += 1.0


@proc
def cfg_loop(x: f32[8]):
    for i in seq(0, 2):
        UC.k = i
        x[i] = 0.0


def _checked(p):
    q = p.rename(p.name() + "_base")
    assert q._checked
    return q


def _const(v):
    return IR.Const(v, type=IR.Int)


def _copies(loop, fresh=True, edit=None):
    """The copies of ``loop`` as unroll builds them before simplifying;
    ``edit(k, stmts)`` may change copy k."""
    out = []
    binders = bound_syms(loop.body)
    for k in range(loop.lo.val, loop.hi.val):
        sub = {loop.iter: _const(k)}
        sub.update((b, b.copy() if fresh else b) for b in binders)
        copy = tuple(subst(s, sub) for s in loop.body)
        out.extend(edit(k, copy) if edit else copy)
    return tuple(out)


def _with_region(ir, i, stmts):
    return replace_block_at(ir, (), "body", i, i + 1, stmts)


def _walked(monkeypatch):
    seen = []
    orig = bounds._Walker.stmt

    def spy(self, s, st):
        seen.append(s)
        return orig(self, s, st)
    monkeypatch.setattr(bounds._Walker, "stmt", spy)
    return seen


def _index_of_copy(k, copy, value):
    """Copy k with the read of ``x`` in its inner loop at ``value + j``."""
    alloc, loop, last = copy
    a = loop.body[0]
    j = IR.Read(loop.iter, (), type=IR.Index)
    idx = IR.BinOp("+", _const(value), j, type=IR.Index)
    rhs = a.rhs.update(idx=(idx, ))
    return (alloc, loop.update(body=(a.update(rhs=rhs), )), last)


def test_unroll_takes_the_shortcut_and_agrees_with_the_full_check(
        monkeypatch):
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    base = _checked(tiles)
    loop = base.ir().body[0]
    seen = _walked(monkeypatch)
    q = base.unroll("i")
    assert q._checked
    region = q.ir().body[:12]
    assert copies_of(loop, region)
    # none of the copies (nor what they contain) was walked for bounds
    inside = {id(s) for s in region}
    assert not any(id(s) in inside for s in seen)
    recheck.check_full(q.ir())
    # both checks on the same rewrite agree (raises RecheckMismatch if not)
    monkeypatch.setenv(recheck.COMPARE_ENV, "1")
    recheck.clear_cache()
    assert _checked(tiles).unroll("i")._checked


def test_copies_differing_in_an_index_are_checked_in_full(monkeypatch):
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    base = _checked(tiles)
    loop = base.ir().body[0]
    # copy 3 reads x[7 + j] instead of x[6 + j]: j = 1 is out of bounds
    bad = _copies(loop, edit=lambda k, c: _index_of_copy(
        k, c, 7) if k == 3 else c)
    assert not copies_of(loop, bad)
    new = _with_region(base.ir(), 0, bad)
    with pytest.raises(bounds.BoundsError):
        recheck._Recheck(base.ir(), new).run()
    with pytest.raises(SchedulingError, match="out of bounds"):
        base._derive(new, "edit")
    # a different but in-bounds index is not a copy either (checked, and
    # accepted on its own merits); the copies as unroll prints them
    region = base.unroll("i").ir().body[:12]
    other = region[:9] + _index_of_copy(3, region[9:], 4)
    assert not copies_of(loop, other)
    assert base._derive(_with_region(base.ir(), 0, other), "edit")._checked
    # the same values written differently are copies: 2 * 3 + j == 6 + j
    same = _copies(loop, edit=lambda k, c: _index_of_copy(
        k, c, 6) if k == 3 else c)
    assert copies_of(loop, same)


def test_what_is_not_exactly_the_copies_is_not_recognised():
    base = _checked(tiles)
    loop = base.ir().body[0]
    good = _copies(loop)
    assert copies_of(loop, good)
    assert not copies_of(loop, good[:-3])             # a copy missing
    assert not copies_of(loop, good[3:] + good[:3])   # copies out of order
    assert not copies_of(loop, _copies(loop, fresh=False))  # shared names
    # a bound that is not a literal (even if it evaluates to one)
    four = IR.BinOp("*", _const(2), _const(2), type=IR.Int)
    assert not copies_of(loop.update(hi=four), good)
    # a loop writing configuration state
    cl = cfg_loop.ir().body[0]
    assert not copies_of(cl, _copies(cl))


def test_a_copy_edited_after_unroll_is_rechecked(monkeypatch):
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    q = _checked(tiles).unroll("i")
    # the read of copy 3 moved past the end of x
    ir = q.ir()
    copy3 = ir.body[9:12]
    edited = _index_of_copy(3, copy3, 7)
    new = replace_block_at(ir, (), "body", 9, 12, edited)
    with pytest.raises(bounds.BoundsError):
        recheck._Recheck(ir, new).run()
    with pytest.raises(SchedulingError, match="out of bounds"):
        q._derive(new, "edit")


# ---------------------------------------------------------------------------
# loop nests running an instance of the old loop's body (split)


@proc
def rows(n: size, x: f32[n, 4]):
    assert n % 4 == 0
    for i in seq(0, n):
        for j in seq(0, 4):
            x[i, j] = 0.0


def test_split_nest_is_an_instance_and_agrees_with_the_full_check(
        monkeypatch):
    from exo_hl.effects.unrolled import nest_instance
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    base = _checked(rows)
    loop = base.ir().body[0]
    seen = _walked(monkeypatch)
    q = base.split("i", 4, "io", "ii", tail="perfect")
    assert q._checked
    nest = q.ir().body[0]
    headers, e = nest_instance(loop, nest)
    assert [h.iter.name for h in headers] == ["io", "ii"]
    # the body was not walked for bounds (only the headers and e's range)
    body = headers[-1].body
    assert not any(s is b for s in seen for b in body)
    recheck.check_full(q.ir())
    monkeypatch.setenv(recheck.COMPARE_ENV, "1")
    recheck.clear_cache()
    assert _checked(rows).split("i", 4, "io", "ii", tail="perfect")._checked


def test_a_nest_running_other_iterations_is_refused(monkeypatch):
    from exo_hl.effects.unrolled import nest_instance
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    base = _checked(rows)
    loop = base.ir().body[0]
    nest = base.split("i", 4, "io", "ii", tail="perfect").ir().body[0]
    # the outer loop one iteration longer: i = 4 * io + ii reaches n + 3
    hi = IR.BinOp("+", nest.hi, _const(1), type=IR.Index)
    longer = nest.update(hi=hi)
    assert nest_instance(loop, longer) is not None     # an instance ...
    new = _with_region(base.ir(), 0, (longer, ))
    with pytest.raises(bounds.BoundsError):            # ... out of range
        recheck._Recheck(base.ir(), new).run()
    with pytest.raises(SchedulingError, match="out of bounds"):
        base._derive(new, "edit")
    # an iterator that is a name the loop uses from outside
    inner = nest.body[0]
    n_sym = base.ir().args[0].name
    assert nest_instance(loop, nest.update(
        body=(inner.update(iter=n_sym), ))) is None


@proc
def half(x: f32[8]):
    for i in seq(0, 4):
        x[i] = 0.0


def test_a_nest_outside_the_loop_range_is_rechecked_without_the_shortcut(
        monkeypatch):
    from exo_hl.effects.unrolled import nest_instance
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    base = _checked(half)
    loop = base.ir().body[0]
    nest = base.split("i", 2, "io", "ii", tail="perfect").ir().body[0]
    # i = 2 * io + ii up to 7: not the loop's range, but inside x
    wider = nest.update(hi=_const(4))
    assert nest_instance(loop, wider) is not None
    new = _with_region(base.ir(), 0, (wider, ))
    recheck._Recheck(base.ir(), new).run()
    assert base._derive(new, "edit")._checked
    # up to 9: outside x, refused
    widest = nest.update(hi=_const(5))
    new = _with_region(base.ir(), 0, (widest, ))
    with pytest.raises(bounds.BoundsError):
        recheck._Recheck(base.ir(), new).run()


# ---------------------------------------------------------------------------
# equal values: a sum is a multiset of atoms, not a set


@proc
def mid(n: size, m: size, x: f32[4, n]):
    assert m < n
    for i in seq(0, 4):
        x[i, (n + m) / 2] = 0.0


def _twice(e):
    """``e + e'`` with ``e' = (m + n) / 2``, the operands of ``e = (n + m)
    / 2`` swapped: the encoding keeps e and e' as two atoms (not the same
    tuple), whose canonical forms are equal."""
    s = e.lhs
    swapped = e.update(lhs=s.update(lhs=s.rhs, rhs=s.lhs))
    return IR.BinOp("+", e, swapped, type=e.type)


def test_a_sum_of_two_equal_atoms_is_not_one_atom(monkeypatch):
    from exo_hl.effects.unrolled import _value
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    base = _checked(mid)
    loop = base.ir().body[0]
    e = loop.body[0].idx[1]
    assert _value(e) != _value(_twice(e))
    assert _value(IR.BinOp("+", e, e, type=e.type)) == _value(_twice(e))
    # the copies with (n + m) / 2 + (m + n) / 2 (up to n + m - 1 >= n) in
    # the last one: not the copies, and refused
    bad = _copies(loop, edit=lambda k, c: (c[0].update(
        idx=(c[0].idx[0], _twice(c[0].idx[1]))), ) if k == 3 else c)
    assert not copies_of(loop, bad)
    new = _with_region(base.ir(), 0, bad)
    with pytest.raises(SchedulingError, match="out of bounds"):
        base._derive(new, "edit")
    # the same in a split nest (an instance only with the equal index)
    from exo_hl.effects.unrolled import nest_instance
    nest = base.split("i", 2, "io", "ii", tail="perfect").ir().body[0]
    inner = nest.body[0]
    a = inner.body[0]
    assert nest_instance(loop, nest) is not None
    edited = nest.update(body=(inner.update(body=(a.update(
        idx=(a.idx[0], _twice(a.idx[1]))), )), ))
    assert nest_instance(loop, edited) is None
    new = _with_region(base.ir(), 0, (edited, ))
    with pytest.raises(SchedulingError, match="out of bounds"):
        base._derive(new, "edit")


@proc
def halves(n: size, m: size, x: f32[4, n], y: f32[4, n]):
    assert m < n
    for i in seq(0, 4):
        for j in seq(0, 2):
            x[i, (m + j) / 2] = y[i, (n + m) / 2] * 2.0
    for i in seq(0, 4):
        y[i, (n + m) / 2] += x[3 - i, (m + i) / 4]


@proc
def tri(x: f32[6, 6], y: f32[6, 6]):
    for i in seq(0, 4):
        for j in seq(0, i):             # bounds naming the outer iterator
            x[i, j] = y[j, i] + x[i, j]
        for j in seq(i, 4):
            x[i, j + 1] += y[i, 3 - j]


@proc
def wrapped(m: size, x: f32[m + 3, 4], y: f32[4]):
    w = x[0:m + 3, 0:4]
    for i in seq(0, 3):
        for j in seq(0, 4):
            w[i, j] = y[(j + i) % 4] + w[m + 2 - i, 3 - j]
            if i + j < 5:
                w[i, (m + j) % 4] += y[(i + m) / 2 % 4]


#: for the long recheck fuzzer (``fuzz_recheck_long``)
FUZZ_PROCS = [halves, tri, wrapped]


def test_respelled_copies_and_nests_decided_as_the_full_check(monkeypatch):
    """The class of the test above, generated: unroll or split a loop of
    ``halves`` (indices dividing sums of two variables), respell one
    control expression of the result (``ir_mutations.respell``: the same
    value or not) and hand it to ``_derive`` as an edit of the procedure
    before the rewrite, the comparison mode on: the incremental re-check
    must decide as the whole-procedure check (else RecheckMismatch)."""
    import random
    from ir_mutations import respelled
    monkeypatch.setenv(recheck.COMPARE_ENV, "1")
    base = _checked(halves)
    results = [base.unroll("i"), base.unroll("j"), base.unroll("i #1"),
               base.split("i", 2, "io", "ii", tail="perfect"),
               base.split("i #1", 3, "io", "ii", tail="guard")]
    rng = random.Random(31)
    accepted = refused = 0
    for k in range(60):
        new = respelled(results[k % len(results)].ir(), rng)
        if new is None:
            continue
        try:
            base._derive(new, "edit")
            accepted += 1
        except SchedulingError as e:
            assert "out of bounds" in str(e)
            refused += 1
    assert accepted >= 10 and refused >= 5
