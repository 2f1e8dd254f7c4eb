"""Config values a loop leaves unknown (⊥), as fresh variables with what is
known of them, for the bounds check.

ValG (``lift.valg_loop``) gives a field the body writes with a value that
depends on what the body wrote before (``C.c = (C.c + 1) % 8``) the value
``fix ? x : ⊥`` after the loop, and at the start of an iteration. ⊥ proves
nothing, so ``y[C.c]`` after that loop was unprovable although every value
the field takes is in ``0 .. 7``. Here each such value becomes a fresh
variable ``v`` (an ``Unknown``) with two facts:

* ``v == (fix ? x : ⊥)`` (M-collapsed: where ValG knows the value, it is
  that one);
* ``v == (lo < hi ? gx[it := hi - 1, w := u_w] : x)``: the loop ran its
  last iteration on some state ``u`` (one fresh variable per field the body
  writes, shared by the fields of one loop) and wrote ``gx`` of it, or it
  ran zero times and left ``x``. Inside the body, ``hi`` is the iteration:
  the value at its start is what iteration ``it - 1`` wrote, or ``x`` in
  the first.

Why this is sound: the bounds check proves each obligation for every value
of its free variables satisfying its facts, and the actual values (the
state at the start of the last iteration, the value after it) satisfy
these. The variables are fresh for each program point a walk visits, so
two points never share one: it is not done in ValG itself, whose results
are memoized per statement and compared between statements (two runs of
the same loop from different states would have shared the variable).
"""
from __future__ import annotations

from . import eexpr as E
from .lift import ctrl_sort


class Unknown:
    """The key of a fresh variable: a config value a loop leaves unknown
    (``gvar``) or the state its last iteration ran on. Compared by
    identity."""

    __slots__ = ("name", "gvar")

    def __init__(self, name, gvar):
        self.name = name
        self.gvar = gvar

    def __repr__(self):
        return self.name


def _ee(key, gvar):
    return E.var(key, ctrl_sort(gvar.config.lookup_type(gvar.field)))


def sharpen(it, lo, hi, body_g, values, where, last="last"):
    """``(values', facts)``: ``values`` ({GVar: ee} after a loop ``for it in
    lo..hi`` whose body has ValG ``body_g``, all relative to the state at
    the loop) with each value that may be ⊥ replaced by a fresh variable,
    and the facts known of those variables (relative to that state too).
    ``hi`` is the iteration itself for the values at its start. ``where``
    names the point ("after the loop at line 7") in counterexamples,
    ``last`` the iteration that wrote the value ("last", "previous")."""
    if not any(E.may_be_bot(v) for v in values.values()):
        return values, []
    written = set(body_g)
    state = {}

    def start_of_last(w):
        if w not in state:
            state[w] = _ee(Unknown(f"{w!r} at the start of the {last} "
                                   f"iteration", w), w)
        return state[w]

    out, facts = dict(values), []
    runs = E.op("<", lo, hi)
    for k, val in values.items():
        if not E.may_be_bot(val):
            continue
        gx = body_g.get(k)
        if gx is None or not _plain(gx):
            continue
        v = _ee(Unknown(f"{k!r} {where}", k), k)
        env = {it: E.op("-", hi, E.const(1))}
        env.update({w: start_of_last(w) for w in E.free_keys(gx)
                    if w in written})
        facts.append(E.eq(v, val))
        facts.append(E.eq(v, E.ite(runs, E.subst(gx, env), _ee(k, k))))
        out[k] = v
    return out, facts


def is_unknown(ee) -> bool:
    """Whether ``ee`` names a value a loop left unknown (or is ⊥)."""
    return E.may_be_bot(ee) or any(isinstance(k, Unknown)
                               for k in E.free_keys(ee))


def _nodes(ee):
    """Each node of ``ee`` once (a DAG: the values after a loop nest share
    subterms, and their tree size is exponential in the depth; a walk of
    the tree took a minute on one generated nest)."""
    seen, todo = set(), [ee]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        yield x
        if x[0] == "op":
            todo.extend(x[2:])
        elif x[0] == "ite":
            todo.extend(x[1:])
        elif x[0] in ("forall", "exists"):
            todo.append(x[2])


def _plain(ee, limit=16) -> bool:
    """Whether ``ee`` is a small quantifier-free expression with no ⊥: the
    value a body writes in the common case (``(C.c + 1) % 8``). Bigger
    ones (a nest's guarded writes) are left unknown: their facts made the
    bounds fuzzer's generated nests check about 1.4 times slower (limit
    48; unlimited, twice) for little they prove."""
    for n, x in enumerate(_nodes(ee)):
        if n >= limit or x[0] in ("bot", "forall", "exists"):
            return False
    return True
