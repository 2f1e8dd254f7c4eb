"""Which precision can hold a data expression in place of the expression.

Rewrites that move a data expression ``e`` into a location of some type
``T`` and read that location where ``e`` was (``bind_expr``'s temporary,
``bind_config``'s field; ``inline_assign``, ``inline_loop`` and
``merge_writes`` go the other way, from the location back to ``e``) are
only right when the statements consuming the value compute with what they
read exactly what they computed with ``e``. How a statement computes (the
interpreter and the C backend agree on it, ``core_ir/datasem.py``):

* floating-point data is computed in its own precision (``f32 * f32`` in
  ``f32``), and a literal takes the type of its context (the operation
  around it, else the location it is stored into);
* integer data is computed exactly (C promotes every integer type to
  ``int``), and converted (wrapped) only when it is stored.

So ``e``'s *value* is what must survive the round trip through ``T``:

* ``e`` of a floating-point type: ``T`` is that type;
* ``e`` made of literals only: stored into ``T`` it is computed in ``T``
  (``2.5 + 2.5`` is 4 in an ``i32``, 5 in an ``f32``), where it stood it
  was computed in its context. Both are computed exactly, as the
  interpreter does (``core_ir.literal_values``): every operation around ``e``
  must keep its evaluation type (a typed read in place of literals can
  change it) and each occurrence must give the same value, bit for bit
  (``-0.0`` stored into an ``i32`` reads back as ``+0.0``);
* ``e`` of an integer type: ``T`` is an integer type whose range contains
  the range of ``e`` (interval arithmetic over the types of its leaves, in
  ``i32`` as the statement computes it: ``A[i] / 6.0`` divides by the
  integer 6, rounding toward zero; ``int_range``), or,
  failing that, ``T`` is at least as wide as every integer location the
  value flows into through ``+ - *`` alone (wrapping commutes with them).
  ``i8 + i8`` in an ``i32`` statement therefore gets ``i16``/``i32``, never
  ``i8``;
* any other ``e`` (reads of ``R`` buffers, externs): ``T`` is ``e``'s own
  type, as written;
* besides, where the statement only stores ``e`` (it is the whole
  right-hand side), any ``T`` holding every value of ``e``
  (``datasem.holds_exactly``: an ``f64`` for an ``f32`` value, an ``f32``
  for an ``i8`` one), unless an integer would come back through a float
  into a narrower integer (saturating, not wrapping) or a reduction's
  addition would change its evaluation type (``_other_holder``).

``holder_problem`` tells why a given ``T`` cannot stand for ``e``;
``choose_holder`` picks the narrowest ``T`` that can.
"""
from __future__ import annotations

from typing import Iterable, Optional

from ..core_ir import datasem as D
from ..core_ir import types as T
from ..core_ir import operators as OPS
from ..core_ir.literal_values import literal_holder_problem
from ..core_ir.nodes import IR
from ..core_ir.precision_mix import INT_BITS
from ..core_ir.traversal import walk, walk_stmts

FLOATS = (IR.F16, IR.BF16, IR.F32, IR.F64)
INT_RANGE = {
    IR.I8: (-(1 << 7), (1 << 7) - 1), IR.UI8: (0, (1 << 8) - 1),
    IR.I16: (-(1 << 15), (1 << 15) - 1), IR.UI16: (0, (1 << 16) - 1),
    IR.I32: (-(1 << 31), (1 << 31) - 1),
}
#: integer types from the narrowest (the order holders are tried in)
INTS = (IR.I8, IR.UI8, IR.I16, IR.UI16, IR.I32)
_RING = ("+", "-", "*")


def _name(t) -> str:
    return T.TYPE_NAMES.get(t, type(t).__name__)


# ----------------------------------------------------------------------
# values of expressions
def _has_const(e) -> bool:
    return any(isinstance(n, IR.Const) for n in walk(e))


def int_range(e):
    """Inclusive ``(lo, hi)`` of the value an integer-valued data expression
    computes, or None when it is not provably an integer of known range.

    An expression with a typed leaf whose leaves are all integers is
    computed in ``i32`` (docs/semantics.md), literals included: ``A[i] /
    6.0`` is the truncating integer division ``A[i] / 6``. Ranges of ``+ -
    *`` are exact (wrapping modulo 2^32 commutes with them, so an exact
    range inside ``i32`` is the computed one); a division or remainder sees
    its operands as computed, so an operand whose exact range leaves
    ``i32`` counts as any ``i32``."""
    if not any(isinstance(n, (IR.Read, IR.ReadConfig, IR.Extern))
               for n in walk(e)):
        return _literal_range(e)
    return _i32_range(e)


def _literal_range(e):
    """Range of an expression of literals only (its context unknown): only
    integral literals joined by ``+ - *`` and ``-``."""
    if isinstance(e, IR.Const):
        v = e.val
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        if isinstance(v, float) and not v.is_integer():
            return None
        return int(v), int(v)
    if isinstance(e, IR.USub):
        r = _literal_range(e.arg)
        return None if r is None else (-r[1], -r[0])
    if isinstance(e, IR.BinOp) and e.op in _RING:
        a, b = _literal_range(e.lhs), _literal_range(e.rhs)
        if a is None or b is None:
            return None
        return _ring(e.op, a, b)
    return None


def _ring(op, a, b):
    if op == "+":
        return a[0] + b[0], a[1] + b[1]
    if op == "-":
        return a[0] - b[1], a[1] - b[0]
    ps = [x * y for x in a for y in b]
    return min(ps), max(ps)


def _literal_i32(e):
    """The ``i32`` value of an expression of literals only computed in an
    integer evaluation type (as the interpreter does), or None."""
    from ..core_ir import datasem as D
    if isinstance(e, IR.Const):
        v = e.val
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        return D.literal(v, IR.I32)
    if isinstance(e, IR.USub):
        v = _literal_i32(e.arg)
        return None if v is None else D.neg(v, IR.I32)
    if isinstance(e, IR.BinOp) and e.op in OPS.ARITH_OPS:
        a, b = _literal_i32(e.lhs), _literal_i32(e.rhs)
        if a is None or b is None:
            return None
        return D.binop(e.op, a, b, IR.I32)
    return None


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _i32_range(e):
    """``int_range`` of a sub-expression computed in ``i32``."""
    if not any(isinstance(n, (IR.Read, IR.ReadConfig, IR.Extern))
               for n in walk(e)):
        v = _literal_i32(e)
        return None if v is None else (v, v)
    if isinstance(e, (IR.Read, IR.ReadConfig)):
        return INT_RANGE.get(e.type)
    if isinstance(e, IR.USub):
        r = _i32_range(e.arg)
        return None if r is None else (-r[1], -r[0])
    if not (isinstance(e, IR.BinOp) and e.op in OPS.ARITH_OPS):
        return None
    a, b = _i32_range(e.lhs), _i32_range(e.rhs)
    if a is None or b is None:
        return None
    if e.op in _RING:
        return _ring(e.op, a, b)
    a, b = _as_computed(a), _as_computed(b)
    ma = max(abs(a[0]), abs(a[1]))
    if e.op == "/":
        if b[0] == b[1] and b[0] > 0:   # truncation is monotone in a
            return _tdiv(a[0], b[0]), _tdiv(a[1], b[0])
        if b == (0, 0):
            return 0, 0
        return -ma, ma                  # |a / b| <= |a| (a / 0 == 0)
    if b == (0, 0):
        return a                        # a % 0 == a
    # a % b has the sign of a, |a % b| < |b|; a % 0 == a
    m = ma if b[0] <= 0 <= b[1] else min(ma, max(abs(b[0]), abs(b[1])) - 1)
    return (-m if a[0] < 0 else 0), (m if a[1] > 0 else 0)


def _as_computed(r):
    """An exact range as the operand of a division sees it: the wrapped
    ``i32`` value, any ``i32`` when the exact range leaves ``i32``."""
    lo, hi = INT_RANGE[IR.I32]
    return r if lo <= r[0] and r[1] <= hi else (lo, hi)


def _leaf_types(e, skip):
    """Precisions of the data leaves of ``e``, not looking inside the
    occurrences of ``skip``: (floats, ints, has_R) as sets/bool."""
    floats, ints, has_r = set(), set(), False

    def go(x):
        nonlocal has_r
        if x == skip:
            return
        if isinstance(x, (IR.Read, IR.ReadConfig, IR.Extern)) and \
                T.is_real_scalar(x.type):
            if x.type in FLOATS:
                floats.add(x.type)
            elif x.type in INT_RANGE:
                ints.add(x.type)
            elif x.type is IR.Num and not isinstance(x, IR.Extern):
                has_r = True
            if isinstance(x, IR.Extern):
                for a in x.args:
                    go(a)
            return
        if isinstance(x, IR.Read):
            return
        for f in getattr(x, "_fields", ()):
            v = getattr(x, f)
            for c in (v if isinstance(v, tuple) else (v, )):
                if isinstance(c, IR.expr):
                    go(c)
    go(e)
    return floats, ints, has_r


def _occurrences(e, target, ancestors=()):
    """The chains of ancestors (root first) of each occurrence of
    ``target`` in ``e``."""
    if e == target:
        yield ancestors
        return
    for f in getattr(e, "_fields", ()):
        v = getattr(e, f)
        for c in (v if isinstance(v, tuple) else (v, )):
            if isinstance(c, IR.expr):
                yield from _occurrences(c, target, ancestors + (e, ))


def _exact_integers(e) -> bool:
    """Every value ``e`` computes is an integer, computed exactly: integer
    data alone is exact at any size, and where a literal takes part (a real
    number to the interpreter) the values stay below 2^53."""
    if not _has_const(e):
        return True
    r = int_range(e)
    if r is None or max(abs(r[0]), abs(r[1])) >= 1 << 53:
        return False
    for f in getattr(e, "_fields", ()):
        v = getattr(e, f)
        for c in (v if isinstance(v, tuple) else (v, )):
            if isinstance(c, IR.expr) and not _exact_integers(c):
                return False
    return True


def _stmt_exprs(s):
    out = []
    for f in s._fields:
        v = getattr(s, f)
        for c in (v if isinstance(v, tuple) else (v, )):
            if isinstance(c, IR.expr):
                out.append(c)
    return out


def _holds_exactly(t, v: float) -> bool:
    if t in INT_RANGE:
        return v.is_integer() and INT_RANGE[t][0] <= v <= INT_RANGE[t][1]
    if t is IR.BF16:
        import numpy as np
        with np.errstate(all="ignore"):
            x = np.float32(v)
            return float(x) == v and float(D.round_bf16(x)) == v
    if t in FLOATS:
        import numpy as np
        with np.errstate(all="ignore"):
            return float(np.dtype(T.NUMPY_DTYPES[t]).type(v)) == v
    return False


# ----------------------------------------------------------------------
# the check
def _in_consumer(e, t, s, chain) -> Optional[str]:
    """Why a ``t`` location cannot replace the occurrence of ``e`` reached
    through ``chain`` in the right-hand side of ``s`` (None: it can)."""
    w = s.config.lookup_type(s.field) if isinstance(s, IR.WriteConfig) \
        else s.type
    r = s.rhs
    et = e.type
    if et in FLOATS:
        if t != et:
            return _other_holder(e, t, s, w, chain) and (
                f"its value is computed in {_name(et)}, which a "
                f"{_name(t)} location does not reproduce")
        return None
    if et in INT_RANGE:
        if t not in INT_RANGE:
            return _other_holder(e, t, s, w, chain) and (
                f"it is integer arithmetic; a {_name(t)} location would "
                f"change how the statement computes")
        rng = int_range(e)
        lo, hi = INT_RANGE[t]
        if rng is not None and lo <= rng[0] and rng[1] <= hi:
            return None
        # wrapping to t commutes with + - * into an integer store no wider
        floats, _ints, has_r = _leaf_types(r, None)
        if (w in INT_RANGE and INT_BITS[w] <= INT_BITS[t] and not floats
                and not has_r and _exact_integers(r)
                and all((isinstance(a, IR.BinOp) and a.op in _RING)
                        or isinstance(a, IR.USub) for a in chain)):
            return None
        span = "unknown" if rng is None else f"[{rng[0]}, {rng[1]}]"
        return (f"its exact value (range {span}) may not fit in "
                f"{_name(t)}, and the statement uses more than its value "
                f"modulo 2^{INT_BITS[t]}")
    # literals only: holder_problem checks them by their exact values
    # (_literal_problem) before this is reached
    if t != et:
        return (f"it has type {_name(et)}; a {_name(t)} location would "
                f"change its value")
    return None


def value_type(e):
    """The type whose values include every value the data expression ``e``
    computes (None: not known): a read's own type (a ``bf16`` holds bf16
    values), a float expression's evaluation type, for integer arithmetic
    the narrowest integer type containing its range (``int_range``)."""
    _floats, _ints, has_r = _leaf_types(e, None)
    if has_r:
        return None
    if e.type in FLOATS:
        if isinstance(e, (IR.Read, IR.ReadConfig)):
            return e.type
        return D.own_type(e)
    if e.type in INT_RANGE:
        rng = int_range(e)
        for it in INTS:
            if rng is not None and INT_RANGE[it][0] <= rng[0] and \
                    rng[1] <= INT_RANGE[it][1]:
                return it
    return None


def _other_holder(e, t, s, w, chain) -> bool:
    """Whether a location of another type ``t`` may NOT stand for ``e``
    (False: it may). It may when it holds every value of ``e``
    (``datasem.holds_exactly``, the rule the validator drops such
    conversions by) and the statement does nothing with the value but
    store it: ``e`` is the whole right-hand side (``chain`` is empty), so
    no operation computes with it in another evaluation type (C computes
    one precision per expression: an operation around it either changes
    its evaluation type or mixes two). The store converts the same number
    either way, except an integer through a float into an integer, which
    saturates rather than wraps (so its range must fit the target); a
    reduction's addition keeps its evaluation type (``x += e`` computes in
    the join of both)."""
    vt = value_type(e)
    if vt is None or t not in INT_RANGE and t not in FLOATS or chain or \
            not D.holds_exactly(vt, t):
        return True
    if vt in INT_RANGE and t in FLOATS and w in INT_RANGE:
        if not D.holds_exactly(vt, w):
            return True
    if isinstance(s, IR.Reduce):
        return D.join(D.domain(w), D.domain(vt)) is not \
            D.join(D.domain(w), D.domain(t))
    return False


def holder_problem(e, t, stmts: Iterable) -> Optional[str]:
    """Why a location of type ``t`` cannot stand for the data expression
    ``e`` in ``stmts`` (every occurrence of ``e`` in them, nested statements
    included, is replaced by a read of it); None when it can."""
    literal = T.is_real_scalar(e.type) and D.is_literal_only(e)
    for s in walk_stmts(tuple(stmts)):
        data_rhs = isinstance(s, (IR.Assign, IR.Reduce)) or (
            isinstance(s, IR.WriteConfig)
            and T.is_real_scalar(s.config.lookup_type(s.field)))
        if data_rhs and literal:
            why = literal_holder_problem(e, t, s)
            if why:
                return why
        for x in _stmt_exprs(s):
            for chain in _occurrences(x, e):
                if data_rhs and x is s.rhs:
                    if literal:
                        continue  # checked exactly above
                    why = _in_consumer(e, t, s, chain)
                elif t != e.type:
                    why = (f"it is used where its type ({_name(e.type)}) "
                           f"must be kept")
                else:
                    why = None
                if why:
                    return why
    return None


def choose_holder(e, stmts):
    """``(t, None)``: the narrowest type whose location can stand for ``e``
    in ``stmts`` (``e``'s own type when it can); ``(None, why)`` when no
    type can."""
    stmts = tuple(stmts)
    cands = [e.type]
    for s in walk_stmts(stmts):
        if isinstance(s, (IR.Assign, IR.Reduce)):
            cands.append(s.type)
    cands += list(INTS) + list(FLOATS) + [IR.Num]
    seen, first_why = set(), None
    for t in cands:
        if t in seen or not T.is_real_scalar(t):
            continue
        seen.add(t)
        why = holder_problem(e, t, stmts)
        if why is None:
            return t, None
        if first_why is None:
            first_why = why
    return None, first_why


_INT_CONTROL = (IR.Int, IR.Index, IR.Stride)


def rejoin_type(n):
    """``n`` with the type of its arithmetic recomputed from its operands,
    as the frontend types it (None when unchanged): after an operand
    changes, e.g. is replaced by a read of another precision, or a literal
    by a config read (``2 + 1`` is an int, ``2 + Cf.k`` an index)."""
    from ..core_ir.typerules import (control_arith_type, control_neg_type,
                                     data_join)
    if isinstance(n, IR.BinOp) and n.type in _INT_CONTROL:
        t = control_arith_type(n.lhs, n.rhs)
        return None if t == n.type else n.update(type=t)
    if isinstance(n, IR.USub) and n.type in _INT_CONTROL:
        t = control_neg_type(n.arg)
        return None if t == n.type else n.update(type=t)
    if isinstance(n, IR.BinOp) and T.is_real_scalar(n.type):
        t = data_join(n.lhs.type, n.rhs.type)
        return None if t == n.type else n.update(type=t)
    if isinstance(n, IR.USub) and T.is_real_scalar(n.type):
        return None if n.arg.type == n.type else n.update(type=n.arg.type)
    if isinstance(n, IR.Extern) and T.is_real_scalar(n.type):
        t = n.f.typecheck([a.type for a in n.args])
        return None if t == n.type else n.update(type=t)
    return None


def replace_expr(node, e, new):
    """``node`` with every occurrence of the expression ``e`` replaced by
    ``new`` and the types of the arithmetic around them recomputed."""
    from ..core_ir.traversal import map_node
    return map_node(node, lambda n: new if isinstance(n, IR.expr) and n == e
                    else rejoin_type(n))


def mixed_precision_problem(old, new) -> Optional[str]:
    """Why ``new`` (statements rewritten from ``old``, pairwise) mixes
    precisions in one expression where ``old`` did not, or None. C
    computes one precision per expression, so ``compile()`` refuses such
    a mix; a rewrite putting a typed read where an expression stood (an
    ``i8`` holder of the literal ``2.0`` in ``(x[i] + 1.0) * 2.0``,
    ``x: f32``; an ``f32`` field for ``-1 * 127`` in an ``f64`` config
    write) must refuse it rather than leave it for the build. Every
    statement computing a data right-hand side counts: assignments,
    reductions and config writes."""
    from ..core_ir.precision_mix import check_precision

    class _Mixed(Exception):
        pass

    def raise_(cls, msg, node):
        raise _Mixed(msg)

    for a, b in zip(walk_stmts(tuple(old)), walk_stmts(tuple(new))):
        if not isinstance(b, (IR.Assign, IR.Reduce, IR.WriteConfig)):
            continue
        try:
            check_precision(a.rhs, raise_, a)
        except _Mixed:
            continue            # mixed already: the program's own error
        try:
            check_precision(b.rhs, raise_, b)
        except _Mixed as e:
            return str(e)
    return None


__all__ = ["holder_problem", "choose_holder", "int_range",
           "rejoin_type", "replace_expr", "mixed_precision_problem"]
