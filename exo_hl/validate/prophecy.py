"""Guessing prophecies: which original statement instance a scheduled
statement instance claims to compute.

Nothing here is trusted (``parametric`` checks every guess with VC3, and
drops the ones that fail). Candidates for a scheduled statement: the
original statements with its source location (rewrites keep it), then any
of the same shape (an instruction's body has the library's location).
``sigma`` comes from equating the statements' accesses: the written
location when both write one argument, and each read, followed back
through one plain copy (staging), against the original's read at the same
position.
"""
from __future__ import annotations

import z3

from .flatten import reads as _reads
from .symexec import Unsupported
from .zvalues import ctrl_z3

__all__ = ["guess_prophecies", "infer"]


def guess_prophecies(self):
    """Set ``self.s.proph``: for each scheduled statement, the first
    candidate original statement whose accesses give a sigma."""
    by_src = {}
    for st in self.o.flat.stmts:
        if st.srcinfo is not None:
            by_src.setdefault(_src(st.srcinfo), []).append(st)
    by_shape = {}
    for st in self.o.flat.stmts:
        by_shape.setdefault(_shape(st.rhs), []).append(st)
    for t in self.s.flat.stmts:
        # the statement's own origin first; then any original statement
        # of the same shape (an instruction's body has the library's
        # source location)
        cands = list(by_src.get(_src(t.srcinfo), [])) \
            if t.srcinfo is not None else []
        cands += [s for s in by_shape.get(_shape(t.rhs), [])
                  if s not in cands]
        for s in cands:
            sigma = infer(self, s, t)
            if sigma is not None:
                self.s.proph[t.sid] = (s, sigma)
                break

def infer(self, s, t):
    """sigma with ``t``'s accesses onto ``s``'s, or None (a guess)."""
    svars = [z3.Int(f"sig_{k}") for k in range(len(s.iters))]
    eqs = []
    es = self.o.env(s, svars)
    et = self.s.env(t)
    if s.storage == t.storage and len(s.idx) == len(t.idx):
        eqs += [(ctrl_z3(a, es), ctrl_z3(b, et))
                for a, b in zip(s.idx, t.idx)]
    ra, rb = _reads(s.rhs, []), _reads(t.rhs, [])
    for a, b in zip(ra, rb):
        loc_b, st_b = _through_copies(self, t, b)
        if a[1] == st_b and len(a[2]) == len(loc_b):
            eqs += [(ctrl_z3(x, es), y) for x, y in zip(a[2], loc_b)]
    # one-iteration levels (an ``if`` branch, a call) have one value
    fixed = {v: z3.IntVal(lo[1]) for v, (lo, hi) in zip(svars, s.bounds)
             if lo[0] == "c" and hi == ("c", lo[1] + 1)}
    return _solve(svars, eqs, fixed)

def _through_copies(self, t, rd, depth=4):
    """(index z3 terms, storage) of a read, followed back through plain
    copies into allocated buffers (staging, packing, register loads; up
    to ``depth`` of them)."""
    et = self.s.env(t)
    loc = [ctrl_z3(i, et) for i in rd[2]]
    storage, stmt, cur, sub = rd[1], t, rd, []
    for _ in range(depth):
        if storage.startswith("arg") or storage.startswith("cfg:"):
            break
        try:
            pieces, _ = self.s.sources(stmt, cur)
        except Unsupported:
            break
        found = None
        for cond, w, wv in pieces:
            src = w.rhs
            while src[0] == "conv":
                src = src[3]
            if src[0] == "rd":
                found = (w, wv, src)
                break
        if found is None:
            break
        w, wv, src = found
        # the writer's iteration, over t's iterators
        wv = [z3.substitute(x, *sub) if sub else x for x in wv]
        ew = self.s.env(w, wv)
        loc, storage = [ctrl_z3(i, ew) for i in src[2]], src[1]
        stmt, cur, sub = w, src, list(zip(self.s.ivars(w), wv))
    return loc, storage

def _shape(tree):
    """A value tree without its locations: operations, types, literals."""
    k = tree[0]
    if k == "rd":
        return ("rd", tree[3])
    if k == "k":
        return tree
    if k == "op":
        return ("op", tree[1], tree[2], _shape(tree[3]), _shape(tree[4]))
    if k == "neg":
        return ("neg", tree[1], _shape(tree[2]))
    if k == "conv":
        return ("conv", tree[1], tree[2], _shape(tree[3]))
    if k == "ext":
        return ("ext", tree[1], tree[2]) + tuple(_shape(a) for a in tree[3])
    return (k, )
def _src(si):
    return (si.filename, si.lineno, si.col_offset)
def _solve(svars, eqs, fixed=None):
    """Each sigma_k from an equation ``a(sig) == b`` with a = sig_k + rest,
    rest free of sig (or from ``fixed``); None when some stay unsolved."""
    sol = dict(fixed or {})
    changed = True
    while changed and len(sol) < len(svars):
        changed = False
        for a, b in eqs:
            a2 = z3.substitute(a, *[(v, e) for v, e in sol.items()]) \
                if sol else a
            for v in svars:
                if v in sol:
                    continue
                rest = z3.simplify(a2 - v)
                if _mentions(rest, svars):
                    continue
                sol[v] = z3.simplify(b - rest)
                changed = True
                break
    if len(sol) < len(svars):
        return None
    return [sol[v] for v in svars]
def _mentions(t, vs):
    names = {v.get_id() for v in vs}
    todo = [t]
    while todo:
        x = todo.pop()
        if x.get_id() in names:
            return True
        todo.extend(x.children())
    return False
