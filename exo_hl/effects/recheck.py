"""Re-checking rewritten procedures: only what a rewrite could have affected.

Every rewrite result is checked like freshly written code
(``provenance.derive``): call signatures (``typerules.check_calls``), bounds
and callee preconditions (``effects.bounds``), race-freedom of ``par`` loops
(``wellformed.check_parallel_loops``). Done naively that is a walk of the whole
procedure per rewrite, which makes scheduling a large (e.g. fully unrolled)
procedure quadratic. This module re-checks a rewrite result against the
procedure it was derived from, which is known to pass the same checks.

Why that is sound. All three checks decompose over the statements of a
block: the procedure passes iff each statement's own obligations hold in
the *state* it is checked in. That state is a function of

* the procedure's arguments and preconditions (argument shapes, memories,
  size/stride facts, the ``assert``s);
* the enclosing statements' headers (loop bounds and mode, if-conditions
  and branch) and, for a loop body, the config values its iterations write
  (``valg_block`` of the body: PreValG inside a loop depends on the whole
  body);
* the *state changers* before it in its block and in the enclosing blocks:
  statements writing config (their ValG: PreValG is global dataflow over
  all earlier statements), allocations (shape, dense-stride facts, memory)
  and window statements (bindings, strides, boxes). Every other statement
  leaves the state unchanged (``bounds._Walker.transfer`` is the identity
  on it, and so are ``valg``/``window_map`` in ``effects.context``).

So a statement's verdict is a function of the key (statement, arguments,
preconditions, enclosing headers and loop-body ValG, every state changer
before it). Given the parent procedure (verdict: all statements pass) and
the new one:

1. Different arguments or preconditions: everything is re-checked.
2. Each block is compared with its old version (``blockinfo.diff``): the
   common prefix (same objects, same state changers before them) keeps its
   verdicts. The edited region is re-checked in the state rebuilt from the
   state changers before it, except that a region whose first statement is
   a loop (an ``if``) with the header (condition) and the loop-body ValG of
   the old region's first is compared with it recursively instead (the
   rest of the region is re-checked after it; a loop edited inside, two
   loops fused, a loop fissioned; a loop's mode is not part of its header
   here, since no check but the race check reads it); a ``par`` loop whose
   body or mode changed gets its race check again; the copies of an unrolled loop keep its bounds
   verdicts (instances of its body's, ``unrolled``), and so does a loop
   nest running the old loop's body with its iterator replaced (``split``),
   once the replacement is proven in the old loop's range (if that is not
   proven, the re-check is redone without this shortcut). Two perfectly
   nested loops interchanged
   (``reorder``: neither's bounds name the other's iterator, no config
   write in them) have their body compared the same way: it is checked
   under the same facts, in the other order. Statements a swap moved
   within a region without
   state changers keep their verdicts (the same state, the same enclosing
   statements).
3. Statements after the region (the same objects) keep their verdicts when
   the state changers of the region are the same in both versions, as
   projections carrying everything a later statement can see of them:
   a config writer by its ValG, a window statement or call by itself, an
   allocation by (name, is-tensor, sizes, memory). Otherwise:
   * a config writer, window statement or call differs (or one of them was
     added or removed): every later statement of the block is re-checked;
   * only allocations differ: the later statements mentioning one of their
     names are re-checked (only the calls' memory checks of those
     containing calls, when only memories differ: no other check reads a
     memory), transitively through later allocations, window statements
     and config writers they feed; a later statement not mentioning them
     sees the same state up to dense-stride facts about other buffers'
     strides, which are definitions of variables it does not mention (so
     the same obligations hold).
   The enclosing levels do the same with the region's enclosing statement.

The debugging switch ``EXO_HL_FULL_RECHECK=1`` makes every rewrite result
go through the whole-procedure checks instead. A failure found here is
always re-derived by the whole-procedure check, so error messages are
exactly the ones that check gives. ``EXO_HL_RECHECK_COMPARE=1`` runs both
on every rewrite result and raises ``RecheckMismatch`` when their verdicts
differ (a test-suite or fuzzing mode: it costs a whole-procedure check per
rewrite).

Why one module of this size: the comparison of a block with its old
version (common prefix, edited region, loops compared recursively, the
statements after) is one recursive walk resting on the invariant argued
above; what stands alone already lives apart (block summaries in
``core_ir/blockinfo``, regions that are instances of an old loop in
``unrolled``).
"""
from __future__ import annotations

import bisect
import os

from ..core_ir.blockinfo import (derive_summary, diff, free_syms, sc_prefix,
                                 stmt_info, summary)
from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.traversal import free_vars
from ..core_ir.typerules import bind_memory, check_calls, check_calls_in
from ..errors import BoundsError, ExoTypeError, located
from . import bounds, known_good
from .checklog import logged_check
from .api import loop_is_parallel
from .checks import hyp_terms
from .context import proc_hyps
from .lift import BufSub, valg
from ..core_ir.control_ranges import check_control_ranges
from .unrolled import check_instance, copies_of, in_scope, nest_instance
from .wellformed import par_loops, run_static_checks

__all__ = ["check_rewritten", "check_full", "full_recheck_forced",
           "compare_forced", "clear_cache", "RecheckMismatch",
           "FULL_RECHECK_ENV", "COMPARE_ENV"]

FULL_RECHECK_ENV = "EXO_HL_FULL_RECHECK"
COMPARE_ENV = "EXO_HL_RECHECK_COMPARE"


def _env_on(name) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def full_recheck_forced() -> bool:
    return _env_on(FULL_RECHECK_ENV)


def compare_forced() -> bool:
    return _env_on(COMPARE_ENV)


class RecheckMismatch(AssertionError):
    """The incremental and the whole-procedure re-check disagree on a
    rewrite result (``EXO_HL_RECHECK_COMPARE=1``): a bug in exo_hl, never
    a user error, so it is not a ``SchedulingError``."""


#: whole procedures already known to be well formed (``known_good``)
_KNOWN = known_good.KNOWN
_KNOWN_LIMIT = known_good.KNOWN_LIMIT


def clear_cache():
    """Forget the procedures known to be well formed."""
    known_good.clear_cache()


def check_full(proc_ir) -> None:
    """The whole-procedure checks (raise ``BoundsError``/``ExoTypeError``)."""
    key = (proc_ir.args, proc_ir.preds, proc_ir.body)
    if known_good.is_known(key):
        return
    check_scopes(proc_ir)
    check_calls(proc_ir)
    run_static_checks(proc_ir)
    known_good.remember(key)


@logged_check
def check_rewritten(new_ir, parent_ir=None) -> None:
    """Raise ``BoundsError``/``ExoTypeError`` unless ``new_ir`` passes the
    checks. ``parent_ir``: a procedure that passes them and that ``new_ir``
    was derived from (then only what the edit can affect is re-checked)."""
    if parent_ir is None or full_recheck_forced() \
            or parent_ir.args != new_ir.args \
            or parent_ir.preds != new_ir.preds:
        check_full(new_ir)
        return
    if compare_forced():
        _compare(new_ir, parent_ir)
        return
    # a rewrite that checks its result itself (to word its own refusal)
    # hands the same result to ``derive`` next: passed once, known after
    key = (new_ir.args, new_ir.preds, new_ir.body)
    if known_good.is_known(key):
        return
    try:
        check_control_ranges(new_ir)    # remembers the statements passed
        _Recheck(parent_ir, new_ir).run()
    except (BoundsError, ExoTypeError) as e:
        # the whole-procedure check names the first failure in its order
        check_full(new_ir)
        raise e
    known_good.remember(key)


def check_scopes(proc_ir) -> None:
    """Every buffer, window and loop variable a statement names is bound
    where it is used (an argument, an enclosing loop, or an allocation or
    window statement earlier in an enclosing block). The parser guarantees
    this for written code; a rewrite that moved a statement above the
    allocation it uses must be refused, not compiled."""
    free = free_vars(tuple(proc_ir.body), {a.name for a in proc_ir.args})
    if free:
        names = ", ".join(sorted(f"'{x.name}'" for x in free))
        raise ExoTypeError(located(
            f"{names} used where it is not defined (outside the scope of "
            f"its allocation, window or loop)", proc_ir.srcinfo,
            proc_ir.name))


def _compare(new_ir, parent_ir) -> None:
    """Both re-checks, their verdicts compared; then what ``check_full``
    decides (the error it raises, if any)."""
    def verdict(fn):
        try:
            fn()
        except (BoundsError, ExoTypeError) as e:
            return e
        return None
    def incremental():   # what ``check_rewritten`` runs without the switch
        check_control_ranges(new_ir)
        _Recheck(parent_ir, new_ir).run()
    inc = verdict(incremental)
    full = verdict(lambda: check_full(new_ir))
    if (inc is None) != (full is None):
        from ..core_ir.printer import proc_to_str
        inc_says, full_says = (("accepts", "rejects") if inc is None
                               else ("rejects", "accepts"))
        raise RecheckMismatch(
            f"the incremental re-check {inc_says} and the whole-procedure "
            f"check {full_says} this rewrite of '{parent_ir.name}':\n"
            f"{type(inc or full).__name__}: {inc or full}\n"
            f"before:\n{proc_to_str(parent_ir)}\n"
            f"after:\n{proc_to_str(new_ir)}")
    if full is not None:
        raise full


# ---------------------------------------------------------------------------


class _Walker(bounds._Walker):
    """The bounds walker, with loop-body ValG folded over the body's state
    changers only (the same value; cheaper on long bodies)."""

    def __init__(self, proc):
        # with no config writer anywhere the config dataflow is empty, so
        # computing it anyway gives the same states; always on here (no
        # whole-procedure walk to find out)
        super().__init__(proc, cfg=True)

    def body_valg(self, body):
        return bounds.valg_block(sc_prefix(body, len(body)))

    def transfer(self, s, st):
        if not stmt_info(s).sc:
            return st   # what the base class does, without looking it up
        return super().transfer(s, st)


def _moved(old, new, osum, nsum, p, eo, en):
    """The ids of the statements of the edited region ``new[p:en]`` that
    are statements of the old region ``old[p:eo]`` (the same objects: a
    swap, a statement moved within the region) when neither region has a
    state changer. Every statement of such a region is checked in the
    state before it (the common prefix is the same, and nothing in the
    region changes the state), under the same enclosing statements; the
    old procedure passed, so these statements pass where they stand
    now."""
    def none_in(pos, lo, hi):
        return bisect.bisect_left(pos, hi) == bisect.bisect_left(pos, lo)
    if en - p < 2 or eo - p < 2 or not none_in(osum.sc, p, eo) \
            or not none_in(nsum.sc, p, en):
        return ()
    was = {id(s) for s in old[p:eo]}
    return {id(s) for s in new[p:en] if id(s) in was}


def _proj(s):
    """What later statements of the block can see of a state changer."""
    if isinstance(s, IR.Alloc):
        t = s.type
        if isinstance(t, IR.Tensor):
            return ("alloc", s.name, True, t.hi, s.mem)
        return ("alloc", s.name, False, (), s.mem)
    if isinstance(s, (IR.WindowStmt, IR.Call)):
        return ("stmt", s)
    return ("cw", valg(s))


class _Recheck:
    def __init__(self, old, new, nests=True):
        self.old = old
        self.new = new
        self.w = _Walker(new)
        self.prepared = {}
        self.nests = nests      # use ``unrolled.nest_instance``
        self.used = False       # ... and did

    def run(self):
        st = bounds._St((), {}, BufSub(), bounds._arg_shapes(self.new))
        mems = {a.name: a.mem for a in self.new.args}
        self.block(self.old.body, self.new.body, st, mems, (), "body")
        try:
            if self.w.obs:
                bounds.discharge(self.new, hyp_terms(proc_hyps(self.new)),
                                 self.w.obs)
        except (BoundsError, ExoTypeError):
            if not self.used:   # (a nest's range unproven: not a verdict)
                raise
            _Recheck(self.old, self.new, False).run()

    # -- one statement, checked from scratch in its state ------------------
    def check(self, s, st, mems, path, walk=True):   # walk: the bounds
        self.scope(s, mems, path)
        st = self.w.stmt(s, st) if walk else self.w.transfer(s, st)
        inf = stmt_info(s)
        if inf.has_call:
            check_calls_in((s, ), mems, self.new.name)
        if inf.has_par:
            self.par_loops(s, path)
        return st, (bind_memory(s, mems) if inf.binder else mems)

    def scope(self, s, mems, path):
        """``check_scopes`` for one re-checked statement: every name it uses
        is an argument, a binder before it (``mems`` holds both) or the
        iterator of an enclosing loop. Statements not re-checked keep their
        binders: ``suffix`` re-checks those mentioning a binder the edit
        changed."""
        bound = set(mems)
        node = self.new
        for field, i in path[:-1]:
            node = getattr(node, field)[i]
            if isinstance(node, IR.For):
                bound.add(node.iter)
        free = free_syms(s) - bound     # = free_vars(s, bound)
        if free:
            names = ", ".join(sorted(f"'{x.name}'" for x in free))
            raise ExoTypeError(located(
                f"{names} used where it is not defined (outside the scope "
                f"of its allocation, window or loop)", s.srcinfo,
                self.new.name))

    def par_loops(self, s, path):
        *parent, (field, i) = path
        for p, loop in par_loops((s, ), tuple(parent), field, i):
            self.par(loop, p)

    def par(self, loop, path):
        r = loop_is_parallel(self.new, path)
        if not r:
            raise ExoTypeError(located(
                f"the iterations of a parallel loop may race: {r.reason}",
                loop.srcinfo, self.new.name))

    # -- a block against its old version -------------------------------------
    def prepare(self, old, new):
        """(p, eo, en, old summary, new summary) of a block and its old
        version; the new summary is remembered (``blockinfo``), so that
        ``body_valg``, ``stmt_info`` and later contexts find it."""
        key = (id(old), id(new))
        hit = self.prepared.get(key)
        if hit is not None:
            return hit[2]
        p, eo, en = diff(old, new)
        osum = summary(old)
        if p == eo == en:
            res = (p, eo, en, osum, osum)
        else:
            if eo - p == 1 and en - p == 1:
                o, n = old[p], new[p]
                if type(o) is type(n) and isinstance(n, (IR.For, IR.If)):
                    # the info of n is made of the summaries of its blocks:
                    # derive them first
                    self.prepare(o.body, n.body)
                    if isinstance(n, IR.If):
                        self.prepare(o.orelse, n.orelse)
            res = (p, eo, en, osum, derive_summary(old, new, p, eo, en, osum))
        self.prepared[key] = (old, new, res)   # (keeps the ids alive)
        return res

    def block(self, old, new, st, mems, ppath, field, prepared=None):
        p, eo, en, osum, nsum = prepared or self.prepare(old, new)
        if p == eo == en:
            return
        w = self.w
        for j in osum.sc[:bisect.bisect_left(osum.sc, p)]:
            s = new[j]          # old[:p] == new[:p]
            st = w.transfer(s, st)
            mems = bind_memory(s, mems)
        start = p
        if en > p and eo > p and \
                self.descend(old[p], new[p], st, mems, ppath + ((field, p), )):
            # the region's first statement is a loop (if) with the header
            # of the old region's first: compared with it, like a loop
            # edited inside (fuse_loop appends the second loop's body, a
            # fission keeps a prefix of it); it stands in the state the
            # old one stood in, whatever follows in either region
            st = w.transfer(new[p], st)
            start = p + 1
        # the old loop unrolled: its bounds verdicts hold (``unrolled``)
        walk = start > p or eo - p != 1 or type(old[p]) is not IR.For \
            or not copies_of(old[p], new[p:en],
                             in_scope(self.new, mems, ppath + ((field, p), )))
        kept = _moved(old, new, osum, nsum, p, eo, en) if start == p else ()
        loop = old[p] if walk and self.nests and eo - p == 1 else None
        for j in range(start, en):
            if id(new[j]) in kept:
                continue
            s, path = new[j], ppath + ((field, j), )
            inst = None if loop is None else nest_instance(loop, s)
            done = inst and check_instance(self, loop, s, inst, st, mems,
                                           path)
            if done:
                self.used = True
                st, mems = done
            else:
                st, mems = self.check(s, st, mems, path, walk)
            loop = None if stmt_info(s).sc else loop
        self.suffix(old, new, osum, nsum, p, eo, en, st, mems, ppath, field)

    def descend(self, o, n, st, mems, path):
        """Compare a loop (if) with its old version statement by statement
        when everything its body is checked under is unchanged."""
        if type(o) is not type(n):
            return False
        if isinstance(n, IR.For):
            # the mode is not part of what the body is checked under: the
            # bounds walk, call and scope checks never read it, and a loop
            # made ``par`` (``parallelize``) gets its race check below
            if (o.iter, o.lo, o.hi) != (n.iter, n.lo, n.hi):
                return self.interchanged(o, n, st, mems, path)
            prep = self.prepare(o.body, n.body)
            if self.w.body_valg(o.body) != self.w.body_valg(n.body):
                return False
            self.block(o.body, n.body, self.w.loop_state(n, st), mems, path,
                       "body", prep)
            if is_parallel(n.mode):
                self.par(n, path)
            return True
        if isinstance(n, IR.If):
            if o.cond != n.cond:
                return False
            st_body, st_else = self.w.if_states(n, st)
            self.block(o.body, n.body, st_body, mems, path, "body")
            if n.orelse:
                self.block(o.orelse, n.orelse, st_else, mems, path, "orelse")
            return True
        return False

    def interchanged(self, o, n, st, mems, path):
        """``for x: for y: B`` -> ``for y: for x: B'`` (``reorder``), neither
        loop's bounds naming the other's iterator and nothing in it writing
        config: B' is checked in the same state as B was (the two loops'
        facts are the same terms, in the other order; the config values
        are those before the nest), so B' is compared with B; the headers
        are walked again and the ``par`` loops asked again."""
        if len(o.body) != 1 or len(n.body) != 1:
            return False
        o2, n2 = o.body[0], n.body[0]
        if type(o2) is not IR.For or type(n2) is not IR.For:
            return False
        if (o.iter, o.lo, o.hi, o.mode) != (n2.iter, n2.lo, n2.hi, n2.mode) \
                or (o2.iter, o2.lo, o2.hi, o2.mode) != \
                (n.iter, n.lo, n.hi, n.mode):
            return False
        if stmt_info(o).cw or stmt_info(n).cw \
                or o.iter in free_vars((n.lo, n.hi)) \
                or n.iter in free_vars((o.lo, o.hi)):
            return False
        prep = self.prepare(o2.body, n2.body)
        w = self.w
        w.expr(n.lo, st, n)
        w.expr(n.hi, st, n)
        st_n = w.loop_state(n, st)
        w.expr(n2.lo, st_n, n2)
        w.expr(n2.hi, st_n, n2)
        inner = path + (("body", 0), )
        self.block(o2.body, n2.body, w.loop_state(n2, st_n), mems, inner,
                   "body", prep)
        if is_parallel(n2.mode):
            self.par(n2, inner)
        if is_parallel(n.mode):
            self.par(n, path)
        return True

    def suffix(self, old, new, osum, nsum, p, eo, en, st, mems, ppath, field):
        n = len(new)
        if en == n:
            return
        old_sc = [old[j] for j in osum.sc[bisect.bisect_left(osum.sc, p):
                                          bisect.bisect_left(osum.sc, eo)]]
        new_sc = [new[j] for j in nsum.sc[bisect.bisect_left(nsum.sc, p):
                                          bisect.bisect_left(nsum.sc, en)]]
        op, np_ = [_proj(s) for s in old_sc], [_proj(s) for s in new_sc]
        if op == np_:
            return
        full = any(x[0] != "alloc" for x in op + np_)
        xb, xc = set(), set()
        if not full:
            names = {x[1] for x in op + np_}
            if [x[1:4] for x in op] != [x[1:4] for x in np_]:
                xb = set(names)
            if [(x[1], x[4]) for x in op] != [(x[1], x[4]) for x in np_]:
                xc = set(names)
            region = [stmt_info(new[j]).names for j in range(p, en)]

            def outside(x):
                return nsum.uses.get(x, 0) - sum(x in r for r in region)
            xb = {x for x in xb if outside(x) > 0}
            xc = {x for x in xc if outside(x) > 0}
            if not xb and not xc:
                return
        if full or xb:
            positions = range(en, n)
        else:   # only memories differ: calls and the binders feeding them
            later = set(nsum.sc[bisect.bisect_left(nsum.sc, en):])
            later.update(nsum.calls[bisect.bisect_left(nsum.calls, en):])
            positions = sorted(later)
        for j in positions:
            s = new[j]
            inf = stmt_info(s)
            if full:
                st, mems = self.check(s, st, mems, ppath + ((field, j), ))
                continue
            hit_b = not inf.names.isdisjoint(xb)
            hit_c = inf.has_call and not inf.names.isdisjoint(xc)
            if hit_b:
                st, mems = self.check(s, st, mems, ppath + ((field, j), ))
            elif hit_c:
                # only memories differ for it: its calls' memory checks
                # are all that read them (bounds, scopes and races do not)
                check_calls_in((s, ), mems, self.new.name)
                if inf.sc:
                    st = self.w.transfer(s, st)
                    mems = bind_memory(s, mems)
            elif inf.sc:
                st = self.w.transfer(s, st)
                mems = bind_memory(s, mems)
            if inf.binder:
                if hit_b:
                    xb.add(s.name)
                    xc.add(s.name)
                elif isinstance(s, IR.WindowStmt) and s.rhs.name in xc:
                    xc.add(s.name)
            if hit_b and inf.cw:
                full = True   # its config writes may read what changed
