"""Incremental re-checking of rewrite results (``exo_hl.frontend.recheck``).

A rewrite result is re-checked against the procedure it came from, reusing
the verdicts of statements whose check provably cannot change. These tests
make sure no such reuse ever hides a failure:

* hand-made edits that change only the *context* of a statement (an
  enclosing loop bound or guard, an earlier config write, a config write
  later in the same loop body, an allocation's size or memory, a window, a
  precondition, an argument's shape): the statement itself is the very same
  object as in the accepted parent, yet it now fails, and the incremental
  check must say so (and ``Procedure._derive`` must reject the edit);
* random IR mutations (constants in bounds, indices, sizes, windows and
  config values; swaps, deletions, duplications, loop modes, memories),
  where the incremental verdict must equal the whole-procedure verdict, on
  chains of edits (each accepted result is the next parent);
* the structural summaries it relies on (derived summaries, incremental
  window retyping) equal the ones computed from scratch;
* on a large unrolled procedure a one-statement rewrite checks only the
  statements it changed.
"""
from __future__ import annotations

import random

import pytest

from exo_hl import (DRAM, BoundsError, ExoTypeError, SchedulingError, config,
                    f32, index, par, proc, seq, size, stride)
from exo_hl.api import Procedure
from exo_hl.core_ir import blockinfo
from exo_hl.core_ir.nodes import IR
from exo_hl.core_ir.traversal import free_vars, used_syms, walk_stmts
from exo_hl.core_ir.windows import make_window, retype_window_names
from exo_hl.cursors import ExprCursor, StmtCursor
from exo_hl.frontend import recheck
from exo_hl.rewrites._common import replace_block_at

from ir_mutations import mutate


class SCR(DRAM):
    """A scratchpad memory some callees insist on."""


@config
class RC:
    n: index
    k: index


@proc
def need_k(x: [f32][8]):
    assert RC.k < 6
    for i in seq(0, RC.k):
        x[i + 2] = 0.0


@proc
def need_8(x: [f32][8]):
    x[7] = 0.0


@proc
def need_scr(x: [f32][4] @ SCR):
    for i in seq(0, 4):
        x[i] = 1.0


@proc
def add_row(m: size, x: [f32][m], y: [f32][m]):
    assert m >= 2
    for i in seq(0, m):
        y[i] += x[i]


@proc
def ctx(n: size, A: f32[n, 8], B: f32[8], C: f32[8]):
    assert n >= 4
    RC.n = 4
    RC.k = 3
    t: f32[8]
    for i in seq(0, 8):
        t[i] = B[i]
    w = A[1, 0:8]
    for i in seq(0, RC.n):
        w[i + 4] = t[i]
    need_k(w)
    u: f32[4] @ SCR
    need_scr(u)
    add_row(4, t[0:4], C[4:8])
    for i in par(0, 4):
        C[i] = t[2 * i + 1]
    if n > 5:
        C[0] = A[5, 0]
    else:
        C[1] = A[3, 7]
    for j in seq(0, 3):
        B[j + RC.k] = C[j]
        RC.k = 4
    for i in seq(0, 4):
        C[i + RC.n] = u[i]


@proc
def wide(A: f32[16], B: f32[16], C: f32[16]):
    RC.n = 3
    for k in seq(0, 12):
        acc: f32[4]
        for i in seq(0, 4):
            acc[i] = A[k + i]
        C[k + RC.n + 1] += acc[3] * B[k]


@proc
def nest(n: size, A: f32[n, 16], C: f32[n, 16]):
    for j in seq(0, n):
        RC.n = 3
        for k in seq(0, 12):
            acc: f32[4]
            for i in seq(0, 4):
                acc[i] = A[j, k + i]
            C[j, k + RC.n + 1] += acc[3]


def _checked(p):
    """``p`` as a procedure known to pass the checks (what every rewrite
    result is), so that rewrites of it are re-checked incrementally."""
    q = p.rename(p.name() + "_base")
    assert q._checked
    return q


def _at(ir, *path):
    s = None
    blk = ir.body
    for k, step in enumerate(path):
        field, i = ("body", step) if isinstance(step, int) else step
        if k:
            blk = getattr(s, field)
        s = blk[i]
    return s


def _replace(ir, path, new_stmts):
    path = tuple(("body", p) if isinstance(p, int) else p for p in path)
    *parent, (field, i) = path
    return replace_block_at(ir, tuple(parent), field, i, i + 1,
                            tuple(new_stmts))


def _const(v):
    return IR.Const(v, type=IR.Int)


def _incremental_rejects(parent_ir, new_ir):
    """The incremental check itself (not the whole-procedure fallback)
    rejects ``new_ir``."""
    new_ir = retype_window_names(new_ir, parent_ir)
    with pytest.raises((BoundsError, ExoTypeError)):
        recheck._Recheck(parent_ir, new_ir).run()


def _derive_rejects(base, new_ir, match=None):
    with pytest.raises(SchedulingError, match=match):
        base._derive(new_ir, "edit")


def _full_rejects(new_ir):
    with pytest.raises((BoundsError, ExoTypeError)):
        recheck.check_full(retype_window_names(new_ir))


def _context_case(base, new_ir, unchanged_paths, match=None):
    """``new_ir`` differs from ``base`` only around the statements at
    ``unchanged_paths`` (the same objects as before), and must fail."""
    old_ir = base.ir()
    for path in unchanged_paths:
        assert _at(new_ir, *path) is _at(old_ir, *path)
    _full_rejects(new_ir)
    if old_ir.args == new_ir.args and old_ir.preds == new_ir.preds:
        _incremental_rejects(old_ir, new_ir)
    _derive_rejects(base, new_ir, match)


# ---------------------------------------------------------------------------
# hand-made context changes


def test_base_procedure_passes_and_rewrites_are_incremental():
    base = _checked(ctx)
    recheck.check_full(base.ir())
    # a harmless edit of one statement is accepted
    s = _at(base.ir(), 13)            # the final loop
    new = _replace(base.ir(), (13, ), [s.update(hi=_const(3))])
    q = base._derive(new, "edit")
    assert q._checked


def test_earlier_config_write_changes_loop_bound():
    # RC.n = 4 feeds `for i in seq(0, RC.n): w[i + 4] = t[i]` (w has 8)
    base = _checked(ctx)
    new = _replace(base.ir(), (0, ), [_at(base.ir(), 0).update(
        rhs=_const(5))])
    _context_case(base, new, [(5, ), (5, 0)], match="out of bounds")


def test_earlier_config_write_breaks_callee_precondition():
    # RC.k = 3 is read by need_k's precondition `RC.k < 6`
    base = _checked(ctx)
    new = _replace(base.ir(), (1, ), [_at(base.ir(), 1).update(
        rhs=_const(6))])
    _context_case(base, new, [(6, )], match="precondition")


def test_config_write_later_in_the_loop_body():
    # `B[j + RC.k] = C[j]; RC.k = 4`: from the second iteration on, the
    # read sees the write that follows it in the body
    base = _checked(ctx)
    loop = _at(base.ir(), 12)
    body = (loop.body[0], loop.body[1].update(rhs=_const(6)))
    new = _replace(base.ir(), (12, ), [loop.update(body=body)])
    _context_case(base, new, [(12, 0)], match="out of bounds")


def test_config_dataflow_reaches_the_end_of_the_procedure():
    # the final loop reads RC.n, written in the first statement
    base = _checked(ctx)
    new = _replace(base.ir(), (0, ), [_at(base.ir(), 0).update(
        rhs=_const(5))])
    assert new.body[13] is base.ir().body[13]
    _full_rejects(new)
    # its first failure is earlier; without that loop and need_k's call
    # only the final loop, far from the edit, fails
    ir = base.ir()
    base = _checked(Procedure(ir.update(body=ir.body[:5] + ir.body[7:])))
    new = _replace(base.ir(), (0, ), [_at(base.ir(), 0).update(
        rhs=_const(5))])
    _context_case(base, new, [(11, )], match="out of bounds")


def test_enclosing_loop_bound():
    base = _checked(ctx)
    loop = _at(base.ir(), 3)          # for i in seq(0, 8): t[i] = B[i]
    new = _replace(base.ir(), (3, ), [loop.update(hi=_const(9))])
    _context_case(base, new, [(3, 0)], match="out of bounds")


def test_enclosing_guard():
    base = _checked(ctx)
    s = _at(base.ir(), 11)            # if n > 5: C[0] = A[5, 0] ...
    cond = s.cond.update(rhs=_const(4))
    new = _replace(base.ir(), (11, ), [s.update(cond=cond)])
    _context_case(base, new, [(11, 0)], match="out of bounds")


def test_allocation_size():
    base = _checked(ctx)
    s = _at(base.ir(), 2)             # t: f32[8]
    t = s.type.update(hi=(_const(6), ))
    new = _replace(base.ir(), (2, ), [s.update(type=t)])
    _context_case(base, new, [(3, ), (5, ), (10, )], match="out of bounds")


def test_allocation_memory():
    # need_scr(u) wants u @ SCR; nothing but the allocation changes
    base = _checked(ctx)
    s = _at(base.ir(), 7)             # u: f32[4] @ SCR
    new = _replace(base.ir(), (7, ), [s.update(mem=DRAM)])
    _context_case(base, new, [(8, )], match="memory")


def test_allocation_memory_through_a_window():
    @proc
    def via_window(B: f32[4]):
        v: f32[8] @ SCR
        w = v[2:6]
        need_scr(w)
        for i in seq(0, 4):
            B[i] = v[i]
    base = _checked(via_window)
    s = _at(base.ir(), 0)
    new = _replace(base.ir(), (0, ), [s.update(mem=DRAM)])
    _context_case(base, new, [(1, ), (2, )], match="memory")


def test_allocation_memory_of_a_call_nested_in_a_loop():
    """Only a memory changes: a later loop containing a call on the buffer
    has its calls' memory checked again (the rest of the loop keeps its
    verdict: no other check reads a memory)."""
    @proc
    def nested(n: size, B: f32[n]):
        v: f32[8] @ SCR
        for i in seq(0, n):
            for j in seq(0, 2):
                need_scr(v[4 * j:4 * j + 4])
                B[i] = v[j]
    base = _checked(nested)
    s = _at(base.ir(), 0)
    new = _replace(base.ir(), (0, ), [s.update(mem=DRAM)])
    _context_case(base, new, [(1, )], match="memory")


def test_fused_and_fissioned_loops_compared_with_the_first_old_loop():
    """A region whose first statement is a loop with the old first loop's
    header is compared with it: what fuse_loop appends (the second loop's
    body under the first's iterator) and what a fission leaves in the
    second loop are checked, the kept prefix is not asked again, and an
    out-of-bounds appended access is still refused by the incremental
    check itself."""
    @proc
    def two_loops(n: size, A: f32[n], B: f32[n + 1]):
        for i in seq(0, n):
            A[i] = 1.0
        for j in seq(0, n):
            B[j + 1] = 2.0
    base = _checked(two_loops)
    ir = base.ir()
    first, second = ir.body
    i = first.iter

    def fused(off):
        b = second.body[0]
        idx = IR.BinOp("+", IR.Read(i, (), type=IR.Index), _const(off),
                       type=IR.Index)
        loop = first.update(body=first.body + (b.update(idx=(idx, )), ))
        return ir.update(body=(loop, ))
    good, bad = fused(1), fused(2)
    recheck._Recheck(ir, good).run()
    assert recheck._Recheck(ir, good).prepare(ir.body, good.body)[:3] \
        == (0, 2, 1)
    base._derive(good, "edit")
    _full_rejects(bad)
    _incremental_rejects(ir, bad)
    _derive_rejects(base, bad, "out of bounds")
    # fission: the old single loop's prefix first, a new loop after it
    # (checked in full: here out of bounds)
    one = base._derive(good, "edit")
    loop = one.ir().body[0]
    tail = second.update(body=(loop.body[1].update(idx=(IR.BinOp(
        "+", IR.Read(second.iter, (), type=IR.Index), _const(2),
        type=IR.Index), )), ))
    split = one.ir().update(body=(loop.update(body=loop.body[:1]), tail))
    _full_rejects(split)
    _incremental_rejects(one.ir(), split)


def test_interchanged_loops_keep_their_body_and_ask_the_par_loop_again():
    """``for x: for y: B`` -> ``for y: for x: B`` (what reorder builds):
    B is not re-checked (the same facts, in the other order), but a
    ``par`` loop moved outside is asked again: here its iterations race
    (A[x + y] across x), which the incremental check itself refuses;
    a nest that is not the old one interchanged is checked in full."""
    @proc
    def nest(n: size, A: f32[n + 8]):
        for x in seq(0, 4):
            for y in par(0, 4):
                A[x + y] = 1.0
    base = _checked(nest)
    ir = base.ir()
    outer = ir.body[0]
    inner = outer.body[0]
    swapped = ir.update(body=(inner.update(body=(outer.update(
        body=inner.body), )), ))
    checked = []
    orig = recheck._Recheck.check

    def counting(self, s, *a):
        checked.append(s)
        return orig(self, s, *a)
    recheck._Recheck.check = counting
    try:
        _full_rejects(swapped)
        _incremental_rejects(ir, swapped)
        assert checked == []
    finally:
        recheck._Recheck.check = orig
    _derive_rejects(base, swapped, "race")
    # both seq: passes, nothing re-checked
    seq_ir = ir.update(body=(outer.update(body=(inner.update(
        mode=outer.mode), )), ))
    seq_base = base._derive(seq_ir, "edit")
    o2, i2 = seq_ir.body[0], seq_ir.body[0].body[0]
    both = seq_ir.update(body=(i2.update(body=(o2.update(
        body=i2.body), )), ))
    recheck._Recheck(seq_ir, both).run()
    seq_base._derive(both, "edit")
    # the new inner loop's bounds name the new outer iterator: not an
    # interchange of the old nest, checked in full (and fine)
    tri = seq_ir.update(body=(i2.update(body=(o2.update(
        body=i2.body, hi=IR.Read(i2.iter, (), type=IR.Index)), )), ))
    recheck._Recheck.check = counting
    try:
        recheck._Recheck(seq_ir, tri).run()
        assert checked
    finally:
        recheck._Recheck.check = orig
    recheck.check_full(tri)


@config
class RS:
    s: stride


@proc
def need_s(s: stride, x: [f32][8]):
    assert s == 8
    x[0] = 1.0


def test_allocation_shape_through_a_config_write():
    # RS.s = stride(t, 0) (8 for t: f32[4, 8]) reaches need_s's
    # precondition; the call does not mention t at all
    @proc
    def strided_cfg(x: f32[8]):
        t: f32[4, 8]
        RS.s = stride(t, 0)
        need_s(RS.s, x)
    base = _checked(strided_cfg)
    s = _at(base.ir(), 0)
    new = _replace(base.ir(), (0, ), [s.update(type=s.type.update(
        hi=(s.type.hi[0], _const(9))))])
    _context_case(base, new, [(1, ), (2, )], match="precondition")


def test_allocation_shape_through_a_window_and_a_config_write():
    # the change reaches need_s through w (a window of t) and RS.s; the
    # config write mentions only w, the call neither
    @proc
    def window_cfg(x: f32[8]):
        t: f32[4, 8]
        w = t[0:4, 0:8]
        RS.s = stride(w, 0)
        need_s(RS.s, x)
    base = _checked(window_cfg)
    s = _at(base.ir(), 0)
    new = _replace(base.ir(), (0, ), [s.update(type=s.type.update(
        hi=(s.type.hi[0], _const(9))))])
    _context_case(base, new, [(1, ), (2, ), (3, )], match="precondition")


def test_window_statement():
    # w = A[1, 0:8] -> A[1, 1:8]: `for i in seq(0, RC.n): w[i + 4] = t[i]`
    # (unchanged) now overflows w; need_k(w) is dropped so that it is the
    # first failure
    ir = ctx.ir()
    base = _checked(Procedure(ir.update(body=ir.body[:6] + ir.body[7:])))
    s = _at(base.ir(), 4)
    idx = (s.rhs.idx[0], s.rhs.idx[1].update(lo=_const(1)))
    rhs = make_window(s.rhs.name, s.rhs.type.src_type, idx)
    new = _replace(base.ir(), (4, ), [s.update(rhs=rhs)])
    _context_case(base, new, [(5, )], match="out of bounds")


def test_window_retyping_reaches_later_statements():
    # w = A[1, 0:8] -> A[1, 0:6]: need_k(w) (unchanged in the edit) must
    # carry the new window type after retyping, and then fail its call
    base = _checked(ctx)
    s = _at(base.ir(), 4)
    idx = (s.rhs.idx[0], s.rhs.idx[1].update(hi=_const(6)))
    rhs = make_window(s.rhs.name, s.rhs.type.src_type, idx)
    new = _replace(base.ir(), (4, ), [s.update(rhs=rhs)])
    assert new.body[6] is base.ir().body[6]
    retyped = retype_window_names(new, base.ir())
    assert retyped == retype_window_names(new)
    assert retyped.body[6].args[0].type == rhs.type
    _derive_rejects(base, new, match="size 8, got 6")


def test_window_retyping_inside_a_loop():
    # the same, for a window statement inside a loop body: the loop is
    # compared with its old version statement by statement
    @proc
    def loop_win(n: size, A: f32[n, 8], B: f32[8]):
        for j in seq(0, n):
            B[0] = 0.0
            w = A[j, 0:8]
            need_8(w)
    base = _checked(loop_win)
    loop = _at(base.ir(), 0)
    s = loop.body[1]
    idx = (s.rhs.idx[0], s.rhs.idx[1].update(hi=_const(6)))
    rhs = make_window(s.rhs.name, s.rhs.type.src_type, idx)
    body = (loop.body[0], s.update(rhs=rhs), loop.body[2])
    new = _replace(base.ir(), (0, ), [loop.update(body=body)])
    retyped = retype_window_names(new, base.ir())
    assert retyped == retype_window_names(new)
    assert retyped.body[0].body[2].args[0].type == rhs.type
    _derive_rejects(base, new, match="size 8, got 6")


def test_precondition_and_argument_shape():
    base = _checked(ctx)
    ir = base.ir()
    pred = ir.preds[0].update(rhs=_const(5))     # n >= 5: stronger, fine
    new = ir.update(preds=(pred, ))
    recheck.check_full(new)
    base._derive(new, "edit")
    pred = ir.preds[0].update(rhs=_const(3))     # n >= 3: A[3, 7] fails
    new = ir.update(preds=(pred, ))
    _context_case(base, new, [(11, )], match="out of bounds")
    args = list(ir.args)
    args[2] = args[2].update(type=args[2].type.update(hi=(_const(6), )))
    new = ir.update(args=tuple(args))
    _context_case(base, new, [(3, )], match="out of bounds")


def test_par_loop_context():
    @config
    class PC:
        s: index

    @proc
    def shifted(x: f32[8]):
        PC.s = 0
        for i in par(0, 4):
            x[i] = 1.0
            x[i + PC.s] = 2.0
    base = _checked(shifted)
    new = _replace(base.ir(), (0, ), [_at(base.ir(), 0).update(
        rhs=_const(1))])
    _context_case(base, new, [(1, )], match="race")


def test_nested_block_allocation_size():
    # a change deep in a loop body: the incremental check descends into
    # the loop and must still re-check the later statement using `t`
    @proc
    def nested(n: size, x: f32[n, 8]):
        for j in seq(0, n):
            t: f32[8]
            for i in seq(0, 8):
                t[i] = 0.0
            x[j, 1] = 1.0
            for i in seq(0, 8):
                x[j, i] = t[i]
    base = _checked(nested)
    loop = _at(base.ir(), 0)
    alloc = loop.body[0]
    body = (alloc.update(type=alloc.type.update(hi=(_const(7), ))),
            ) + loop.body[1:]
    new = _replace(base.ir(), (0, ), [loop.update(body=body)])
    _context_case(base, new, [(0, ("body", 1)), (0, ("body", 3))],
                  match="out of bounds")


def test_statement_edit_inside_par_loop_rechecks_the_loop():
    @proc
    def pl(x: f32[8]):
        for i in par(0, 8):
            x[i] = 1.0
            x[i] += 2.0
    base = _checked(pl)
    loop = _at(base.ir(), 0)
    s = loop.body[1]
    racy = s.update(idx=(_const(0), ))
    new = _replace(base.ir(), (0, ), [loop.update(body=(loop.body[0], racy))])
    _context_case(base, new, [(0, ("body", 0))], match="race")


# ---------------------------------------------------------------------------
# random mutations: incremental verdict == whole-procedure verdict


def _ref_writes_config(stmts):
    for x in walk_stmts(stmts):
        if isinstance(x, IR.WriteConfig) or (
                isinstance(x, IR.Call) and _ref_writes_config(x.f.body)):
            return True
    return False


def _ref_info(s):
    """``blockinfo.stmt_info``, from its definition (no caches)."""
    inner = list(walk_stmts((s, )))
    return [_ref_writes_config((s, )),
            isinstance(s, (IR.Alloc, IR.WindowStmt)),
            any(isinstance(x, IR.Call) for x in inner),
            any(isinstance(x, IR.WindowStmt) for x in inner),
            any(isinstance(x, IR.For) and x.mode is IR.Par for x in inner),
            frozenset(used_syms(s))]


def _ref_summary(blk):
    infos = [_ref_info(x) for x in blk]
    uses = {}
    for i in infos:
        for n in i[5]:
            uses[n] = uses.get(n, 0) + 1

    def where(f):
        return tuple(j for j, i in enumerate(infos) if f(i))
    return blockinfo.Summary(
        uses, sc=where(lambda i: i[0] or i[1]), cw=where(lambda i: i[0]),
        calls=where(lambda i: i[2]), wins=where(lambda i: i[3]),
        pars=where(lambda i: i[4]))


def _assert_structural_caches_fresh(ir):
    """Every block summary and statement info of ``ir`` as the caches give
    them (many derived from an older version's) is what the definitions
    give."""
    blocks = [ir.body]
    for x in walk_stmts(ir.body):
        if isinstance(x, (IR.For, IR.If)):
            blocks.append(x.body)
        if isinstance(x, IR.If):
            blocks.append(x.orelse)
    for b in blocks:
        assert blockinfo.summary(b) == _ref_summary(b)
    for x in walk_stmts(ir.body):
        inf = blockinfo.stmt_info(x)
        assert [inf.cw, inf.binder, inf.has_call, inf.has_win, inf.has_par,
                inf.names] == _ref_info(x)
        # the composed free symbols (the re-check's scope test) are the
        # walk's, for every statement and with any names bound around it
        assert blockinfo.free_syms(x) == frozenset(free_vars(x))
        some = set(list(used_syms(x))[::2])
        assert blockinfo.free_syms(x) - some == free_vars(x, some)


def _verdict(fn):
    try:
        fn()
    except (BoundsError, ExoTypeError) as e:
        return type(e), str(e)
    return None


def _flat():
    """``wide`` with its loop unrolled: many top-level statements, each
    iteration with its own allocation."""
    return wide.unroll(StmtCursor(wide, (("body", 1), )))


def _nested():
    """``nest`` with its inner loop unrolled: a long loop body."""
    return nest.unroll(StmtCursor(nest, (("body", 0), ("body", 1))))


_BASES = {"ctx": lambda: ctx, "flat": _flat, "nest": _nested}


@pytest.mark.parametrize("which,seed", [("ctx", 1), ("ctx", 2), ("flat", 3),
                                        ("flat", 4), ("nest", 5),
                                        ("nest", 6)])
def test_random_mutations_same_verdict(which, seed):
    rng = random.Random(seed)
    parent = retype_window_names(_BASES[which]().ir())
    recheck.check_full(parent)
    accepted = rejected = 0
    for _ in range(200):
        new = mutate(parent, rng, (DRAM, SCR))
        if new is None or new == parent:
            continue
        # incremental and from-scratch retyping agree
        retyped = retype_window_names(new, parent)
        assert retyped == retype_window_names(new)
        full = _verdict(lambda: recheck.check_full(retyped))
        inc = _verdict(lambda: recheck.check_rewritten(retyped, parent))
        assert inc == full, (inc, full)
        _assert_structural_caches_fresh(retyped)
        if full is None:
            accepted += 1
            parent = retyped
        else:
            rejected += 1
    # the chains must explore both outcomes, not just one
    assert accepted >= 20 and rejected >= 8, (accepted, rejected)


def test_block_diff():
    """``diff``: the longest common prefix, then the longest common suffix;
    after ``note_splice``, a valid diff within the spliced part."""
    def longest(old, new):
        lo, ln = len(old), len(new)
        m, p = min(lo, ln), 0
        while p < m and old[p] == new[p]:
            p += 1
        q = 0
        while q < m - p and old[lo - 1 - q] == new[ln - 1 - q]:
            q += 1
        return p, lo - q, ln - q
    rng = random.Random(11)
    for _ in range(3000):
        old = tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 70)))
        new = list(old)
        for _ in range(rng.randint(0, 3)):
            r = rng.random()
            if r < .3 and new:
                new.pop(rng.randrange(len(new)))
            elif r < .6:
                new.insert(rng.randint(0, len(new)), rng.randint(0, 3))
            elif new:
                new[rng.randrange(len(new))] = rng.randint(0, 3)
        new = tuple(new)
        assert blockinfo.diff(old, new) == longest(old, new)
        lo = rng.randint(0, len(old))
        hi = rng.randint(lo, len(old))
        spliced = tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 4)))
        new = old[:lo] + spliced + old[hi:]
        blockinfo.note_splice(old, new, lo, hi, len(spliced))
        p, eo, en = blockinfo.diff(old, new)
        assert old[:p] == new[:p] and old[eo:] == new[en:]
        assert lo <= p <= eo <= hi and p <= en <= lo + len(spliced)


def test_derived_summaries_equal_computed_ones():
    rng = random.Random(7)
    ir = _flat().ir()
    for _ in range(150):
        new = mutate(ir, rng, (DRAM, SCR))
        if new is None or new.args != ir.args:
            continue
        old_body, new_body = ir.body, new.body
        p, eo, en = blockinfo.diff(old_body, new_body)
        assert old_body[:p] == new_body[:p]
        assert old_body[eo:] == new_body[en:]
        derived = blockinfo.derive_summary(old_body, new_body, p, eo, en)
        assert derived == blockinfo._compute(new_body)
        ir = new


def test_one_statement_rewrite_checks_only_what_changed(monkeypatch):
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    # a config write, then 12 unrolled copies of (alloc, loop, reduction)
    q = _checked(_flat())
    n = len(q.ir().body)
    assert n == 37
    checked = []
    orig = recheck._Recheck.check

    def spy(self, s, *args):
        checked.append(s)
        return orig(self, s, *args)
    monkeypatch.setattr(recheck._Recheck, "check", spy)
    # the reduction of copy 0 and the allocation of copy 1 swap places
    r = q.reorder_stmts(StmtCursor(q, (("body", 3), )),
                        StmtCursor(q, (("body", 4), )))
    assert len(checked) == 2
    checked.clear()
    # a memory no call sees: only the allocation itself
    assert isinstance(r.ir().body[7], IR.Alloc)
    r2 = r.set_memory(StmtCursor(r, (("body", 7), )), SCR)
    assert len(checked) == 1
    checked.clear()
    # binding an expression: the new allocation, assignment and statement
    r2.bind_expr(ExprCursor(r2, (("body", 4), ), (("rhs", None), )), "prod")
    assert len(checked) == 3
    checked.clear()
    # a new size for an allocation: it and the statements using it
    s = r2.ir().body[7]
    new = _replace(r2.ir(), (7, ), [s.update(type=s.type.update(
        hi=(_const(5), )))])
    r2._derive(new, "edit")
    assert len(checked) == 3
    checked.clear()
    # a config write put in front: everything after it is re-checked
    r3 = r2.configwrite_at(StmtCursor(r2, (("body", 0), )), RC, "n", "2",
                           before=True)
    assert len(r3.ir().body) == n + 1
    assert len(checked) == n + 1


def test_full_recheck_switch(monkeypatch):
    monkeypatch.delenv(recheck.COMPARE_ENV, raising=False)
    q = _checked(_flat())
    calls = []
    orig = recheck.check_full

    def spy(ir):
        calls.append(ir)
        return orig(ir)
    monkeypatch.setattr(recheck, "check_full", spy)
    q.reorder_stmts(StmtCursor(q, (("body", 3), )),
                    StmtCursor(q, (("body", 4), )))
    assert calls == []
    monkeypatch.setenv(recheck.FULL_RECHECK_ENV, "1")
    r = q.reorder_stmts(StmtCursor(q, (("body", 3), )),
                        StmtCursor(q, (("body", 4), )))
    assert calls == [r.ir()]


def test_caches_are_bounded_and_clearable():
    from exo_hl.effects import api, bounds
    q = _checked(_flat())
    q.reorder_stmts(StmtCursor(q, (("body", 3), )),
                    StmtCursor(q, (("body", 4), )))
    assert blockinfo._SUMMARIES and blockinfo.stmt_info.cache_info().currsize
    bounds.clear_cache()
    assert not blockinfo._SUMMARIES
    assert blockinfo.stmt_info.cache_info().currsize == 0
    assert not recheck._KNOWN
    q.reorder_stmts(StmtCursor(q, (("body", 3), )),
                    StmtCursor(q, (("body", 4), )))
    api.clear_cache()
    assert not blockinfo._SUMMARIES
    assert blockinfo.stmt_info.cache_info().maxsize is not None
    assert blockinfo._SUMMARY_LIMIT > 0 and recheck._KNOWN_LIMIT > 0


# ----------------------------------------------------------------------
# names used outside their scope (a raw edit no rewrite should make)
@proc
def _scoped(N: size, x: f32[N], y: f32[N]):
    for i in seq(0, N):
        t: f32
        t = x[i] * 2.0
        y[i] = t


def _out_of_scope_edits(base):
    ir = base.ir()
    loop = ir.body[0]
    alloc, write, use = loop.body
    swapped = loop.update(body=(write, alloc, use))          # before its alloc
    hoisted = ir.update(body=(use.update(), ) + ir.body)     # outside the loop
    return [ir.update(body=(swapped, )), hoisted]


@pytest.mark.parametrize("full", [False, True], ids=["incremental", "full"])
@pytest.mark.parametrize("k", [0, 1], ids=["before-alloc", "outside-loop"])
def test_a_name_used_outside_its_scope_is_refused(monkeypatch, full, k):
    if full:
        monkeypatch.setenv(recheck.FULL_RECHECK_ENV, "1")
    base = _scoped.rename("scoped")      # a result of a checked rewrite:
    assert base._checked                   # its edits are re-checked
    bad = _out_of_scope_edits(base)[k]     # incrementally (unless full)
    with pytest.raises(SchedulingError, match="used where it is not defined"):
        base._derive(bad, "edit")


def test_loop_made_parallel_keeps_its_body_verdicts_and_is_race_checked():
    """Only a loop's mode changed (what ``parallelize`` does): the body
    is compared with the old one, not walked again, and the loop's race
    check is still asked: a racy loop made ``par`` by hand is refused by
    the incremental check itself, a race-free one passes."""
    @proc
    def two(n: size, x: f32[n + 1], y: f32[n]):
        for i in seq(0, n):
            x[i + 1] = x[i]
        for i in seq(0, n):
            y[i] = x[i] * 2.0

    base = _checked(two)
    old_ir = base.ir()
    racy = _replace(old_ir, (0, ), (_at(old_ir, 0).update(mode=IR.Par), ))
    assert _at(racy, 0).body is _at(old_ir, 0).body
    _full_rejects(racy)
    _incremental_rejects(old_ir, racy)
    _derive_rejects(base, racy, match="race")
    ok = _replace(old_ir, (1, ), (_at(old_ir, 1).update(mode=IR.Par), ))
    recheck._Recheck(old_ir, retype_window_names(ok, old_ir)).run()
    assert base.parallelize(base.find_loop("i #1")).ir().body[1].mode \
        is IR.Par
