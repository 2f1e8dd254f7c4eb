"""Recognising the unrolled copies of a loop, so the re-check need not
prove their bounds again (``recheck``).

``unroll`` replaces ``for i in seq(lo, hi): B`` by the copies
``B[i -> c]`` for c = lo .. hi-1, each with fresh names for what B binds,
and then normalises their index expressions (``simplify``). Re-proving
every copy's accesses and call preconditions was most of the cost of an
unroll; yet they are instances of what the old loop's body was proven to
satisfy.

``copies_of(loop, region)`` holds when ``region`` is, statement by
statement, ``B[i -> c, b -> b_c]`` for each c in order (``b -> b_c``: B's
binders renamed, every new name distinct and none a name ``loop`` uses,
its iterator or a name in scope where the region stands), where two expressions count as equal when they are
identical or both are *pure control expressions* (integer/bool constants,
control variables, arithmetic, comparisons, and/or/not: no buffer read,
stride, config field or extern) whose lifted effect terms encode to the
same SMT terms (``smt.encode`` of ``bounds.lift_index``: linear forms with
folded constants, a sum compared as the multiset of its atoms, and/or as
the set of its operands), i.e. have the same value for
every value of the variables -- the normalisation ``simplify`` applied
is checked, not trusted. ``loop`` must have literal integer bounds and
write no configuration state (itself or in a callee).

Why the copies' bounds obligations then hold (what ``recheck`` uses it
for). The old procedure passed, so every obligation of B -- checked in
state S (the loop's state: path facts H, config values, shapes, window
bindings) extended by ``lo <= i < hi`` -- is valid: unsat with ``i`` and
every other variable free. The bounds walker (``bounds._Walker``) is a
function of (statement, state), and the lifting it does commutes with
substituting a constant for ``i`` and renaming binders. Copy c stands
where the loop stood: in S (the re-checker's invariant for an edited
region: same statements before it, same enclosing statements), with no
config change in between (nothing in the loop writes config, so the
loop body's state had S's config values too, and so do the copies), plus
what earlier copies' allocations and window statements added -- entries
for their own fresh names, which copy c does not mention, and dense-stride
facts about those names, which only strengthen the path facts. So copy
c's obligations are those of B with ``i = c`` (a constant in [lo, hi),
literal bounds), renamed, up to replacing pure subterms by terms of equal
value; each is an instance of a valid formula whose range premise holds,
hence valid. The effect semantics is compositional, so equal-valued pure
(never ⊥: only symbol variables, which no state maps to ⊥) subterms give
equivalent formulas.

``nest_instance(loop, s)`` generalises this to one statement ``s``: a
nest of loops and one-armed ifs whose innermost block is ``B[i -> e, b ->
b']`` for a pure expression ``e`` naming only the nest's iterators and
what ``loop`` names from outside (``split``'s ``for io: for ii: B[i ->
f*io + ii]`` and its tail). ``e`` is found where B reads ``i`` (or
``R + i`` for a pure ``R``, when it was replaced by ``b - R``) and is only
a candidate: the whole body is then compared as above. Standing in S,
the body of the nest is checked in S plus the headers' facts (the
headers' own bounds are walked), so with ``lo <= e < hi`` proven there
(``check_instance`` adds that obligation) each obligation of the body is
the instance ``i = e`` of a valid formula whose range premise holds;
nothing the headers add is named by S or by the old obligations (their
iterators, like the body's binders, are neither names in scope there nor
names the loop uses from outside).

What it does not cover, so ``recheck`` still does it for the copies: name
scoping, call signatures and memories (``typerules``), races of nested
``par`` loops, and the state transfer through the copies' allocations
and window statements (for the statements after them). A region that
does not match (a copy edited, a bound that is not a literal, an
expression normalised to something not provably equal) is checked in full.
"""
from __future__ import annotations

from ..core_ir import operators as OPS
from ..core_ir import types as T
from ..core_ir.blockinfo import free_syms, stmt_info
from ..core_ir.nodes import IR, Node
from ..core_ir.syms import Sym
from ..core_ir.operators import is_parallel
from ..core_ir.traversal import bound_syms, free_vars, subst
from . import eexpr as E
from . import smt as S
from .bounds import lift_index

__all__ = ["copies_of", "nest_instance", "check_instance", "in_scope"]

_PURE_OPS = OPS.ARITH_OPS | OPS.CMP_OPS | OPS.BOOL_OPS


def _literal(e):
    if type(e) is IR.Const and type(e.val) is int:
        return e.val
    return None


def in_scope(proc, mems, path) -> set:
    """The names in scope at ``path``: ``mems`` (arguments and binders)
    and the iterators of the enclosing loops."""
    scope, node = set(mems), proc
    for field, i in path[:-1]:
        node = getattr(node, field)[i]
        if type(node) is IR.For:
            scope.add(node.iter)
    return scope


def copies_of(loop, region, scope=frozenset()) -> bool:
    """Whether ``region`` (a tuple of statements) is exactly the unrolled
    copies of ``loop`` (see the module docstring), none of them binding a
    name of ``scope`` (the names in scope where it stands: a copy
    rebinding one would make the walker conflate the two)."""
    if type(loop) is not IR.For:
        return False
    lo, hi = _literal(loop.lo), _literal(loop.hi)
    body = loop.body
    m = len(body)
    if lo is None or hi is None or hi <= lo or not m \
            or len(region) != (hi - lo) * m or stmt_info(loop).cw:
        return False
    binders = bound_syms(body)
    outer = set(free_syms(loop)) | set(scope)
    outer.add(loop.iter)
    seen = set()
    for k in range(hi - lo):
        copy = region[k * m:(k + 1) * m]
        fresh = bound_syms(copy)
        if len(fresh) != len(binders):
            return False
        for b in fresh:
            if b in seen or b in outer:
                return False
            seen.add(b)
        sub = dict(zip(binders, fresh))
        sub[loop.iter] = IR.Const(lo + k, type=IR.Int, srcinfo=None)
        for x, y in zip(body, copy):
            if not _match(x, y, sub):
                return False
    return True


def _pure(e) -> bool:
    """A control expression whose lifted term is never ⊥ and mentions
    only symbol variables."""
    t = type(e)
    if t is IR.Const:
        return type(e.val) in (int, bool)
    if t is IR.Read:
        return not e.idx and T.is_control(e.type)
    if t is IR.BinOp:
        if e.op in ("/", "%") and not (type(e.rhs) is IR.Const
                                       and type(e.rhs.val) is int
                                       and e.rhs.val > 0):
            return False    # (only what the frontend allows: quasi-affine)
        return e.op in _PURE_OPS and _pure(e.lhs) and _pure(e.rhs)
    if t is IR.USub or t is IR.Not:
        return _pure(e.arg)
    return False


def _value(e):
    """The SMT encoding (value, definedness) of a pure expression, in a
    form where equal forms have equal values whatever order the encoding
    met the operands in (``_canon``)."""
    return _canon(S.encode(lift_index(e)))


def _canon(t):
    """``t`` with the order of commutative operands forgotten: a linear
    form as the set of (atom, summed coefficient) over its atoms'
    canonical forms, and/or as the set of their operands (both
    idempotent). A linear form is a *multiset* of atoms: the encoding
    merges like atoms only when they are the same tuple, so ``(n + m) / 2
    + (m + n) / 2`` keeps two atoms whose canonical forms are equal, and
    a set of (atom, coefficient) pairs would make it equal to ``(n + m) /
    2``; summing the coefficients of equal canonical atoms gives ``2 *``
    the atom."""
    if type(t) is not tuple or not t:
        return t
    tag = t[0]
    if tag == "lin":
        coeffs = {}
        for a, c in t[2]:
            k = _canon(a)
            coeffs[k] = coeffs.get(k, 0) + c
        return ("lin", t[1],
                frozenset((a, c) for a, c in coeffs.items() if c != 0))
    if tag in ("and", "or"):
        return (tag, frozenset(_canon(x) for x in t[1]))
    return tuple(_canon(x) for x in t)


def _match(a, b, sub) -> bool:
    """``_same(subst(a, sub), b)`` without building the substituted tree:
    ``sub`` maps binders to their new names (every occurrence renamed) and
    the iterator to the expression replacing its reads."""
    ta = type(a)
    if ta is tuple:
        return type(b) is tuple and len(a) == len(b) and \
            all(_match(x, y, sub) for x, y in zip(a, b))
    if ta is Sym:
        r = sub.get(a)
        return b == (r if type(r) is Sym else a)
    if not isinstance(a, Node):
        return a == b
    if ta is IR.Proc or ta is IR.Const:
        if a == b:
            return True
    elif ta is IR.Read and not a.idx and a.name in sub \
            and type(sub[a.name]) is not Sym:
        return _same(sub[a.name], b)
    elif ta is type(b) and all(_match(getattr(a, f), getattr(b, f), sub)
                               for f in ta._fields):
        return True
    return isinstance(a, IR.expr) and isinstance(b, IR.expr) and _pure(a) \
        and _pure(b) and _value(subst(a, sub)) == _value(b)


def _same(a, b) -> bool:
    """``a`` and ``b`` are the same IR up to pure control expressions of
    equal value."""
    if a is b:
        return True
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and \
            all(_same(x, y) for x, y in zip(a, b))
    if not isinstance(a, Node):
        return a == b
    if a == b:
        return True
    if isinstance(a, IR.expr) and isinstance(b, IR.expr) and _pure(a) \
            and _pure(b):
        return _value(a) == _value(b)
    if type(a) is not type(b):
        return False
    return all(_same(getattr(a, f), getattr(b, f)) for f in type(a)._fields)


def nest_instance(loop, s):
    """``(headers, e)`` when ``s`` is a nest of loops and one-armed ifs
    (``headers``, outermost first) whose innermost block is ``loop``'s
    body with its iterator replaced by the pure expression ``e`` (binders
    renamed as for ``copies_of``), else None: what ``split`` makes of a
    loop (``for io: for ii: B[i -> f*io + ii]``, and the tail). ``e``
    names only the headers' iterators and what ``loop`` names from
    outside, so it means the same wherever the body reads ``i``. The
    caller must prove ``lo <= e < hi`` where the body stands."""
    if type(loop) is not IR.For or stmt_info(loop).cw:
        return None
    outer = free_syms(loop)
    m = len(loop.body)
    headers = []
    node = s
    while (type(node) is IR.For or (type(node) is IR.If
                                     and not node.orelse)):
        headers.append(node)
        if len(node.body) == m:
            e = _instance_body(loop, node.body, headers, outer)
            if e is not None:
                return tuple(headers), e
        if len(node.body) != 1:
            return None
        node = node.body[0]
    return None


def _instance_body(loop, body, headers, outer):
    e = None
    for x, y in zip(loop.body, body):
        e = _find(x, y, loop.iter)
        if e is not None:
            break
    if e is None or not isinstance(e, IR.expr) or not _pure(e):
        return None     # (no witness that the loop ran: the caller's
        #                  range proof needs one)
    iters = [h.iter for h in headers if type(h) is IR.For]
    binders, fresh = bound_syms(loop.body), bound_syms(body)
    taken = set(outer) | set(iters)
    if len(fresh) != len(binders) or len(set(fresh)) != len(fresh) \
            or len(set(iters)) != len(iters) \
            or any(b in taken for b in fresh) \
            or any(x in outer for x in iters):
        return None
    if not free_vars(e) <= (set(outer) - {loop.iter}) | set(iters):
        return None
    sub = dict(zip(binders, fresh))
    sub[loop.iter] = e
    for x, y in zip(loop.body, body):
        if not _match(x, y, sub):
            return None
    return e


def _find(a, b, it):
    """The subexpression of ``b`` at the first position where ``a`` reads
    ``it`` (a candidate for what replaced it), walking both alike."""
    if type(a) is IR.Read and a.name == it and not a.idx:
        return b
    if isinstance(a, IR.expr) and T.is_int_control(a.type) \
            and isinstance(b, IR.expr) and T.is_int_control(b.type) \
            and _pure(a) and _pure(b) and it in free_vars(a):
        # a = R + it (coefficient 1): it was replaced by b - R
        rest = subst(a, {it: IR.Const(0, type=IR.Int, srcinfo=None)})
        plus = IR.BinOp("+", rest, IR.Read(it, (), type=IR.Index),
                        type=a.type, srcinfo=None)
        if _value(plus) == _value(a):
            return IR.BinOp("-", b, rest, type=a.type, srcinfo=None)
        return None
    if isinstance(a, tuple):
        if not isinstance(b, tuple):
            return None
        pairs = zip(a, b)
    elif isinstance(a, Node) and type(a) is type(b):
        pairs = ((getattr(a, f), getattr(b, f)) for f in type(a)._fields)
    else:
        return None
    for x, y in pairs:
        if isinstance(x, (Node, tuple)):
            r = _find(x, y, it)
            if r is not None:
                return r
    return None


def check_instance(rc, loop, s, inst, st, mems, path):
    """The re-check (``rc``, a ``recheck._Recheck``) of ``s``, a nest
    instance of ``loop`` (``nest_instance``) standing in the state ``st``
    the loop stood in: its headers walked for bounds, ``lo <= e < hi``
    proven where the body stands, the body checked for all but bounds.
    Returns the state and memories after it, or None (nothing done) when
    a header's iterator or a binder of the body is a name already in
    scope there (the walker would conflate the two)."""
    headers, e = inst
    w = rc.w
    scope = in_scope(rc.new, mems, path)
    if any(type(h) is IR.For and h.iter in scope for h in headers) or \
            any(b in scope for b in bound_syms(headers[-1].body)):
        return None
    rc.scope(s, mems, path)
    body_mems = mems
    out = w.transfer(s, st)
    hpath = path
    for k, h in enumerate(headers):
        if k:
            hpath = hpath + (("body", 0), )
        if type(h) is IR.For:
            w.expr(h.lo, st, h)
            w.expr(h.hi, st, h)
            st = w.loop_state(h, st)
            if is_parallel(h.mode):
                rc.par(h, hpath)
        else:
            w.expr(h.cond, st, h)
            st = w.if_states(h, st)[0]
    x = st.lift(e)
    goal = E.and_(E.op("<=", st.lift(loop.lo), x),
                  E.op("<", x, st.lift(loop.hi)))
    w.need(st, goal, lambda: "the iterations a rewrite ran are not those "
           "of the loop it replaced", s, e)
    for j, b in enumerate(headers[-1].body):
        st, body_mems = rc.check(b, st, body_mems, hpath + (("body", j), ),
                                 False)
    return out, mems
