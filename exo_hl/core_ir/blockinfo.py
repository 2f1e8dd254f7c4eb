"""Structural facts about statements and statement blocks, kept cheap to
reuse between the versions of a procedure a schedule makes.

Nothing here is a verdict: every fact is a pure function of the IR it is
about, so a cached fact can only be stale if the cache key fails to identify
the IR. Keys are either the statement node itself (structural equality, so
equal statements share facts) or, for blocks, the block tuple's *identity*
with the tuple itself kept alive in the cache entry (an identity can then
never be reused by another object while its entry exists).

* ``stmt_info(s)``: does ``s`` write configuration state (itself, in a nested
  statement or through a callee, transitively), does it bind a name
  (``Alloc``/``WindowStmt``), does it contain a call / a window statement /
  a ``par`` loop, and every symbol it mentions.
* ``summary(block)``: positions of the block's statements that change what
  later statements are checked against ("state changers": config writers,
  allocations, window statements), of statements containing calls / window
  statements, and how many statements mention each symbol.
  ``derive_summary`` computes the summary of an edited block from the
  summary of the block it was edited from, in time proportional to the
  edit (plus the number of state changers, calls and symbols).
* ``diff(old, new)``: the common prefix and suffix of two blocks (equal
  statements, almost always the same objects), found by C-level tuple
  comparisons.
* ``free_syms(s)``: the symbols ``s`` uses but does not bind
  (``traversal.free_vars(s)``), composed from those of its nested
  statements, so a re-check of a loop whose body was edited walks only
  what the edit built.
* ``sc_prefix(block, i)``: the state changers among ``block[:i]``, in order
  (what a context computation must fold over; every other statement leaves
  the configuration state and the bindings unchanged).
"""
from __future__ import annotations

import bisect
from ..caches import container, memo
from collections import OrderedDict

from .nodes import IR
from .operators import is_parallel
from .traversal import free_vars, used_syms

__all__ = ["StmtInfo", "stmt_info", "proc_writes_config", "Summary",
           "summary", "derive_summary", "diff", "note_splice", "sc_prefix",
           "free_syms",
           "clear_cache"]


class StmtInfo:
    __slots__ = ("cw", "binder", "has_call", "has_win", "has_par", "names")

    def __init__(self, cw, binder, has_call, has_win, has_par, names):
        self.cw = cw              # writes configuration state (transitively)
        self.binder = binder      # is an Alloc / WindowStmt
        self.has_call = has_call  # contains a Call (itself included)
        self.has_win = has_win    # contains a WindowStmt (itself included)
        self.has_par = has_par    # contains a par loop (itself included)
        self.names = names        # frozenset of every Sym it mentions

    @property
    def sc(self):
        """A state changer: later statements of its block are checked in a
        state it changes (config values, buffer shapes, window bindings)."""
        return self.cw or self.binder


def _esyms(e, out):
    """Add to ``out`` every Sym ``traversal.used_syms`` finds in expression
    (or window access) ``e``: names, and the sizes of tensor types."""
    t = type(e)
    if t is IR.Read:
        out.add(e.name)
        for i in e.idx:
            _esyms(i, out)
        if type(e.type) is IR.Tensor:
            for h in e.type.hi:
                _esyms(h, out)
    elif t is IR.BinOp:
        _esyms(e.lhs, out)
        _esyms(e.rhs, out)
    elif t is IR.Const or t is IR.ReadConfig:
        pass
    elif t is IR.USub or t is IR.Not:
        _esyms(e.arg, out)
    elif t is IR.StrideExpr:
        out.add(e.name)
    elif t is IR.WindowExpr:
        out.add(e.name)
        for a in e.idx:
            _esyms(a, out)
    elif t is IR.Interval:
        _esyms(e.lo, out)
        _esyms(e.hi, out)
    elif t is IR.Point:
        _esyms(e.pt, out)
    elif t is IR.Extern:
        for a in e.args:
            _esyms(a, out)
    else:  # anything new in the grammar: the generic walk
        out |= used_syms(e)


def _own_syms(s):
    """The Syms a statement mentions outside its nested statements."""
    out = set()
    t = type(s)
    if t is IR.Assign or t is IR.Reduce:
        out.add(s.name)
        for i in s.idx:
            _esyms(i, out)
        _esyms(s.rhs, out)
        if type(s.type) is IR.Tensor:
            for h in s.type.hi:
                _esyms(h, out)
    elif t is IR.For:
        out.add(s.iter)
        _esyms(s.lo, out)
        _esyms(s.hi, out)
    elif t is IR.If:
        _esyms(s.cond, out)
    elif t is IR.Alloc:
        out.add(s.name)
        if type(s.type) is IR.Tensor:
            for h in s.type.hi:
                _esyms(h, out)
    elif t is IR.WindowStmt:
        out.add(s.name)
        _esyms(s.rhs, out)
    elif t is IR.Call:
        for a in s.args:
            _esyms(a, out)
    elif t is IR.WriteConfig:
        _esyms(s.rhs, out)
    elif t is not IR.Pass:
        out |= used_syms(s)
    return out


@memo(maxsize=1 << 16)
def stmt_info(s) -> StmtInfo:
    own = _own_syms(s)
    if isinstance(s, (IR.For, IR.If)):
        # from the summaries of its blocks (derived, not recomputed, for a
        # loop whose body was edited)
        sums = [summary(s.body)]
        if isinstance(s, IR.If) and s.orelse:
            sums.append(summary(s.orelse))
        names = frozenset(own.union(*(x.uses.keys() for x in sums)))
        par = isinstance(s, IR.For) and is_parallel(s.mode)
        return StmtInfo(any(x.cw for x in sums), False,
                        any(x.calls for x in sums),
                        any(x.wins for x in sums),
                        par or any(x.pars for x in sums), names)
    cw = (isinstance(s, IR.WriteConfig)
          or (isinstance(s, IR.Call) and proc_writes_config(s.f)))
    return StmtInfo(cw, isinstance(s, (IR.Alloc, IR.WindowStmt)),
                    isinstance(s, IR.Call), isinstance(s, IR.WindowStmt),
                    False, frozenset(own))


@memo(maxsize=1 << 16)
def free_syms(s) -> frozenset:
    """``traversal.free_vars(s)``: the symbols statement ``s`` (with the
    statements in it) uses but does not bind. A loop's or if's from those
    of its blocks (each remembered), the same sets ``free_vars`` walks
    for: a loop's bounds, then its body with the iterator bound; the
    branches each on their own; in a block, what a statement binds is bound
    for the statements after it."""
    t = type(s)
    if t is IR.For:
        return frozenset(free_vars((s.lo, s.hi))
                         | (_block_free(s.body) - {s.iter}))
    if t is IR.If:
        return frozenset(free_vars(s.cond) | _block_free(s.body)
                         | _block_free(s.orelse))
    return frozenset(free_vars(s))


def _block_free(blk) -> set:
    out, bound = set(), set()
    for s in blk:
        out |= free_syms(s) - bound
        if type(s) is IR.Alloc or type(s) is IR.WindowStmt:
            bound.add(s.name)
    return out


@memo(maxsize=4096)
def proc_writes_config(f) -> bool:
    """Does calling procedure ``f`` (an ``IR.Proc``) write config state?"""
    return any(stmt_info(s).cw for s in f.body)


#: Summary fields holding positions, and the statement property of each
_POSITIONS = (("sc", lambda i: i.cw or i.binder), ("cw", lambda i: i.cw),
              ("calls", lambda i: i.has_call), ("wins", lambda i: i.has_win),
              ("pars", lambda i: i.has_par))


class Summary:
    """Positions (sorted tuples) of a block's statements that are state
    changers (``sc``), write config (``cw``), contain calls (``calls``),
    window statements (``wins``), par loops (``pars``); ``uses`` maps a
    Sym to the number of statements of the block mentioning it."""

    __slots__ = tuple(k for k, _ in _POSITIONS) + ("uses", )

    def __init__(self, uses, **positions):
        for k, _ in _POSITIONS:
            setattr(self, k, positions[k])
        self.uses = uses

    def _key(self):
        return tuple(getattr(self, k) for k in self.__slots__)

    def __eq__(self, other):  # for tests: derived == computed from scratch
        return isinstance(other, Summary) and self._key() == other._key()

    def __repr__(self):
        return ("Summary(" + ", ".join(f"{k}={getattr(self, k)}"
                                       for k, _ in _POSITIONS)
                + f", uses={len(self.uses)} names)")


def _compute(blk) -> Summary:
    infos = [stmt_info(s) for s in blk]
    uses = {}
    for inf in infos:
        for n in inf.names:
            uses[n] = uses.get(n, 0) + 1
    return Summary(uses, **{k: tuple(j for j, i in enumerate(infos) if f(i))
                            for k, f in _POSITIONS})


_SUMMARIES: "OrderedDict[int, tuple]" = container(
    "exo_hl.core_ir.blockinfo.summaries", OrderedDict())
_SUMMARY_LIMIT = 4096


def summary(blk) -> Summary:
    """The summary of a statement block (a tuple), memoised by identity."""
    hit = _SUMMARIES.get(id(blk))
    if hit is not None and hit[0] is blk:
        _SUMMARIES.move_to_end(id(blk))
        return hit[1]
    out = _compute(blk)
    _remember(blk, out)
    return out


def _remember(blk, summ):
    # small blocks too: a re-check asks for the summaries of the loop
    # bodies along the edited path again for each statement it checks
    # (body ValG, contexts), and most loop bodies are small
    _SUMMARIES[id(blk)] = (blk, summ)
    _SUMMARIES.move_to_end(id(blk))
    while len(_SUMMARIES) > _SUMMARY_LIMIT:
        _SUMMARIES.popitem(last=False)


def _splice(pos, p, eo, en, new_positions):
    """Positions before ``p`` kept, [p, eo) replaced, later ones shifted."""
    a = bisect.bisect_left(pos, p)
    b = bisect.bisect_left(pos, eo)
    d = en - eo
    tail = pos[b:] if d == 0 else tuple(x + d for x in pos[b:])
    return pos[:a] + tuple(new_positions) + tail


def derive_summary(old, new, p, eo, en, old_summary=None) -> Summary:
    """Summary of block ``new``, which equals ``old`` except that
    ``old[p:eo]`` was replaced by ``new[p:en]``; remembered for ``new``."""
    hit = _SUMMARIES.get(id(new))
    if hit is not None and hit[0] is new:
        return hit[1]
    o = old_summary if old_summary is not None else summary(old)
    if en - p > len(new) // 2:
        out = _compute(new)
    else:
        infos = [stmt_info(s) for s in new[p:en]]
        uses = dict(o.uses)
        for s in old[p:eo]:
            for n in stmt_info(s).names:
                c = uses[n] - 1
                if c:
                    uses[n] = c
                else:
                    del uses[n]
        for i in infos:
            for n in i.names:
                uses[n] = uses.get(n, 0) + 1
        out = Summary(uses, **{
            k: _splice(getattr(o, k), p, eo, en,
                       [p + j for j, i in enumerate(infos) if f(i)])
            for k, f in _POSITIONS})
    _remember(new, out)
    return out


def diff(old, new):
    """``(p, eo, en)`` with ``p <= eo``, ``p <= en``: ``old[:p] == new[:p]``
    and ``old[eo:] == new[en:]`` statement by statement (the statements are
    equal IR, almost always the very same objects): the common prefix and
    then the common suffix, as long as possible. Comparisons run on tuple
    slices (C loops that skip identical elements), galloping from where the
    edit starts: an edit of a few statements costs a few comparisons of
    the rest of the block, however long it is. For a block just built by
    splicing (``note_splice``), the edited part found is within the
    spliced-in statements (possibly less than as small as possible)."""
    for o, n, res in _DIFFS:   # the same pair, diffed a moment ago
        if o is old and n is new:
            return res
    res = _diff(old, new)
    _DIFFS.insert(0, (old, new, res))
    del _DIFFS[4:]
    return res


#: the last few diffs, keyed by the identities of the blocks (kept alive
#: here): window retyping and the re-check of one rewrite diff the same pair
_DIFFS: list = container("exo_hl.core_ir.blockinfo.diffs", [])


def note_splice(old, new, lo, hi, k):
    """Record ``diff(old, new)`` for a block ``new`` its caller has just
    built as ``old[:lo] + S + old[hi:]`` with ``len(S) == k``: then only
    the spliced-in part needs comparing (``diff`` would compare the whole
    unchanged tail)."""
    if len(new) != len(old) - (hi - lo) + k:
        return
    m = min(hi - lo, k)
    i = 0
    while i < m and (old[lo + i] is new[lo + i] or old[lo + i] == new[lo + i]):
        i += 1
    j = 0
    while j < m - i and (old[hi - 1 - j] is new[lo + k - 1 - j]
                         or old[hi - 1 - j] == new[lo + k - 1 - j]):
        j += 1
    _DIFFS.insert(0, (old, new, (lo + i, hi - j, lo + k - j)))
    del _DIFFS[4:]


def _diff(old, new):
    lo, ln = len(old), len(new)
    p = _common_prefix(old, new, min(lo, ln))
    # the smallest d (eo = p + d, en = eo + delta) whose suffixes are equal;
    # equal suffixes stay equal when shortened, so a search applies
    delta = ln - lo
    d0 = max(0, -delta)

    def same(d):
        i = p + d
        if i < lo and old[i] is not new[i + delta] and old[i] != new[i + delta]:
            return False   # (without copying the rest of the blocks)
        return old[i:] == new[i + delta:]
    if same(d0):
        d = d0
    else:
        bad, step = d0, 1          # same(bad) is False
        while True:
            d = min(lo - p, d0 + step)   # same(lo - p): both suffixes empty
            if same(d):
                break
            bad, step = d, 2 * step
        while d - bad > 1:          # same(d), not same(bad)
            mid = (bad + d) // 2
            if same(mid):
                d = mid
            else:
                bad = mid
    eo = p + d
    return p, eo, eo + delta


def _common_prefix(old, new, m):
    """Length of the longest common prefix (at most ``m``) of two blocks."""
    a, size = 0, 16
    while a < m:
        b = min(m, a + size)
        if old[a:b] != new[a:b]:
            while b - a > 1:   # the first difference is in [a, b)
                mid = (a + b) // 2
                if old[a:mid] == new[a:mid]:
                    a = mid
                else:
                    b = mid
            return a
        a, size = b, 2 * size
    return m


def sc_prefix(blk, i):
    """The state changers among ``blk[:i]``, in program order."""
    pos = summary(blk).sc
    k = bisect.bisect_left(pos, i)
    return tuple(blk[j] for j in pos[:k])


def clear_cache():
    _SUMMARIES.clear()
    _DIFFS.clear()
    stmt_info.cache_clear()
    proc_writes_config.cache_clear()
