"""Race freedom of ``par`` loops, for the size-parametric proof.

Two iterations of a ``par`` loop may run at once, so no location may be
touched by two of them with one writing (Clément and Cohen's U-PAR rule).
A buffer allocated inside the loop has an instance per iteration and
cannot race.
"""
from __future__ import annotations

import z3

from .flatten import reads as _reads
from .verdict import Failed
from .zvalues import ctrl_z3

__all__ = ["check_races"]


def check_races(prover):
    """Race freedom of every par loop of the scheduled procedure: no two
    iterations touch one location, one of them writing (the paper's
    U-PAR), one Z3 query per statement (a disjunction over the accesses
    it could race with), the accesses one by one only when it fails (to
    name the race)."""
    side = prover.s
    pars = sorted({v for st in side.flat.stmts for v in st.par})
    for v in pars:
        sts = [st for st in side.flat.stmts if v in st.par]
        accs = {b.sid: [(b.storage, b.idx, True)] + [
            (r[1], r[2], False) for r in _reads(b.rhs, [])]
            for b in sts}
        primed = {}                   # b.sid -> b in another iteration
        asked = set()
        for a in sts:
            todo = []
            for b in sts:
                for storage, idx, writes in accs[b.sid]:
                    if storage != a.storage:
                        continue
                    if v in side.flat.instance_dims.get(storage, ()):
                        # a buffer allocated inside the par loop: each
                        # iteration has its own instance (its index
                        # starts with the loop's iterator), no race
                        continue
                    # the same question asked once: two writes race
                    # either way round, and an access read twice (or
                    # read and written, as C[i] += ...) is one access
                    key = (("w", min(a.sid, b.sid), max(a.sid, b.sid))
                           if writes else (a.sid, b.sid, tuple(idx)))
                    if key not in asked:
                        asked.add(key)
                        todo.append((b, idx))
            if not todo:
                continue
            # one query for all of a's partners (a disjunction); the
            # partners one by one only when it fails, to name the race
            try:
                _race(prover, side, v, a, todo, primed)
            except Failed:
                if len(todo) == 1:
                    raise
                for b, idx in todo:
                    _race(prover, side, v, a, [(b, idx)], primed)


def _race(prover, side, v, a, partners, primed):
    """No iteration of ``a`` and one of a partner ``(b, index)`` in
    another iteration of the par loop over ``v`` touch one location
    (``primed``: each b's iterators in that other iteration, with
    its environment and domain, built once per statement)."""
    k = a.iters.index(v)
    ea = side.env(a)
    ia = [ctrl_z3(x, ea) for x in a.idx]
    alts = []
    for b, bidx in partners:
        m = primed.get(b.sid)
        if m is None:
            bv = [z3.Int(n + "'") if j >= k else z3.Int(n)
                  for j, n in enumerate(b.iters)]
            m = primed[b.sid] = (bv, side.env(b, bv), side.dom(b, bv))
        bv, eb, db = m
        alts.append(z3.And([db, z3.Int(v) != bv[k]] + [
            x == ctrl_z3(y, eb) for x, y in zip(ia, bidx)]))
    prover.check(f"race freedom of the par loop over {v}",
                 [side.dom(a), z3.Or(alts)], z3.BoolVal(False))
