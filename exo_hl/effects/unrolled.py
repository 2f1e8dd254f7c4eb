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
binders renamed, every new name distinct and none a name ``loop`` uses
or its iterator), where two expressions count as equal when they are
identical or both are *pure control expressions* (integer/bool constants,
control variables, arithmetic, comparisons, and/or/not: no buffer read,
stride, config field or extern) whose lifted effect terms encode to the
same SMT terms (``smt.encode`` of ``bounds._lift``: linear forms with
canonical atom order and folded constants), i.e. have the same value for
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
from ..core_ir.traversal import bound_syms, subst
from . import smt as S
from .bounds import _lift

__all__ = ["copies_of"]

_PURE_OPS = OPS.ARITH_OPS | OPS.CMP_OPS | OPS.BOOL_OPS


def _literal(e):
    if type(e) is IR.Const and type(e.val) is int:
        return e.val
    return None


def copies_of(loop, region) -> bool:
    """Whether ``region`` (a tuple of statements) is exactly the unrolled
    copies of ``loop`` (see the module docstring)."""
    if type(loop) is not IR.For:
        return False
    lo, hi = _literal(loop.lo), _literal(loop.hi)
    body = loop.body
    m = len(body)
    if lo is None or hi is None or hi <= lo or not m \
            or len(region) != (hi - lo) * m or stmt_info(loop).cw:
        return False
    binders = bound_syms(body)
    outer = set(free_syms(loop))
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
            if not _same(subst(x, sub), y):
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
        return e.op in _PURE_OPS and _pure(e.lhs) and _pure(e.rhs)
    if t is IR.USub or t is IR.Not:
        return _pure(e.arg)
    return False


def _value(e):
    return S.encode(_lift(e))


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
