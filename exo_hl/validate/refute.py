"""Counterexamples, confirmed by the reference interpreter.

A refutation is only ever reported with inputs on which ``interpret()``
runs both procedures and they end differently: some output element differs
by its bits (``-0.0`` is not ``0.0``), except that any two NaNs agree (a
NaN's sign and payload are not specified: docs/semantics.md), the
final config state differs, or one run fails where the other does not.
Inputs are drawn at random and from edge values (signed zeros, NaN, the
infinities, integer limits), since bit-level differences hide there.
"""
from __future__ import annotations

import numpy as np

from ..core_ir.interpret import ConfigState, run_interpreter
from ..core_ir.nodes import IR
from ..core_ir.types import NUMPY_DTYPES, basetype, is_control, shape
from .symexec import SymExec

__all__ = ["Counterexample", "search"]

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


def _dtype(t):
    bt = basetype(t)
    return np.dtype(NUMPY_DTYPES[IR.F32 if bt is IR.Num else bt])


def _draw(rng, dt, n, edge):
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


def make_inputs(proc, sizes, rng, edge):
    vals, named = [], {}
    env = {}
    for a in proc.args:
        if is_control(a.type):
            env[a.name] = sizes[a.name.name]
            vals.append(sizes[a.name.name])
            continue
        dims = [SymExec._ctrl_static(h, env) for h in shape(a.type)]
        dt = _dtype(a.type)
        arr = _draw(rng, dt, int(np.prod(dims, dtype=np.int64)), edge)
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


def compare_runs(original, scheduled, vals, cfg, skip=lambda key: False):
    """(where, original value, scheduled value) of the first difference of
    the two interpreted runs on these inputs, or None."""
    oa, ost, oerr = _run(original, vals, cfg)
    sa, sst, serr = _run(scheduled, vals, cfg)
    if oerr or serr:
        if oerr and serr:
            return None
        return ("the run", oerr or "runs", serr or "runs")
    for a, x, y in zip(original.args, oa, sa):
        if not isinstance(x, np.ndarray):
            continue
        if x.dtype != y.dtype or x.shape != y.shape:
            return (a.name.name, x.dtype, y.dtype)
        bx, by = x.reshape(-1), y.reshape(-1)
        differ = np.any(_bits(bx.reshape(-1, 1)) != _bits(by.reshape(-1, 1)),
                        axis=1)
        if x.dtype.kind == "f":
            # a NaN's sign and payload are not specified (docs/semantics.md:
            # a * b and b * a may give either operand's): two NaNs agree
            differ &= ~(np.isnan(bx) & np.isnan(by))
        diff = np.nonzero(differ)[0]
        if len(diff):
            k = int(diff[0])
            idx = np.unravel_index(k, x.shape) if x.ndim else ()
            where = f"{a.name.name}[{', '.join(map(str, idx))}]"
            return (where, bx[k], by[k])
    for key in set(ost) | set(sst):
        if skip(key):
            continue
        u, v = ost.get(key), sst.get(key)
        if not _same(u, v):
            return (f"config {key[0].name()}.{key[1]}", u, v)
    return None


def _same(u, v):
    if isinstance(u, np.generic) and isinstance(v, np.generic):
        if u.dtype == v.dtype and u.dtype.kind == "f" and np.isnan(u) \
                and np.isnan(v):
            return True          # a NaN's sign and payload: unspecified
        return u.dtype == v.dtype and u.tobytes() == v.tobytes()
    return u == v


def search(original, scheduled, sizes_list, rounds=24, seed=0,
           control=None, skip=lambda key: False):
    """A confirmed ``Counterexample`` at one of the given size assignments,
    or None."""
    rng = np.random.default_rng(seed)
    cfg_keys = config_fields([original, scheduled])
    for sizes in sizes_list:
        for r in range(rounds):
            edge = r % 2 == 1
            vals, named = make_inputs(original, sizes, rng, edge)
            cfg = dict(control or {})
            for key in cfg_keys:
                ft = key[0].lookup_type(key[1])
                if ft in NUMPY_DTYPES and ft is not IR.Num:
                    cfg[key] = _draw(rng, np.dtype(NUMPY_DTYPES[ft]), 1,
                                     edge)[0]
            d = compare_runs(original, scheduled, vals, cfg, skip)
            if d is not None:
                return Counterexample(dict(sizes), named, cfg, *d)
    return None
