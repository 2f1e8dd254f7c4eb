"""The SMT bridge: ternary effect expressions → two-valued formulas → z3.

Pipeline of one query ``sat(F)``:
  1. ``encode`` (§3.10) turns a ternary expression into a pair (value,
     defined) of two-valued terms; ``collapse_M``/``collapse_D`` pick the
     classical formula.
  2. Terms are built by smart constructors that simplify as they go: integer
     terms are linear forms (const + Σ coeff·atom) so ``i - i`` cancels and
     comparisons become ``lin <= 0`` / ``lin == 0`` with gcd-normalised
     coefficients; Boolean connectives flatten and fold constants. Many
     queries are decided right here, before any solver runs.
  3. The term is renamed canonically (variables numbered by first occurrence)
     and looked up in a bounded per-process LRU cache. The cache only
     memoises a pure function of the query, so it never changes an answer.
     Terms share sub-terms (their tree size can be exponential in their node
     count), so every walk here visits each shared sub-term once and the
     cache key lists distinct nodes rather than being the tree.
  4. Otherwise it is turned into a pysmt formula (integer ``/`` and ``%`` by a
     positive constant c become fresh q, r with x = c·q + r, 0 <= r < c,
     declared in the innermost quantifier scope that uses them), converted
     with pysmt's z3 converter and checked by z3 under a per-query resource
     limit (``rlimit``: z3's count of its own steps, so the same query gets
     the same answer on a fast, a slow or a loaded machine).

Answers are 'sat' (with a model), 'unsat', or 'unknown' (limit reached/
incompleteness). Callers treat 'unknown' as NOT PROVEN: a check never
succeeds because the solver gave up.

Term language (tuples; all immutable):
  int  : ('lin', const, ((atom, coeff), ...))
  atom : ('iv', key) | ('div', lin, c) | ('mod', lin, c) | ('ite', b, lin, lin)
         | ('mul', lin, lin)
  bool : True | False | ('bv', key) | ('not', b) | ('and', (b...)) |
         ('or', (b...)) | ('le0', lin) | ('eq0', lin) |
         ('forall', ((key, sort)...), b) | ('exists', ((key, sort)...), b)

Why one module of this size: the pipeline stages (encoding, term
construction, canonical renaming, the cached solver) share one term
representation and are tuned together for speed; split apart, each piece
would expose that representation to the others.
"""
from __future__ import annotations

import ctypes
import math
import time
from collections import OrderedDict

from ..core_ir import operators as OPS
from ..caches import register
from . import eexpr as E

# ---------------------------------------------------------------------------
# linear integer forms


def lconst(c):
    return ("lin", c, ())


def latom(a, coeff=1):
    return ("lin", 0, ((a, coeff), ))


def lvar(key):
    return latom(("iv", key))


def ladd(a, b, sb=1):
    """a + sb*b

    Like atoms are merged (``i - i`` cancels): small atoms by value, big
    ones by identity (``_atom_key``)."""
    if not b[2]:
        return ("lin", a[1] + sb * b[1], a[2])
    if _plain_atoms(a[2]) and _plain_atoms(b[2]):
        items = dict(a[2])
        for at, c in b[2]:
            items[at] = items.get(at, 0) + sb * c
        return ("lin", a[1] + sb * b[1],
                tuple((at, c) for at, c in items.items() if c != 0))
    items = {_atom_key(at): [at, c] for at, c in a[2]}
    for at, c in b[2]:
        k = _atom_key(at)
        hit = items.get(k)
        if hit is None:
            items[k] = [at, sb * c]
        else:
            hit[1] += sb * c
    return ("lin", a[1] + sb * b[1],
            tuple((at, c) for at, c in items.values() if c != 0))


def _plain_atoms(items) -> bool:
    """Are all atoms of these linear-form items plain (``_plain_atom``)?"""
    for at, _ in items:
        if at[0] != "iv" and not _plain_atom(at):
            return False
    return True


def _atom_key(at):
    """The key merging like atoms of a linear form: the atom itself when it
    is small, its identity otherwise. Atoms (an ``ite`` or ``div`` over a
    config value after a loop nest) share sub-terms, and a tuple hashes as
    a tree, in time exponential in their depth; two equal big atoms that
    are not the same object stay apart, which is only redundant (the
    solver sees a + -a instead of 0)."""
    if _plain_atom(at) or _is_small(at):
        return at
    return ("big", id(at))


def _plain_atom(at, depth=3) -> bool:
    """A variable, or ``/`` and ``%`` by constants over a few levels of
    them: the common atoms, small (no sharing under a bounded depth)
    without counting their nodes."""
    tag = at[0]
    if tag == "iv":
        return True
    if tag in ("div", "mod") and depth:
        return all(_plain_atom(a, depth - 1) for a, _ in at[1][2])
    return False


def lscale(a, k):
    if k == 0:
        return lconst(0)
    return ("lin", a[1] * k, tuple((at, c * k) for at, c in a[2]))


def lis_const(a):
    return not a[2]


def lmul(a, b):
    if lis_const(a):
        return lscale(b, a[1])
    if lis_const(b):
        return lscale(a, b[1])
    return latom(("mul", a, b))


def ldiv(a, c):
    if lis_const(a):
        return lconst(a[1] // c)
    if c == 1:
        return a
    # (c*x + k) / c == x + k // c when every coefficient is a multiple of c
    if all(co % c == 0 for _, co in a[2]):
        return ("lin", a[1] // c, tuple((at, co // c) for at, co in a[2]))
    return latom(("div", a, c))


def lmod(a, c):
    if lis_const(a):
        return lconst(a[1] % c)
    if c == 1:
        return lconst(0)
    if all(co % c == 0 for _, co in a[2]):
        return lconst(a[1] % c)
    return latom(("mod", a, c))


def lite(b, x, y):
    if b is True:
        return x
    if b is False:
        return y
    if x == y:
        return x
    return latom(("ite", b, x, y))


# ---------------------------------------------------------------------------
# Boolean terms


def bnot(a):
    if a is True:
        return False
    if a is False:
        return True
    t = a[0]
    if t == "not":
        return a[1]
    if t == "le0":
        # not (l <= 0)  <=>  -l + 1 <= 0   (integers)
        return ble0(ladd(lconst(1), a[1], -1))
    return ("not", a)


def _flatten(tag, absorbing, unit, xs):
    """An n-ary and/or: flattened, deduplicated, with constants folded.

    Operands are deduplicated by identity, then by value among the small
    ones only: terms are tuples compared as trees, and the terms of config
    values after loops share subterms, so comparing two big ones can take
    time exponential in their depth (a duplicate kept is only redundant)."""
    out, ids, small = [], set(), []
    for x in xs:
        if x is absorbing:
            return absorbing
        if x is unit:
            continue
        for y in (x[1] if isinstance(x, tuple) and x[0] == tag else (x, )):
            if id(y) in ids:
                continue
            h = _SIZES.get(id(y))      # (``_is_small``'s remembered answer)
            if (h[1] <= _SMALL_NODES) if h is not None and h[0] is y \
                    else _is_small(y):
                if y in small:
                    continue
                small.append(y)
            ids.add(id(y))
            out.append(y)
    if not out:
        return unit
    return out[0] if len(out) == 1 else (tag, tuple(out))


#: the budget of ``_is_small``: a term of at most this many nodes is small
_SMALL_NODES = 64

#: id(tuple) -> (the tuple, its node count, or ``_SMALL_NODES + 1`` for any
#: count above): the terms ``_is_small`` measured. The entry keeps the tuple
#: alive, so its id names no other object while the entry exists.
_SIZES: dict = {}
_SIZES_LIMIT = 1 << 17
register("exo_hl.effects.smt.sizes", _SIZES.clear, _SIZES.__len__)
_CMP_TAGS = frozenset(("le0", "eq0"))


def _is_small(t) -> bool:
    """Has the term at most ``_SMALL_NODES`` nodes (walked as a tree)?

    Every connective flattens its operands and asks this of each, again
    at every level a term is nested in, so the answers are remembered
    (``_SIZES``) and a measured sub-term counts as its remembered size."""
    if not isinstance(t, tuple):
        return True
    hit = _SIZES.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1] <= _SMALL_NODES
    if t[0] in _CMP_TAGS:
        # the common operand, a comparison of variables: counted without
        # the walk (the same count: 6 nodes, and 5 per (('iv', k), c) item
        # whose key is not a tuple)
        n = 6
        for a, _ in t[1][2]:
            if a[0] != "iv" or type(a[1]) is tuple:
                n = -1
                break
            n += 5
        if n >= 0:
            if len(_SIZES) >= _SIZES_LIMIT:
                _SIZES.clear()
            _SIZES[id(t)] = (t, min(n, _SMALL_NODES + 1))
            return n <= _SMALL_NODES
    if t[0] in _EE_TAGS:
        # an effect expression (a goal or path fact: most of the terms
        # asked about are new ones): counted by its shape, one call per
        # tuple instead of a stack step per object
        n = _ee_count(t, _SMALL_NODES)
        if n is not None:
            if len(_SIZES) >= _SIZES_LIMIT:
                _SIZES.clear()
            _SIZES[id(t)] = (t, n if n >= 0 else _SMALL_NODES + 1)
            return n >= 0
    budget = _SMALL_NODES
    stack = [t]
    small = True
    while stack:
        x = stack.pop()
        if type(x) is tuple and x is not t:
            h = _SIZES.get(id(x))
            if h is not None and h[0] is x:
                budget -= h[1]
                if budget < 0:
                    small = False
                    break
                continue
        budget -= 1
        if budget < 0:
            small = False
            break
        if isinstance(x, tuple):
            stack.extend(x)
    if len(_SIZES) >= _SIZES_LIMIT:
        _SIZES.clear()
    _SIZES[id(t)] = (t, _SMALL_NODES - budget if small
                     else _SMALL_NODES + 1)
    return small


_EE_TAGS = frozenset(("op", "ite"))


def _ee_count(e, budget):
    """The number of objects of the effect expression ``e`` as a tree (what
    ``_is_small`` counts) when at most ``budget``, else -1; None when ``e``
    is not of a shape counted here (the generic walk counts it then)."""
    tag = e[0]
    if tag == "var" or tag == "const":
        if len(e) == 3 and not isinstance(e[1], tuple) \
                and not isinstance(e[2], tuple):
            return 4 if budget >= 4 else -1
        return None
    if tag == "op":
        if len(e) not in (3, 4) or isinstance(e[1], tuple):
            return None
        total = 3           # the tuple, 'op' and the operator
        kids = e[2:]
    elif tag == "ite":
        if len(e) != 4:
            return None
        total = 2           # the tuple and 'ite'
        kids = e[1:]
    elif tag == "bot":
        if len(e) != 2 or isinstance(e[1], tuple):
            return None
        return 3 if budget >= 3 else -1
    else:
        return None
    if total > budget:
        return -1
    for k in kids:
        if type(k) is not tuple:
            return None
        n = _ee_count(k, budget - total)
        if n is None or n < 0:
            return n
        total += n
    return total


def _pair(tag, absorbing, unit, a, b):
    """Two operands of an and/or, one of them a constant: answered as
    ``_flatten`` would, without its walk (most connectives the encoding
    makes are such pairs: a definedness that is True). ``None``: not such
    a pair."""
    if a is absorbing or b is absorbing:
        return absorbing
    if a is unit and not (isinstance(b, tuple) and b[0] == tag):
        return b
    if b is unit and not (isinstance(a, tuple) and a[0] == tag):
        return a
    return None


def band(*xs):
    r = _pair("and", False, True, *xs) if len(xs) == 2 else None
    return _flatten("and", False, True, xs) if r is None else r


def bor(*xs):
    r = _pair("or", True, False, *xs) if len(xs) == 2 else None
    return _flatten("or", True, False, xs) if r is None else r


def bimplies(a, b):
    return bor(bnot(a), b)


def bite(c, x, y):
    if c is True:
        return x
    if c is False:
        return y
    if x == y:
        return x
    return bor(band(c, x), band(bnot(c), y))


def biff(a, b):
    return bor(band(a, b), band(bnot(a), bnot(b)))


def _gcd_items(items):
    g = 0
    for _, c in items:
        g = math.gcd(g, c)
    return g


def ble0(l):
    """l <= 0, normalised (gcd of coefficients divided out)."""
    if lis_const(l):
        return l[1] <= 0
    g = _gcd_items(l[2])
    if g > 1:
        l = ("lin", -((-l[1]) // g), tuple((a, c // g) for a, c in l[2]))
    return ("le0", l)


def beq0(l):
    if lis_const(l):
        return l[1] == 0
    g = _gcd_items(l[2])
    if l[1] % g != 0:
        return False
    if g > 1:
        l = ("lin", l[1] // g, tuple((a, c // g) for a, c in l[2]))
    if l[2][0][1] < 0:
        l = lscale(l, -1)
    return ("eq0", l)


def bcmp(o, a, b):
    d = ladd(a, b, -1)  # a - b
    if o == "<":
        return ble0(ladd(d, lconst(1)))
    if o == "<=":
        return ble0(d)
    if o == ">":
        return ble0(ladd(lconst(1), d, -1))
    if o == ">=":
        return ble0(lscale(d, -1))
    if o == "==":
        return beq0(d)
    raise ValueError(o)


#: the composite terms ``_term_keys`` walks once (not linear forms: each
#: is small and walked once per parent, its atoms are marked)
_SHARED = frozenset(("div", "mod", "ite", "mul", "and", "or", "not", "le0",
                     "eq0", "forall", "exists"))


def _term_keys(t, out, bound=frozenset(), seen=None):
    """Free variable keys (with sorts) of a term.

    Terms share sub-terms (a DAG); ``seen`` marks the composite terms
    already walked in this call (with the bound keys, if any), so shared
    sub-terms are visited once -- a second visit would add nothing --
    instead of once per path.
    """
    if t is True or t is False:
        return
    tag = t[0]
    if tag in _SHARED:
        if seen is None:
            seen = set()
        mark = (id(t), bound) if bound else id(t)
        if mark in seen:
            return
        seen.add(mark)
    if tag == "lin":
        for a, _ in t[2]:
            if a[0] == "iv":
                if a[1] not in bound:
                    out[a[1]] = E.INT
            else:
                _term_keys(a, out, bound, seen)
    elif tag == "iv":
        if t[1] not in bound:
            out[t[1]] = E.INT
    elif tag == "bv":
        if t[1] not in bound:
            out[t[1]] = E.BOOL
    elif tag in ("div", "mod"):
        _term_keys(t[1], out, bound, seen)
    elif tag in ("ite", ):
        for x in t[1:]:
            _term_keys(x, out, bound, seen)
    elif tag == "mul":
        _term_keys(t[1], out, bound, seen)
        _term_keys(t[2], out, bound, seen)
    elif tag == "not":
        _term_keys(t[1], out, bound, seen)
    elif tag in ("and", "or"):
        for x in t[1]:
            _term_keys(x, out, bound, seen)
    elif tag in ("le0", "eq0"):
        _term_keys(t[1], out, bound, seen)
    elif tag in ("forall", "exists"):
        _term_keys(t[2], out, bound | {k for k, _ in t[1]}, seen)
    else:
        raise ValueError(tag)


def term_keys(t) -> dict:
    out = {}
    _term_keys(t, out)
    return out


_NO_KEYS = frozenset()

#: id(term) -> (the term, frozenset of its free variable keys, its stride
#: variables in order), for
#: hypotheses: ``checks.sat_under`` asks it of every hypothesis of every
#: query, and a check asks many queries under the same hypotheses. The
#: entry keeps the term alive, so its id names no other object meanwhile.
_HYP_KEYS: dict = {}
_HYP_KEYS_LIMIT = 1 << 15
register("exo_hl.effects.smt.hyp_keys", _HYP_KEYS.clear, _HYP_KEYS.__len__)


def hyp_keys(t) -> frozenset:
    """``frozenset(term_keys(t))``, remembered by identity."""
    return _hyp_entry(t)[1]


def hyp_strides(t) -> tuple:
    """The stride variables of ``term_keys(t)``, in its order, remembered
    by identity (``Solver.check``'s ``strides`` of a conjunction is its
    operands' in order, first occurrences)."""
    return _hyp_entry(t)[2]


def _hyp_entry(t):
    hit = _HYP_KEYS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit
    keys = term_keys(t)
    hit = (t, frozenset(keys),
           tuple(k for k in keys if isinstance(k, E.StrideVar)))
    if len(_HYP_KEYS) >= _HYP_KEYS_LIMIT:
        _HYP_KEYS.clear()
    _HYP_KEYS[id(t)] = hit
    return hit


def key_set(t, cache) -> frozenset:
    """The free variable keys of a term (``term_keys`` without sorts or
    order). ``cache`` (a dict the caller keeps, e.g. an ``encode`` memo)
    remembers them for every composite sub-term under ``('keys', id)``, with
    the term (so no id is reused while it lives): the encoding of nested
    quantifiers asks about bodies each containing the one before, and
    then walks only the new part."""
    if t is True or t is False:
        return _NO_KEYS
    tag = t[0]
    if tag in ("iv", "bv"):
        return frozenset((t[1], ))
    mark = ("keys", id(t))
    hit = cache.get(mark)
    if hit is not None and hit[0] is t:
        return hit[1]
    if tag == "lin":
        parts = [key_set(a, cache) for a, _ in t[2]]
    elif tag in ("div", "mod", "not", "le0", "eq0"):
        parts = [key_set(t[1], cache)]
    elif tag in ("ite", "mul"):
        parts = [key_set(x, cache) for x in t[1:]]
    elif tag in ("and", "or"):
        parts = [key_set(x, cache) for x in t[1]]
    elif tag in ("forall", "exists"):
        parts = [key_set(t[2], cache) - {k for k, _ in t[1]}]
    else:
        raise ValueError(tag)
    out = parts[0] if len(parts) == 1 else _NO_KEYS.union(*parts)
    cache[mark] = (t, out)
    return out


def bforall(keys, body, cache=None):
    """∀keys. body, over the keys free in body (``cache``: see ``key_set``)."""
    fk = key_set(body, {} if cache is None else cache)
    keys = tuple((k, s) for k, s in keys if k in fk)
    if not keys or body is True or body is False:
        return body
    return ("forall", keys, body)


def bexists(keys, body, cache=None):
    """∃keys. body, over the keys free in body (``cache``: see ``key_set``)."""
    fk = key_set(body, {} if cache is None else cache)
    keys = tuple((k, s) for k, s in keys if k in fk)
    if not keys or body is True or body is False:
        return body
    return ("exists", keys, body)


# ---------------------------------------------------------------------------
# §3.10: the two-valued encoding


def encode(e, memo=None):
    """(value, defined) terms for a ternary effect expression.

    Effect expressions share sub-expressions, and a tuple hashes as a tree:
    as a dict key, a config value after a loop nest costs time exponential
    in its depth. So ``memo`` holds a leaf under itself (small), and an
    inner node under its identity (the memo keeps the node, under the key
    None, so no id is reused while it lives) and under its operator and
    the identities of its operands' results. That last key makes
    structurally equal expressions share one result, as a key of the whole
    tree would, at constant cost per node: equal operands get the very
    same result, by induction from the leaves. (Operands of different
    sorts never share a result: an int is a linear form, a bool is not.)"""
    if memo is None:
        memo = {}
    tag = e[0]
    if tag in _LEAVES:
        r = memo.get(e)
        if r is None:
            r = memo[e] = _encode_leaf(e)
        return r
    hit = memo.get(id(e))
    if hit is not None:
        return hit
    if tag == "ite":
        rs = (encode(e[1], memo), encode(e[2], memo), encode(e[3], memo))
        key = ("ite", None, id(rs[0][0]), id(rs[0][1]), id(rs[1][0]),
               id(rs[1][1]), id(rs[2][0]), id(rs[2][1]))
    elif len(e) == 4:
        rs = (encode(e[2], memo), encode(e[3], memo))
        key = (tag, e[1], id(rs[0][0]), id(rs[0][1]), id(rs[1][0]),
               id(rs[1][1]))
    else:
        rs = (encode(e[2], memo), )
        key = (tag, e[1], id(rs[0][0]), id(rs[0][1]))
    r = memo.get(key)
    if r is None:
        r = memo[key] = _encode(e, rs, memo)
    memo[id(e)] = r
    keep = memo.get(None)
    if keep is None:
        keep = memo[None] = []
    keep.append(e)   # the memo holds e: its id is not reused while it lives
    return r


_LEAVES = frozenset(("var", "const", "bot"))


def _encode_leaf(e):
    tag = e[0]
    if tag == "var":
        return (lvar(e[1]) if e[2] == E.INT else ("bv", e[1])), True
    if tag == "const":
        return (e[1] if e[2] == E.BOOL else lconst(e[1])), True
    return (False if e[1] == E.BOOL else lconst(0)), False   # bot


def _encode(e, rs, memo):
    """The pair of an inner node from the pairs ``rs`` of its operands."""
    tag = e[0]
    if tag == "ite":
        (c, dc), (x, dx), (y, dy) = rs
        if E.sort_of(e[2]) == E.INT:
            v = lite(c, x, y)
        else:
            v = bite(c, x, y)
        return v, band(dc, bite(c, dx, dy))
    if tag in ("forall", "exists"):
        k = e[1]
        x, d = rs[0] if tag == "forall" else encode(E.not_(e[2]), memo)
        ks = ((k, E.INT), )
        v = bforall(ks, x, memo)
        dd = bor(bforall(ks, d, memo), bexists(ks, band(bnot(x), d), memo))
        if tag == "exists":
            v = bnot(v)
        return v, dd
    o = e[1]
    if o == "not":
        x, d = rs[0]
        return bnot(x), d
    if o == "neg":
        x, d = rs[0]
        return lscale(x, -1), d
    (x1, d1), (x2, d2) = rs
    if o == "and":
        return band(x1, x2), bor(band(d1, d2), band(bnot(x1), d1),
                                 band(bnot(x2), d2))
    if o == "or":
        return bor(x1, x2), bor(band(d1, d2), band(x1, d1), band(x2, d2))
    d = band(d1, d2)
    if o == "==" and E.sort_of(e[2]) == E.BOOL:
        return biff(x1, x2), d
    if o in ("+", "-"):
        return ladd(x1, x2, 1 if o == "+" else -1), d
    if o == "*":
        return lmul(x1, x2), d
    if o in ("/", "%"):
        if lis_const(x2) and x2[1] > 0:
            c = x2[1]
            return (ldiv(x1, c) if o == "/" else lmod(x1, c)), d
        # not quasi-affine: unknown (sound, never proves anything)
        return lconst(0), False
    if o in OPS.CMP_OPS:
        return bcmp(o, x1, x2), d
    raise ValueError(f"no SMT encoding of the operator {o!r}")


def collapse_M(e, memo=None):
    """Classical formula for M e ('maybe e')."""
    x, d = encode(e, memo)
    return bor(bnot(d), x)


def collapse_D(e, memo=None):
    """Classical formula for D e ('definitely e')."""
    x, d = encode(e, memo)
    return band(d, x)


# ---------------------------------------------------------------------------
# reference evaluation of two-valued terms (tests; tiny domains)


def eval_term(t, env, domain=range(-3, 4)):
    if t is True or t is False:
        return t
    tag = t[0]
    if tag == "lin":
        return t[1] + sum(c * eval_term(a, env, domain) for a, c in t[2])
    if tag in ("iv", "bv"):
        return env[t[1]]
    if tag == "div":
        return eval_term(t[1], env, domain) // t[2]
    if tag == "mod":
        return eval_term(t[1], env, domain) % t[2]
    if tag == "ite":
        return eval_term(t[2] if eval_term(t[1], env, domain) else t[3], env,
                         domain)
    if tag == "mul":
        return eval_term(t[1], env, domain) * eval_term(t[2], env, domain)
    if tag == "not":
        return not eval_term(t[1], env, domain)
    if tag == "and":
        return all(eval_term(x, env, domain) for x in t[1])
    if tag == "or":
        return any(eval_term(x, env, domain) for x in t[1])
    if tag == "le0":
        return eval_term(t[1], env, domain) <= 0
    if tag == "eq0":
        return eval_term(t[1], env, domain) == 0
    if tag in ("forall", "exists"):
        import itertools
        keys = t[1]
        doms = [domain if s == E.INT else (False, True) for _, s in keys]
        res = (eval_term(t[2], {**env, **dict(zip((k for k, _ in keys), vs))},
                         domain) for vs in itertools.product(*doms))
        return all(res) if tag == "forall" else any(res)
    raise ValueError(tag)


# ---------------------------------------------------------------------------
# canonical renaming (cache keys)


def canonicalize(t):
    """Rename variables to ('c', n) in first-occurrence order.

    Returns (canonical term, {canonical key: original key}). Two queries
    equal up to a consistent renaming get the same canonical term.
    """
    key, back = canonical_key(t)
    return canonical_term(key), back


def canonical_key(t):
    """The canonical renaming of ``t`` as a flat key, and the renaming.

    Terms are DAGs whose tree size can be exponential in their node count,
    and Python tuples hash and compare as trees. The key numbers each
    structurally distinct node of the renamed term in first-occurrence
    order and lists the nodes with their children as numbers, so it hashes
    and compares in time linear in the number of distinct nodes. Two terms
    get equal keys exactly when their canonical terms are equal;
    ``canonical_term`` rebuilds that term from the key.
    """
    ren = {}

    def rk(k):
        r = ren.get(k)
        if r is None:
            r = ("c", len(ren))
            ren[k] = r
        return r

    # id -> number: shared objects are walked once (every sub-term stays
    # alive, held by ``t``, so ids are not reused during the walk)
    seen = {}
    interned = {}  # flat entry -> number
    entries = []

    def go(t):
        if t is True or t is False:
            return "T" if t else "F"    # never equal to a number
        n = seen.get(id(t))
        if n is not None:
            return n
        tag = t[0]
        if tag == "lin":
            e = ("lin", t[1], tuple([(go(a), c) for a, c in t[2]]))
        elif tag in ("iv", "bv"):
            e = (tag, rk(t[1]))
        elif tag in ("div", "mod"):
            e = (tag, go(t[1]), t[2])
        elif tag in ("ite", "mul", "not", "le0", "eq0"):
            e = (tag, ) + tuple([go(x) for x in t[1:]])
        elif tag in ("and", "or"):
            e = (tag, tuple([go(x) for x in t[1]]))
        elif tag in ("forall", "exists"):
            e = (tag, tuple([(rk(k), s) for k, s in t[1]]), go(t[2]))
        else:
            raise ValueError(tag)
        n = interned.get(e)
        if n is None:
            n = interned[e] = len(entries)
            entries.append(e)
        seen[id(t)] = n
        return n

    root = go(t)
    return (root, tuple(entries)), {v: k for k, v in ren.items()}


def canonical_term(key):
    """The term a ``canonical_key`` describes; each distinct sub-term is one
    object (so identity is structural equality inside it)."""
    root, entries = key
    nodes = []

    def sub(n):
        return True if n == "T" else False if n == "F" else nodes[n]

    for e in entries:
        tag = e[0]
        if tag == "lin":
            node = ("lin", e[1], tuple((sub(n), c) for n, c in e[2]))
        elif tag in ("iv", "bv"):
            node = e
        elif tag in ("div", "mod"):
            node = (tag, sub(e[1]), e[2])
        elif tag in ("and", "or"):
            node = (tag, tuple(sub(n) for n in e[1]))
        elif tag in ("forall", "exists"):
            node = (tag, e[1], sub(e[2]))
        else:
            node = (tag, ) + tuple(sub(n) for n in e[1:])
        nodes.append(node)
    return sub(root)


# ---------------------------------------------------------------------------
# pysmt / z3


class _Backend:
    """Lazily created pysmt environment + z3 converter (one per process)."""

    def __init__(self):
        self._conv = None
        self._tactics = {}

    def refuter(self, ctx, rlimit, timeout_ms):
        """The solver of ``_refuted`` for ``ctx``: the tactic of
        ``_REFUTE_TACTICS`` as a solver, made once per context and limits
        (making one costs as much as applying it to a small query) and
        reused through push/pop, which leaves no assertion behind."""
        import z3
        key = (id(ctx), rlimit, timeout_ms)
        hit = self._tactics.get(key)
        if hit is None or hit[0] is not ctx:
            s = z3.Then(*(z3.Tactic(t, ctx=ctx) for t in _REFUTE_TACTICS),
                        ctx=ctx).solver()
            _limit(s, rlimit, timeout_ms)
            hit = (ctx, s)
            self._tactics[key] = hit
        return hit[1]

    def converter(self):
        if self._conv is None:
            from pysmt.shortcuts import Solver
            self._solver = Solver(name="z3")
            self._conv = self._solver.converter
        return self._conv


_BACKEND = _Backend()


#: sub-terms ``to_pysmt`` translates at most per query. A shared sub-term
#: is translated once per quantifier scope it is used in, so quantifiers
#: nested around shared terms can need exponentially many (a configwrite_at
#: on a tiled, parallelized nest did not return in ten minutes); past the
#: budget the query is 'unknown', which proves nothing
TRANSLATE_BUDGET = 50_000


class FormulaTooLarge(Exception):
    """Raised by ``to_pysmt`` past ``TRANSLATE_BUDGET``."""


def to_pysmt(t):
    """Build the pysmt formula of a canonical term (div/mod made exact).

    ``t`` comes from ``canonical_term``, where equal sub-terms are one
    object; ``t`` keeps them all alive while the id-keyed tables are used.
    """
    from pysmt import shortcuts as S
    from pysmt.typing import BOOL as PB, INT as PI

    names = {}
    counter = [0]

    def sym(k, s):
        r = names.get((k, s))
        if r is None:
            r = S.Symbol(f"{'i' if s == E.INT else 'b'}{k[1]}", PI if s == E.INT else PB)
            names[(k, s)] = r
        return r

    def fresh():
        counter[0] += 1
        return S.Symbol(f"_q{counter[0]}", PI)

    # (defs, atom->(q, r), fresh syms, id -> (term, formula), keys bound
    # by the quantifier opening the scope). Terms share sub-terms; each
    # scope memoises what it translated, so a shared sub-term is translated
    # once per scope instead of once per path. A formula made in an
    # enclosing scope stays valid inside (its q, r are declared there)
    # unless a quantifier in between binds one of its variables: canonical
    # renaming keeps a key free outside and bound inside as one variable,
    # and a q, r made outside would stand for the free one. One made inside
    # a quantifier is not reused outside.
    scopes = [([], {}, [], {}, _NO_KEYS)]
    work = [0]
    key_cache = {}

    def outer(x, look):
        """The first ``look(scope)`` hit from the innermost scope out, if
        no quantifier in between binds a variable of ``x``."""
        bound = _NO_KEYS
        for sc in reversed(scopes):
            hit = look(sc)
            if hit is not None:
                if bound and not bound.isdisjoint(key_set(x, key_cache)):
                    return None
                return hit
            bound = bound | sc[4]
        return None

    def memo(fn):
        def go(x):
            k = id(x)
            hit = outer(x, lambda sc: sc[3].get(k))
            if hit is not None and hit[0] is x:
                return hit[1]
            work[0] += 1
            if work[0] > TRANSLATE_BUDGET:
                raise FormulaTooLarge()
            r = fn(x)
            scopes[-1][3][k] = (x, r)
            return r
        return go

    def divmod_of(lin, c):
        defs, table, fresh_syms, _, _ = scopes[-1]
        # canonical terms are hash-consed (``canonical_term``): identity is
        # structural equality, and does not hash the tree under ``lin``
        key = (id(lin), c)
        r = outer(lin, lambda sc: sc[1].get(key))
        if r is None:
            x = go_int(lin)
            q, rr = fresh(), fresh()
            defs.append(S.And(S.Equals(x, S.Plus(S.Times(S.Int(c), q), rr)),
                              S.LE(S.Int(0), rr), S.LT(rr, S.Int(c))))
            fresh_syms.extend((q, rr))
            table[key] = (q, rr)
            r = (q, rr)
        return r

    @memo
    def go_int(l):
        parts = []
        if l[1] != 0 or not l[2]:
            parts.append(S.Int(l[1]))
        for a, c in l[2]:
            at = go_atom(a)
            parts.append(at if c == 1 else S.Times(S.Int(c), at))
        return parts[0] if len(parts) == 1 else S.Plus(parts)

    @memo
    def go_atom(a):
        tag = a[0]
        if tag == "iv":
            return sym(a[1], E.INT)
        if tag == "div":
            return divmod_of(a[1], a[2])[0]
        if tag == "mod":
            return divmod_of(a[1], a[2])[1]
        if tag == "ite":
            return S.Ite(go_bool(a[1]), go_int(a[2]), go_int(a[3]))
        if tag == "mul":
            return S.Times(go_int(a[1]), go_int(a[2]))
        raise ValueError(tag)

    def go_bool(b):
        if b is True:
            return S.TRUE()
        if b is False:
            return S.FALSE()
        return go_bool1(b)

    @memo
    def go_bool1(b):
        tag = b[0]
        if tag == "bv":
            return sym(b[1], E.BOOL)
        if tag == "not":
            return S.Not(go_bool(b[1]))
        if tag == "and":
            return S.And([go_bool(x) for x in b[1]])
        if tag == "or":
            return S.Or([go_bool(x) for x in b[1]])
        if tag == "le0":
            return S.LE(go_int(b[1]), S.Int(0))
        if tag == "eq0":
            return S.Equals(go_int(b[1]), S.Int(0))
        if tag in ("forall", "exists"):
            vs = [sym(k, s) for k, s in b[1]]
            scopes.append(([], {}, [], {}, frozenset(k for k, _ in b[1])))
            body = go_bool(b[2])
            defs, _, fs, _, _ = scopes.pop()
            if tag == "forall":
                inner = S.Implies(S.And(defs), body) if defs else body
                return S.ForAll(vs + fs, inner)
            inner = S.And(defs + [body]) if defs else body
            return S.Exists(vs + fs, inner)
        raise ValueError(tag)

    f = go_bool(t)
    defs = scopes[0][0]
    if defs:
        f = S.And(defs + [f])
    return f, names


#: the z3 C functions ``to_z3`` calls, without the Python wrappers' error
#: check after each call (``to_z3`` checks the context's error code once)
_Z3_RAW = {}


def _z3_raw():
    if not _Z3_RAW:
        from z3 import z3core
        for n in ("Z3_inc_ref", "Z3_dec_ref", "Z3_mk_true", "Z3_mk_false",
                  "Z3_mk_numeral", "Z3_mk_const", "Z3_mk_string_symbol",
                  "Z3_mk_mul", "Z3_mk_add", "Z3_mk_eq", "Z3_mk_le",
                  "Z3_mk_lt", "Z3_mk_and", "Z3_mk_or", "Z3_mk_ite",
                  "Z3_mk_not"):
            # the wrapper's last default is its ``Elementaries`` (the C
            # function as ``.f``)
            _Z3_RAW[n] = getattr(z3core, n).__defaults__[-1].f
    return _Z3_RAW


class _Z3Terms:
    """The z3 terms ``to_z3`` made, by their structure: (operation, the
    z3 addresses of the operands, constants) -> z3 term, each held by one
    z3 reference. Queries share most of their nodes (the facts of the
    same loops; 81% of the nodes of the SGEMM schedule's queries were
    made for an earlier query), and z3 gives equal terms one address, so
    a hit is the term z3 would make again. Emptied (the references
    dropped) when full, only between two queries, and by
    ``caches.clear_all``."""

    LIMIT = 1 << 16

    def __init__(self):
        self.ctx = None
        self.terms = {}

    def clear(self):
        if self.terms:
            dec, c = _z3_raw()["Z3_dec_ref"], self.ctx.ref()
            for a in self.terms.values():
                dec(c, ctypes.c_void_p(a))
            self.terms.clear()

    def table(self, ctx):
        if ctx is not self.ctx or len(self.terms) >= self.LIMIT:
            self.clear()
            self.ctx = ctx
        return self.terms


_Z3_TERMS = _Z3Terms()
register("exo_hl.effects.smt.z3_terms", _Z3_TERMS.clear,
         lambda: len(_Z3_TERMS.terms))


def to_z3(key):
    """The z3 formula of a query without quantifiers, built from its
    ``canonical_key`` in the key's order, and a function giving {(key,
    sort): z3 constant} (for a model; made only then); None for a query with quantifiers (``to_pysmt`` builds those).

    The key lists each distinct node after its children, so one pass
    over it builds each node once, with no recursion, and nodes made for
    an earlier query are found by structure (``_Z3Terms``). The formula
    is the one ``to_pysmt`` and pysmt's z3 converter build (the same z3
    calls on the same arguments, so z3, which shares equal terms, gets the
    very same term: ``/`` and ``%`` by c as fresh q, r with x = c*q + r,
    0 <= r < c, conjoined in front in the order they are first met),
    without the pysmt formula in between."""
    import z3
    root, entries = key
    for e in entries:
        if e[0] in ("forall", "exists"):
            return None
    if len(entries) > TRANSLATE_BUDGET:    # as ``to_pysmt``'s count
        raise FormulaTooLarge()
    R = _z3_raw()
    inc = R["Z3_inc_ref"]
    ctx = z3.main_ctx()                   # pysmt's z3 converter's context
    c = ctx.ref()
    terms = _Z3_TERMS.table(ctx)
    Ast = z3.Ast
    # terms are handled as their z3 addresses (ints: cheap keys; a C call
    # takes one as a ``c_void_p``, an array of terms takes the ints)
    vp = ctypes.c_void_p

    def made(k, make, *args):
        """The term of structure ``k``: remembered, or ``make(*args)``."""
        a = terms.get(k)
        if a is None:
            a = make(c, *args)
            inc(c, a)
            a = terms[k] = a.value
        return a

    def nary(name, xs):
        k = (name, tuple(xs))
        a = terms.get(k)
        if a is None:
            a = R[name](c, len(xs), (Ast * len(xs))(*xs))
            inc(c, a)
            a = terms[k] = a.value
        return a

    int_sort, bool_sort = z3.IntSort(ctx).ast, z3.BoolSort(ctx).ast
    mk_num, mk_const, mk_sym = (R["Z3_mk_numeral"], R["Z3_mk_const"],
                                R["Z3_mk_string_symbol"])
    mk_le, mk_eq = R["Z3_mk_le"], R["Z3_mk_eq"]

    def num(v):
        a = terms.get(("num", v))
        return a if a is not None else made(
            ("num", v), mk_num, str(v).encode(), int_sort)

    def const(spelt, sort):
        a = terms.get(("const", spelt))
        return a if a is not None else made(
            ("const", spelt), lambda c, s, srt: mk_const(c, mk_sym(c, s), srt),
            spelt.encode(), sort)

    true = made(("true", ), R["Z3_mk_true"])
    false = made(("false", ), R["Z3_mk_false"])
    zero = num(0)
    nodes = []
    names = {}
    defs, divmods = [], {}

    def sub(n):
        return true if n == "T" else false if n == "F" else nodes[n]

    for e in entries:
        tag = e[0]
        if tag == "lin":
            parts = []
            if e[1] != 0 or not e[2]:
                parts.append(num(e[1]))
            for a, co in e[2]:
                parts.append(nodes[a] if co == 1 else
                             nary("Z3_mk_mul", (num(co), nodes[a])))
            node = parts[0] if len(parts) == 1 else \
                nary("Z3_mk_add", parts)
        elif tag == "le0" or tag == "eq0":
            x = nodes[e[1]]
            node = made((tag, x), mk_le if tag == "le0" else mk_eq, vp(x),
                        vp(zero))
        elif tag == "and" or tag == "or":
            xs = [sub(x) for x in e[1]]
            node = xs[0] if len(xs) == 1 else \
                nary("Z3_mk_and" if tag == "and" else "Z3_mk_or", xs)
        elif tag == "iv" or tag == "bv":
            k = e[1]
            if tag == "iv":
                node = const(f"i{k[1]}", int_sort)
                names[(k, E.INT)] = node
            else:
                node = const(f"b{k[1]}", bool_sort)
                names[(k, E.BOOL)] = node
        elif tag == "div" or tag == "mod":
            qr = divmods.get((e[1], e[2]))
            if qr is None:
                x, cc = nodes[e[1]], num(e[2])
                n = 2 * len(divmods)
                q = const(f"_q{n + 1}", int_sort)
                r = const(f"_q{n + 2}", int_sort)
                cq_r = nary("Z3_mk_add", (nary("Z3_mk_mul", (cc, q)), r))
                eq = made(("eq0", x, cq_r), mk_eq, vp(x), vp(cq_r))
                lo = made(("le0", zero, r), mk_le, vp(zero), vp(r))
                hi = made(("lt", r, cc), R["Z3_mk_lt"], vp(r), vp(cc))
                defs.append(nary("Z3_mk_and", (eq, lo, hi)))
                qr = divmods[(e[1], e[2])] = (q, r)
            node = qr[0] if tag == "div" else qr[1]
        elif tag == "ite":
            b, x, y = sub(e[1]), nodes[e[2]], nodes[e[3]]
            node = made(("ite", b, x, y), R["Z3_mk_ite"], vp(b), vp(x),
                        vp(y))
        elif tag == "mul":
            node = nary("Z3_mk_mul", (nodes[e[1]], nodes[e[2]]))
        elif tag == "not":
            b = sub(e[1])
            node = made(("not", b), R["Z3_mk_not"], vp(b))
        else:
            raise ValueError(tag)
        nodes.append(node)
    f = sub(root)
    if defs:
        f = nary("Z3_mk_and", defs + [f])
    if z3.z3core.Z3_get_error_code(c) != z3.Z3_OK:
        _Z3_TERMS.clear()                 # (never seen) pysmt's way then
        return None
    def ast(a):     # a z3 ``Ast`` as a call returns one
        r = Ast.__new__(Ast)
        r.value = a
        return r
    return z3.BoolRef(ast(f), ctx), lambda: {
        ks: (z3.ArithRef(ast(a), ctx) if ks[1] == E.INT
             else z3.BoolRef(ast(a), ctx))
        for ks, a in names.items()}


class QueryStats:
    __slots__ = ("queries", "cache_hits", "trivial", "solver_calls",
                 "unknown", "solver_time")

    def __init__(self):
        self.reset()

    def reset(self):
        self.queries = 0
        self.cache_hits = 0
        self.trivial = 0
        self.solver_calls = 0
        self.unknown = 0
        self.solver_time = 0.0

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}


class Solver:
    """Satisfiability of two-valued terms with caching and a time limit."""

    def __init__(self, timeout_ms=30_000, cache_size=8192, rlimit=None):
        #: z3 resource units per query: the limit that decides. Answers
        #: must not depend on the machine's speed or load (a wall-clock
        #: limit made a query 'unknown' on a slow CI machine that was
        #: 'sat' here, and z3's timer thread cancelling a running tactic
        #: is the path where z3 has crashed the process)
        self.rlimit = RLIMIT if rlimit is None else int(rlimit)
        #: wall-clock backstop only (a query z3 cannot count steps in):
        #: never reached by a query that stays within ``rlimit``
        self.timeout_ms = timeout_ms
        self.cache_size = cache_size
        self._cache = OrderedDict()
        self.stats = QueryStats()

    def clear_cache(self):
        self._cache.clear()

    def check(self, t, strides=None):
        """'sat' | 'unsat' | 'unknown', and a model {key: value} when sat.

        ``strides``: the stride variables free in ``t`` in the order
        ``term_keys(t)`` lists them, when the caller knows them (it saves
        a walk of the whole term)."""
        self.stats.queries += 1
        if t is False:
            self.stats.trivial += 1
            return "unsat", None
        if t is True:
            self.stats.trivial += 1
            return "sat", {}
        # strides are positive integers
        if strides is None:
            strides = [k for k in term_keys(t) if isinstance(k, E.StrideVar)]
        extra = [ble0(ladd(lconst(1), lvar(k), -1)) for k in strides]
        if extra:
            t = band(t, *extra)
        key, back = canonical_key(t)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            self.stats.cache_hits += 1
            res, cmodel = hit
        else:
            res, cmodel = self._solve(None, key)
            self._cache[key] = (res, cmodel)
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        model = None
        if cmodel is not None:
            model = {back[k]: v for k, v in cmodel.items() if k in back}
        return res, model

    def _solve(self, ct, key=None):
        """Decide the canonical term ``ct`` (``key``: its ``canonical_key``,
        from which a query without quantifiers is built in z3 directly;
        ``ct`` None: made from ``key`` when needed)."""
        import z3
        self.stats.solver_calls += 1
        t0 = time.perf_counter()
        try:
            try:
                try:
                    direct = to_z3(key) if key is not None else None
                except (ctypes.ArgumentError, AttributeError, TypeError,
                        IndexError):
                    # (never seen) pysmt's way; also when a z3 release
                    # wraps its C functions otherwise (_z3_raw)
                    direct = None
                if direct is None:
                    f, names = to_pysmt(canonical_term(key) if ct is None
                                        else ct)
                    conv = _BACKEND.converter()
                    zf = conv.convert(f)

                    def syms(names=names):
                        return {ks: conv.convert(symb)
                                for ks, symb in names.items()}
                else:
                    zf, syms = direct
            except (FormulaTooLarge, RecursionError):
                self.stats.unknown += 1
                return "unknown", None
            if _refuted(zf, self.rlimit, self.timeout_ms):
                return "unsat", None
            s = z3.Solver(ctx=zf.ctx)
            _limit(s, self.rlimit, self.timeout_ms)
            s.add(zf)
            r = s.check()
            if r == z3.unsat:
                return "unsat", None
            if r == z3.sat:
                m = s.model()
                out = {}
                for (k, srt), zsym in syms().items():
                    zv = m.eval(zsym, model_completion=True)
                    if not _concrete(zv, srt):
                        # z3 can leave a value symbolic (an If over a
                        # quantifier the query holds): no usable model
                        self.stats.unknown += 1
                        return "unknown", None
                    out[k] = (z3.is_true(zv) if srt == E.BOOL
                              else zv.as_long())
                return "sat", out
            self.stats.unknown += 1
            return "unknown", None
        finally:
            self.stats.solver_time += time.perf_counter() - t0


def _concrete(zv, srt) -> bool:
    """``zv`` (a model value of sort ``srt``) is a literal."""
    import z3
    if srt == E.BOOL:
        return z3.is_true(zv) or z3.is_false(zv)
    return z3.is_int_value(zv)


#: the tactics ``_refuted`` applies: simplification, elimination of the
#: variables equations define, then z3's SMT core. Almost every query here
#: is an 'unsat' proof; on those this takes about a third of the time of a
#: default ``z3.Solver``, most of whose cost on small queries is setting
#: itself up (measured on the queries of the SGEMM schedule: 2.2 ms
#: against 6.5 ms a query, the same answers)
_REFUTE_TACTICS = ("simplify", "solve-eqs", "smt")


def _refuted(zf, rlimit, timeout_ms) -> bool:
    """Is the z3 formula ``zf`` proven unsatisfiable by ``_REFUTE_TACTICS``
    within the limits? False when not proven (satisfiable, undecided, out
    of steps): the default solver then answers, so a model, and every
    answer but a proof found here, are the default solver's."""
    import z3
    s = _BACKEND.refuter(zf.ctx, int(rlimit), int(timeout_ms))
    s.push()
    try:
        s.add(zf)
        return s.check() == z3.unsat
    except z3.Z3Exception:
        return False
    finally:
        s.pop()


#: z3 resource units a query may use (``rlimit``; per check, not per
#: context). Measured on the queries of the test suite (z3 5.4.1, Intel
#: Xeon, 2026-11-28): every query z3 answered used at most 1.35 M units;
#: the undecided ones of the bounds fuzzer run 0.3-5 s at 3 M (z3's rate
#: varies 0.2-10 M units a second with the kind of query)
RLIMIT = 3_000_000


def _limit(s, rlimit, timeout_ms):
    """Bound one z3 solver: ``rlimit`` decides, ``timeout_ms`` backstops."""
    s.set("rlimit", int(rlimit))
    s.set("timeout", int(timeout_ms))


#: the per-process solver (its cache is invisible to semantics)
DEFAULT_SOLVER = Solver()
register("exo_hl.effects.smt.solver", DEFAULT_SOLVER.clear_cache,
         lambda: len(DEFAULT_SOLVER._cache))


def solver() -> Solver:
    return DEFAULT_SOLVER


# ---------------------------------------------------------------------------
# substitution of integer variables in terms (one-point elimination)


def tsubst(t, m):
    """Replace int variables {key: lin} in a term, re-simplifying."""
    if not m or t is True or t is False:
        return t
    tag = t[0]
    if tag == "lin":
        out = lconst(t[1])
        for a, c in t[2]:
            out = ladd(out, lscale(_asub(a, m), c))
        return out
    if tag == "bv":
        return t
    if tag == "not":
        return bnot(tsubst(t[1], m))
    if tag == "and":
        return band(*(tsubst(x, m) for x in t[1]))
    if tag == "or":
        return bor(*(tsubst(x, m) for x in t[1]))
    if tag == "le0":
        return ble0(tsubst(t[1], m))
    if tag == "eq0":
        return beq0(tsubst(t[1], m))
    if tag in ("forall", "exists"):
        bk = {k for k, _ in t[1]}
        inner = {k: v for k, v in m.items() if k not in bk}
        mk = bforall if tag == "forall" else bexists
        return mk(t[1], tsubst(t[2], inner))
    raise ValueError(tag)


def _asub(a, m):
    tag = a[0]
    if tag == "iv":
        r = m.get(a[1])
        return r if r is not None else latom(a)
    if tag == "div":
        return ldiv(tsubst(a[1], m), a[2])
    if tag == "mod":
        return lmod(tsubst(a[1], m), a[2])
    if tag == "ite":
        return lite(tsubst(a[1], m), tsubst(a[2], m), tsubst(a[3], m))
    if tag == "mul":
        return lmul(tsubst(a[1], m), tsubst(a[2], m))
    raise ValueError(tag)


def solve_for(key, diff):
    """If diff == 0 can be solved as key = lin exactly (coefficient ±1 and
    key not inside another atom), return that lin, else None."""
    atom = ("iv", key)
    coeff = None
    rest = []
    for a, c in diff[2]:
        if a == atom:
            coeff = c
        else:
            ks = {}
            _term_keys(a, ks)
            if key in ks:
                return None
            rest.append((a, c))
    if coeff not in (1, -1):
        return None
    r = ("lin", diff[1], tuple(rest))
    return lscale(r, -coeff)  # c*k + r = 0  ->  k = -r/c


def _bound_keys(t, out, seen):
    """Add to ``out`` the keys bound by the quantifiers in ``t`` (``seen``:
    ids of the composite sub-terms already walked)."""
    if t is True or t is False or t[0] in ("iv", "bv"):
        return out
    if id(t) in seen:
        return out
    seen.add(id(t))
    tag = t[0]
    if tag == "lin":
        for a, _ in t[2]:
            _bound_keys(a, out, seen)
    elif tag in ("forall", "exists"):
        out.update(k for k, _ in t[1])
        _bound_keys(t[2], out, seen)
    elif tag in ("and", "or"):
        for x in t[1]:
            _bound_keys(x, out, seen)
    elif tag in ("div", "mod", "not", "le0", "eq0"):
        _bound_keys(t[1], out, seen)
    else:   # ite, mul
        for x in t[1:]:
            _bound_keys(x, out, seen)
    return out


def exists_elim(keys, body, diffs):
    """∃keys. body, where ``diffs`` are lins known (from ``body``) to be 0.

    One-point rule: a key with coefficient ±1 in such an equation is replaced
    by its solution, so no quantifier is needed; any other key keeps an
    explicit ∃ (which z3 may fail on -> 'unknown' -> not proven).
    """
    remaining = []
    diffs = list(diffs)
    # ``tsubst`` does not rename bound variables apart: a solution naming a
    # key that a quantifier in the body binds would be captured there
    bound = _bound_keys(body, set(), set())
    for d in diffs:
        _bound_keys(d, bound, set())
    for k in keys:
        sol = None
        for d in diffs:
            sol = solve_for(k, d)
            if sol is not None and bound and not bound.isdisjoint(
                    term_keys(sol)):
                sol = None
            if sol is not None:
                break
        if sol is None:
            remaining.append(k)
            continue
        m = {k: sol}
        body = tsubst(body, m)
        diffs = [tsubst(d, m) for d in diffs]
    return bexists(tuple((k, E.INT) for k in remaining), body)
