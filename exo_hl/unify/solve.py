"""Solving linear equations for unknown affine coefficients (z3).

Every unknown integer the matcher produces (a control argument of the
sub-procedure, or the offset of a window argument in one dimension) must be
an expression the *caller* can evaluate at the call site, i.e. an affine
combination of the block's known, free integer atoms (enclosing loop
iterators, size arguments, ``e / c`` of those, ...)::

    u = c[u, 1] + sum(c[u, K] * K for K in basis)

An equation ``sum(a_u * u) + sum(b_v * v) + k == 0`` must hold for *every*
value of the variables, so each coefficient of the polynomial in the basis
variables must vanish separately. That gives a linear system in the integer
unknowns ``c``; we hand it to z3 because it is an integer (not rational)
problem and because we want the *simplest* solution when the system leaves
freedom: size arguments preferably positive, then the fewest nonzero
coefficients, then the smallest coefficients. Same query, same answer.

This module is self-contained: it is the only place in the compiler that
solves for unknown coefficients (the effect analysis only proves facts).
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import z3

from ..caches import memo

#: solver time limit per query (ms); unknown counts as "no solution"
TIMEOUT_MS = 10000


class Lin:
    """``sum(unk[u] * u) + sum(var[v] * v) + const`` (integer coefficients).

    ``u`` are unknown keys (hashable), ``v`` atoms (IR expressions)."""

    __slots__ = ("unk", "var", "const")

    def __init__(self, unk=None, var=None, const=0):
        self.unk = {k: c for k, c in (unk or {}).items() if c}
        self.var = {k: c for k, c in (var or {}).items() if c}
        self.const = const

    def __add__(self, other):
        return self.plus(other, 1)

    def __sub__(self, other):
        return self.plus(other, -1)

    def plus(self, other, k):
        unk, var = dict(self.unk), dict(self.var)
        for u, c in other.unk.items():
            unk[u] = unk.get(u, 0) + k * c
        for v, c in other.var.items():
            var[v] = var.get(v, 0) + k * c
        return Lin(unk, var, self.const + k * other.const)


class Equation:
    """``lin == 0``; ``desc`` says where it came from (for error messages)."""

    __slots__ = ("lin", "desc")

    def __init__(self, lin: Lin, desc: str):
        self.lin = lin
        self.desc = desc


class NoSolution(Exception):
    """The system has no integer solution; ``desc`` names one culprit."""

    def __init__(self, desc: str):
        super().__init__(desc)
        self.desc = desc


Solution = Dict[object, Tuple[int, Dict[object, int]]]


def solve(eqs: Sequence[Equation], unknowns: Sequence, basis: Sequence,
          positive: Sequence = (), optimize: bool = True,
          prefer_zero: Sequence = ()) -> Solution:
    """``{unknown: (const, {basis atom: coeff})}`` solving every equation for
    all values of the basis atoms; raises ``NoSolution``.

    ``unknowns`` and ``basis`` are ordered (the order fixes the query, so the
    answer is deterministic). Atoms of an equation outside ``basis`` must
    cancel exactly (they are bound inside the block, so no call argument
    can mention them). ``positive`` lists unknowns preferably >= 1 (sizes)
    when the equations leave them free. ``optimize=False`` only checks that
    a solution exists (and returns {}). ``prefer_zero`` lists unknowns
    whose coefficients should preferably all be 0, before the other
    preferences (``unify`` asks this for a second reading, window offsets
    zero and the freedom in control arguments, e.g. a lane number).

    The z3 query depends only on the coefficients, with unknowns and basis
    atoms numbered by position (``_rows``), so it is solved once per such
    system (``_solve_rows``, memoised): selecting the same instruction for
    many register loops asks the same system again with other symbols.
    """
    bidx = {a: i for i, a in enumerate(basis)}
    uidx = {u: i for i, u in enumerate(unknowns)}
    rows, descs = _rows(eqs, uidx, bidx, basis)
    if not unknowns:
        return {}
    pos = tuple(uidx[u] for u in positive)
    zero = tuple(uidx[u] for u in prefer_zero)
    out = _solve_rows(rows, len(unknowns), len(basis), pos, optimize, zero)
    if isinstance(out, int):
        raise NoSolution(descs[out])
    if isinstance(out, str):
        raise NoSolution(out)
    return {u: (c0, {basis[j]: c for j, c in cs})
            for u, (c0, cs) in zip(unknowns, out)}


def _rows(eqs, uidx, bidx, basis):
    """The constraints of the equations, one per (equation, basis column j)
    with unknowns: ``(j, ((unknown index, coeff), ...), constant)``, and
    the equation each came from (``descs``); raises ``NoSolution`` at the
    first equation with an atom outside the basis or a column with no
    unknown and a nonzero constant."""
    nb = len(basis)
    rows, descs = [], []
    for eq in eqs:
        lin = eq.lin
        for v, c in lin.var.items():
            if v not in bidx and c != 0:
                raise NoSolution(eq.desc)
        terms = tuple((uidx[u], c) for u, c in lin.unk.items() if c)
        for j in range(nb + 1):  # j == nb: constant term
            k = lin.const if j == nb else lin.var.get(basis[j], 0)
            if not terms:
                if k != 0:
                    raise NoSolution(eq.desc)
                continue
            rows.append((j, terms, k))
            descs.append(eq.desc)
    return tuple(rows), descs


@memo(maxsize=4096)
def _solve_rows(rows, nu, nb, positive, optimize, prefer_zero=()):
    """The z3 query of ``solve`` on numbered unknowns and basis columns:
    ``((const, ((j, coeff), ...)), ...)`` per unknown; or the index of the
    row an unsat core names; or a message why there is no solution.

    A system whose solution is unique is solved exactly first
    (``_unique_solution``): then every answer of the z3 query below (the
    feasibility check, and the optimum among the solutions, of which there
    is one) is that solution, so the answer is the same, without z3.
    Anything else (several solutions, none, a fractional one) goes to z3,
    which picks the simplest or names the culprit row."""
    fast = _unique_solution(rows, nu, nb)
    if fast is not None:
        return fast if optimize else ()
    return _solve_rows_z3(rows, nu, nb, positive, optimize, prefer_zero)


def _unique_solution(rows, nu, nb):
    """The integer solution of the rows when it exists and is unique, in
    ``_solve_rows``' format; None otherwise (no solution, several, or a
    fractional one: the caller asks z3).

    Every row of column ``j`` constrains the unknowns' coefficients of that
    column only, and an equation with unknowns gives one row per column,
    all with the same terms: one matrix ``A`` (equations x unknowns) with a
    right-hand side per column. When ``A`` has rank ``nu`` the rational
    solution of each column is unique (Gauss-Jordan elimination in exact
    fractions); it is the only integer solution when it is integral and
    satisfies every row."""
    if nu == 0 or not rows:
        return None
    from fractions import Fraction
    eqs = {}          # terms -> row number in A
    rhs = {}          # (row number, column) -> -k
    for j, terms, k in rows:
        r = eqs.setdefault(terms, len(eqs))
        if rhs.setdefault((r, j), -k) != -k:
            return None          # two rows, one column, different constants
    ncol = nb + 1
    # augmented matrix: the unknowns' coefficients, then a column per basis
    # column j (a column missing a row has right-hand side 0 there: every
    # equation gives a row for every column)
    mat = []
    for terms, r in eqs.items():
        row = [Fraction(0)] * nu
        for ui, c in terms:
            row[ui] += c
        row += [Fraction(rhs.get((r, j), 0)) for j in range(ncol)]
        mat.append(row)
    piv_row = 0
    for col in range(nu):
        piv = next((i for i in range(piv_row, len(mat)) if mat[i][col]),
                   None)
        if piv is None:
            return None          # rank < nu: several solutions (or none)
        mat[piv_row], mat[piv] = mat[piv], mat[piv_row]
        prow = mat[piv_row]
        inv = 1 / prow[col]
        prow = [x * inv for x in prow]
        mat[piv_row] = prow
        for i in range(len(mat)):
            if i != piv_row and mat[i][col]:
                f = mat[i][col]
                mat[i] = [a - f * b for a, b in zip(mat[i], prow)]
        piv_row += 1
    # rows past the pivots are 0 = rhs: the system is consistent iff those
    # right-hand sides vanish
    for i in range(piv_row, len(mat)):
        if any(mat[i][nu:]):
            return None
    out = []
    for u in range(nu):
        vals = mat[u][nu:]
        if any(v.denominator != 1 for v in vals):
            return None
        cs = [int(v) for v in vals]
        out.append((cs[-1], tuple((j, cs[j]) for j in range(nb) if cs[j])))
    return tuple(out)


def _solve_rows_z3(rows, nu, nb, positive, optimize, prefer_zero=()):
    """``_solve_rows`` by z3: feasibility (with an unsat core), then the
    simplest solution."""
    # a fresh context per query: z3 keeps learned state in a context, and
    # the answer must depend on the query alone (determinism)
    zc = z3.Context()
    cvars = [[z3.Int(f"c{ui}_{j}", zc) for j in range(nb + 1)]
             for ui in range(nu)]
    cons = [z3.Sum([c * cvars[ui][j] for ui, c in terms]) + k == 0
            for j, terms, k in rows]
    # feasibility first (with a core to name a culprit equation)
    s = z3.Solver(ctx=zc)
    s.set("timeout", TIMEOUT_MS)
    labels = {}
    for i, c in enumerate(cons):
        lab = z3.Bool(f"eq{i}", zc)
        labels[lab.get_id()] = i
        s.assert_and_track(c, lab)
    r = s.check()
    if r != z3.sat:
        core = s.unsat_core() if r == z3.unsat else []
        found = [labels[l.get_id()] for l in core if l.get_id() in labels]
        if found:
            return found[0]
        return "the solver could not decide the index equations"

    if not optimize:
        return ()
    # then the simplest solution
    o = z3.Optimize(ctx=zc)
    o.set("timeout", TIMEOUT_MS)
    for c in cons:
        o.add(c)
    allc = [c for u in range(nu) for c in cvars[u]]
    if prefer_zero:
        o.minimize(z3.Sum([z3.If(c != 0, 1, 0) for u in prefer_zero
                           for c in cvars[u]]))
    if positive:
        o.minimize(z3.Sum([z3.If(_value_at_zero(cvars[u]) >= 1, 0, 1)
                           for u in positive]))
    o.minimize(z3.Sum([z3.If(c != 0, 1, 0) for c in allc]))
    o.minimize(z3.Sum([z3.If(c >= 0, c, -c) for c in allc]))
    if o.check() != z3.sat:
        return "the solver could not decide the index equations"
    m = o.model()
    out = []
    for u in range(nu):
        cs = [m.eval(c, model_completion=True).as_long() for c in cvars[u]]
        out.append((cs[-1], tuple((j, cs[j]) for j in range(nb) if cs[j])))
    return tuple(out)


def _value_at_zero(cs):
    """The unknown's value when every basis atom is 0: its constant term."""
    return cs[-1]


__all__ = ["Lin", "Equation", "NoSolution", "solve", "TIMEOUT_MS"]
