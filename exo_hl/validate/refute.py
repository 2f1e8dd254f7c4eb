"""Counterexamples, confirmed by the reference interpreter.

A refutation is only ever reported with inputs on which ``interpret()``
runs both procedures and they end differently: some output element differs
by its bits (``-0.0`` is not ``0.0``), except that any two NaNs agree (a
NaN's sign and payload are not specified: docs/semantics.md), the
final config state differs, or one run fails where the other does not.
Inputs are drawn at random and from edge values (signed zeros, NaN, the
infinities, integer limits), since bit-level differences hide there.

A float reduction (``+=`` into a float location) may be reordered
(docs/semantics.md), and another order rounds differently, may give the
other sign of a zero sum or overflow where the first did not. So when
either procedure has one, a difference is reported only when it is found
on *exact* inputs (phase A: small nonzero integers in float buffers, in
procedures whose float operations are exact on such integers: ``+ - *``,
integer literals, ``fmin``/``fmax``/``relu``/``select``/``fabs``), where
every order gives the same value, and only for an element whose two
values are different exact integers, or one exact integer and a NaN or an
infinity (which no order of exact operations gives: a NaN there is a read
of memory never written, which the interpreter fills with NaN) — not two
zeros of opposite signs. A difference on random or edge floats (phase B),
or on exact inputs but outside these terms, is kept as a
``Reassociation`` note: not a counterexample, the verdict stays unknown.
"""
from __future__ import annotations

import numpy as np

from ..core_ir.datasem import (bf16_bits_to_f32, f32_to_bf16_bits, is_float,
                               is_int)
from ..core_ir.interpret import ConfigState, run_interpreter
from ..core_ir.nodes import IR
from ..core_ir.traversal import walk
from ..core_ir.types import NUMPY_DTYPES, basetype, is_control, shape
from .symexec import SymExec

__all__ = ["Counterexample", "Reassociation", "search"]

_EDGE_F = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 3.0, np.nan, np.inf, -np.inf,
           1e8, -1e8, 1e-40, 65504.0, 16777217.0]


class Counterexample:
    """Inputs on which the two procedures end differently, and how."""

    def __init__(self, sizes, inputs, config, where, original, scheduled):
        self.sizes = sizes          # control argument name -> value
        self.inputs = inputs        # data argument name -> numpy array
        self.config = config        # initial data config values
        self.where = where          # e.g. "C[1, 0]" or "run of scheduled"
        self.original = original    # the original's value there (or error)
        self.scheduled = scheduled

    def __repr__(self):
        return (f"Counterexample(sizes={self.sizes}, at {self.where}: "
                f"original {self.original!r}, scheduled "
                f"{self.scheduled!r})")


class Reassociation(Counterexample):
    """A difference between the runs that reordering a float reduction
    (allowed: docs/semantics.md) may explain: not a counterexample."""

    def __repr__(self):
        return "Reassociation" + super().__repr__()[len("Counterexample"):]


#: magnitudes of phase A's float inputs, by precision: small enough that
#: the sums and products of a small kernel stay exact integers
_EXACT_IN = {"bf16": 2, np.dtype(np.float16): 4}
_EXACT_IN_DEFAULT = 16
#: the largest float literal phase A takes as exact
_EXACT_LIT = 256
#: (mantissa bits) of the float types: a value of magnitude below
#: 2 ** (bits - 2) is taken as exactly computed
_MANT = {"bf16": 8, np.dtype(np.float16): 11, np.dtype(np.float32): 24,
         np.dtype(np.float64): 53}
_CLOSED_EXTERNS = {"fmin", "fmax", "relu", "select", "fabs"}


def _is_float_type(t):
    return t is IR.Num or is_float(t)


def _nodes(procs):
    """Every statement and expression of the procedures, callees' bodies
    (instructions' too) included (``traversal.walk`` per procedure)."""
    seen, todo = set(), list(procs)
    while todo:
        p = todo.pop()
        if id(p) in seen:
            continue
        seen.add(id(p))
        for top in (*p.body, *p.preds):
            for n in walk(top):
                yield n
                if isinstance(n, IR.Call):
                    todo.append(n.f)


def float_reductions(procs):
    """Whether a procedure (or a callee) adds into a float location with
    ``+=``: its additions may be reordered (docs/semantics.md)."""
    return any(isinstance(n, IR.Reduce) and _is_float_type(basetype(n.type))
               for n in _nodes(procs))


def exact_on_integers(procs):
    """Whether every float operation of the procedures gives an exact
    integer on small integers: no float division, no inexact extern, no
    non-integer or large float literal (phase A's condition)."""
    for n in _nodes(procs):
        if isinstance(n, IR.Const) and isinstance(n.val, float):
            v = n.val
            if not (np.isfinite(v) and v == int(v) and abs(v) <= _EXACT_LIT):
                return False
        elif isinstance(n, IR.BinOp) and n.op == "/":
            t = getattr(n, "type", None)
            if not (is_int(t) or is_control(t)):
                return False        # a float (or untyped) division
        elif isinstance(n, IR.Extern) and \
                n.f.name() not in _CLOSED_EXTERNS:
            return False
    return True


def _dtype(t):
    bt = basetype(t)
    return np.dtype(NUMPY_DTYPES[IR.F32 if bt is IR.Num else bt])


def _draw(rng, dt, n, edge, exact=False, bf16=False):
    if exact:
        if bf16 or dt.kind == "f":
            m = _EXACT_IN["bf16"] if bf16 else _EXACT_IN.get(
                dt, _EXACT_IN_DEFAULT)
            v = rng.integers(1, m + 1, n) * rng.choice([-1, 1], n)
            if bf16:
                return np.asarray(f32_to_bf16_bits(v.astype(np.float32)),
                                  dtype=dt).reshape(n)
            return v.astype(dt)
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -3), min(info.max, 3) + 1,
                            n).astype(dt)
    if dt.kind == "f":
        if edge:
            vals = np.array(_EDGE_F, dtype=np.float64)
            return vals[rng.integers(0, len(vals), n)].astype(dt)
        return (rng.standard_normal(n) * 4).astype(dt)
    info = np.iinfo(dt)
    if edge:
        vals = np.array([0, 1, -1, info.min, info.max, 2, 7],
                        dtype=np.int64)
        vals = vals[(vals >= info.min) & (vals <= info.max)]
        return vals[rng.integers(0, len(vals), n)].astype(dt)
    lo, hi = max(info.min, -100), min(info.max, 100)
    return rng.integers(lo, hi + 1, n).astype(dt)


def make_inputs(proc, sizes, rng, edge, exact=False):
    vals, named = [], {}
    env = {}
    for a in proc.args:
        if is_control(a.type):
            env[a.name] = sizes[a.name.name]
            vals.append(sizes[a.name.name])
            continue
        dims = [SymExec._ctrl_static(h, env) for h in shape(a.type)]
        dt = _dtype(a.type)
        arr = _draw(rng, dt, int(np.prod(dims, dtype=np.int64)), edge,
                    exact, basetype(a.type) is IR.BF16)
        arr = arr.reshape(dims)
        vals.append(arr)
        named[a.name.name] = arr
    return vals, named


def config_fields(procs):
    keys = set()
    for p in procs:
        for c in _config_fields(p.body):
            keys.add(c)
    return sorted(keys, key=lambda k: (k[0].name(), k[1]))


def _config_fields(stmts):
    out = set()

    def expr(e):
        if isinstance(e, IR.ReadConfig):
            out.add((e.config, e.field))
        for f in getattr(e, "_fields", ()):
            v = getattr(e, f)
            for x in (v if isinstance(v, tuple) else (v, )):
                if isinstance(x, IR.expr):
                    expr(x)

    def stmt(s):
        if isinstance(s, IR.WriteConfig):
            out.add((s.config, s.field))
        for f in s._fields:
            v = getattr(s, f)
            for x in (v if isinstance(v, tuple) else (v, )):
                if isinstance(x, IR.stmt):
                    stmt(x)
                elif isinstance(x, IR.expr):
                    expr(x)
                elif isinstance(x, IR.Proc):
                    for y in x.body:
                        stmt(y)
    for s in stmts:
        stmt(s)
    return out


def _run(proc, vals, cfg):
    args = [v.copy() if isinstance(v, np.ndarray) else v for v in vals]
    st = ConfigState(dict(cfg))
    try:
        run_interpreter(proc, args, config_state=st)
    except Exception as e:  # noqa: BLE001 - a failing run is an outcome
        return None, None, f"{type(e).__name__}: {e}"
    return args, st, None


def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def differences(original, scheduled, vals, cfg, skip=lambda key: False):
    """The differences of the two interpreted runs on these inputs, in
    order: (where, original value, scheduled value, what), ``what`` being
    ``("run",)``, ``("shape",)``, ``("element", data type)`` or
    ``("config", field type)``."""
    oa, ost, oerr = _run(original, vals, cfg)
    sa, sst, serr = _run(scheduled, vals, cfg)
    if oerr or serr:
        if not (oerr and serr):
            yield ("the run", oerr or "runs", serr or "runs", ("run", ))
        return
    for a, x, y in zip(original.args, oa, sa):
        if not isinstance(x, np.ndarray):
            continue
        if x.dtype != y.dtype or x.shape != y.shape:
            yield (a.name.name, x.dtype, y.dtype, ("shape", ))
            continue
        bx, by = x.reshape(-1), y.reshape(-1)
        differ = np.any(_bits(bx.reshape(-1, 1)) != _bits(by.reshape(-1, 1)),
                        axis=1)
        if x.dtype.kind == "f":
            # a NaN's sign and payload are not specified (docs/semantics.md:
            # a * b and b * a may give either operand's): two NaNs agree
            differ &= ~(np.isnan(bx) & np.isnan(by))
        for k in np.nonzero(differ)[0]:
            k = int(k)
            idx = np.unravel_index(k, x.shape) if x.ndim else ()
            where = f"{a.name.name}[{', '.join(map(str, idx))}]"
            yield (where, bx[k], by[k], ("element", basetype(a.type)))
    for key in sorted(set(ost) | set(sst),
                      key=lambda k: (k[0].name(), k[1])):
        if skip(key):
            continue
        u, v = ost.get(key), sst.get(key)
        if not _same(u, v):
            yield (f"config {key[0].name()}.{key[1]}", u, v,
                   ("config", key[0].lookup_type(key[1])))


def compare_runs(original, scheduled, vals, cfg, skip=lambda key: False):
    """(where, original value, scheduled value) of the first difference of
    the two interpreted runs on these inputs, or None."""
    for d in differences(original, scheduled, vals, cfg, skip):
        return d[:3]
    return None


def _exact_value(x, t):
    """``x`` (of data type ``t``) as a float when it is an exact integer
    phase A may compare (finite, integral, well inside the type's
    precision), else None."""
    if t is IR.BF16:
        bits = _MANT["bf16"]
    else:
        if np.asarray(x).dtype.kind != "f":
            return None
        bits = _MANT.get(np.asarray(x).dtype)
    x = _as_float(x, t)
    if bits is None or not np.isfinite(x) or x != int(x) or \
            abs(x) >= 2.0 ** (bits - 2):
        return None
    return x


def _forbidden_on_exact(what, u, v):
    """Whether this difference, found on exact inputs in procedures
    ``exact_on_integers``, is one no order of the reductions gives."""
    kind = what[0]
    if kind in ("run", "shape"):
        return True
    t = what[1]
    if not _is_float_type(t) or u is None or v is None:
        return True      # integers, control values; a field set in one run
    a, b = _exact_value(u, t), _exact_value(v, t)
    if a is None and b is None:
        return False
    if a is None or b is None:
        # exact integers against NaN or an infinity, which no order of
        # exact operations on them gives (a NaN: a read of memory never
        # written, which the interpreter fills with NaN)
        other = v if a is not None else u
        return not np.isfinite(_as_float(other, t))
    # two zeros of opposite signs: a zero sum's sign depends on the order
    return a != b


def _as_float(x, t):
    if t is IR.BF16:
        return float(bf16_bits_to_f32(np.uint16(x)))
    return float(x)


def _same(u, v):
    if isinstance(u, np.generic) and isinstance(v, np.generic):
        if u.dtype == v.dtype and u.dtype.kind == "f" and np.isnan(u) \
                and np.isnan(v):
            return True          # a NaN's sign and payload: unspecified
        return u.dtype == v.dtype and u.tobytes() == v.tobytes()
    return u == v


def search(original, scheduled, sizes_list, rounds=24, seed=0,
           control=None, skip=lambda key: False, notes=None):
    """A confirmed ``Counterexample`` at one of the given size assignments,
    or None. Phase A (exact inputs) comes first at each size; when a
    procedure has a float reduction, a difference that its reordering may
    explain is appended to ``notes`` (a ``Reassociation``) instead."""
    rng = np.random.default_rng(seed)
    cfg_keys = config_fields([original, scheduled])
    reorderable = float_reductions([original, scheduled])
    exact_ok = exact_on_integers([original, scheduled])
    # with a float reduction only phase A refutes: a few phase B rounds
    # (random, edge values) remain, to say what the difference is
    n_exact = max(1, rounds - min(4, rounds // 4) if reorderable
                  else rounds // 4)
    if reorderable and not exact_ok:
        n_exact, rounds = 0, min(rounds, 4)     # nothing can refute
    for sizes in sizes_list:
        for r in range(rounds):
            exact = r < n_exact
            edge = not exact and (r - n_exact) % 2 == 1
            if reorderable and not exact and notes is not None and notes:
                break
            vals, named = make_inputs(original, sizes, rng, edge, exact)
            cfg = dict(control or {})
            for key in cfg_keys:
                ft = key[0].lookup_type(key[1])
                if ft in NUMPY_DTYPES and ft is not IR.Num:
                    cfg[key] = _draw(rng, np.dtype(NUMPY_DTYPES[ft]), 1,
                                     edge, exact, ft is IR.BF16)[0]
            first = None
            for d in differences(original, scheduled, vals, cfg, skip):
                if not reorderable or (exact and exact_ok and
                                       _forbidden_on_exact(d[3], d[1],
                                                           d[2])):
                    return Counterexample(dict(sizes), named, cfg, *d[:3])
                first = first or d
                if not (exact and exact_ok):
                    break       # nothing here can refute
            if first is not None and notes is not None and not notes:
                notes.append(Reassociation(dict(sizes), named, cfg,
                                           *first[:3]))
    return None
