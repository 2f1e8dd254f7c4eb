"""validate() proves equivalence only for scheduled procedures that accept
every input the original accepts: an argument's extents must be the same
at every admitted size (``x: f32[n + 1]`` for ``x: f32[n]`` refuses the
original's inputs, as a stronger precondition does: refuted), and a window
argument may not become a dense one (the dense one refuses strided
arrays: unknown, the signatures differ). Both were proven before.

The generator: an original copying ``x`` into ``y`` through a window or
dense ``x`` of extent ``n`` (or ``n, m`` with ``n == m`` asserted),
against scheduled procedures with every combination of window/dense and
extents ``n``, ``n + 1``, ``2 * n``, ``m``; whenever the scheduled one
refuses an input the original runs (interpret(), sizes 1..3, contiguous
and strided arrays), the verdict is not proven; when it runs all of them
alike, it is.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import exo_hl
from exo_hl.frontend.decorators import parse_proc_source

SCOPE = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
EXTENTS = ["n", "n + 1", "2 * n", "m"]


def _proc(name, window, ext):
    t = f"[f32][{ext}]" if window else f"f32[{ext}]"
    return parse_proc_source(
        f"def {name}(n: size, m: size, x: {t}, y: f32[n]):\n"
        f"    assert n == m\n"
        f"    for i in seq(0, n):\n        y[i] = x[i]\n", SCOPE)


def _inputs(n):
    base = np.arange(1, 2 * n + 1, dtype=np.float32)
    yield base[:n].copy()          # contiguous, the original's extent
    yield base[::2][:n]            # strided


def _runs_alike(o, s):
    for n in (1, 2, 3):
        for x in _inputs(n):
            ys = []
            for p in (o, s):
                y = np.zeros(n, np.float32)
                try:
                    p.interpret(n=n, m=n, x=x, y=y)
                except ValueError:
                    y = None
                ys.append(y)
            if ys[0] is None:
                continue           # not an input of the original
            if ys[1] is None or not np.array_equal(*ys):
                return False
    return True


@pytest.mark.parametrize("o_window", [False, True])
def test_proven_only_when_the_scheduled_takes_the_originals_inputs(o_window):
    o = _proc("o", o_window, "n")
    for s_window, ext in itertools.product([False, True], EXTENTS):
        s = _proc("s", s_window, ext)
        v = exo_hl.validate(o, s)
        alike = _runs_alike(o, s)
        assert v.proven == alike, (o_window, s_window, ext, v)


def test_longer_argument_refuted():
    o, s = _proc("o", False, "n"), _proc("s", False, "n + 1")
    v = exo_hl.validate(o, s)
    assert v.refuted, v
    assert "shape" in str(v.counterexample), v


# An argument the original only reads and the scheduled procedure writes
# (even writing back the value it read): interpret() and the C then refuse
# overlapping, read-only and (for a scalar) plain-number inputs that the
# original takes. It was proven; the signatures now differ (unknown).

WRITES = {
    "none": "",
    "copy": "    x[0] = x[0]\n",
    "restore": "    t: f32\n    t = x[0]\n    x[0] = 0.0\n    x[0] = t\n",
}


def _rw(name, writes_x, x_scalar):
    xt, xr = ("f32", "x") if x_scalar else ("f32[2]", "x[0]")
    body = WRITES[writes_x].replace("x[0]", xr)
    return parse_proc_source(
        f"def {name}(x: {xt}, z: f32[2], y: f32[2]):\n{body}"
        f"    y[0] = {xr} + z[0]\n", SCOPE)


def _rw_inputs(x_scalar):
    """(x, z) pairs: apart, one array for both, read-only, a number."""
    a = np.array([1.0, 2.0], np.float32)
    ro = a.copy()
    ro.flags.writeable = False
    if x_scalar:
        return [(np.array([3.0], np.float32), a.copy()), (3.0, a.copy()),
                (a[:1], a)]
    return [(a.copy(), a.copy()), (a, a), (ro, a.copy())]


def _rw_alike(o, s, x_scalar):
    for x, z in _rw_inputs(x_scalar):
        ys = []
        for p in (o, s):
            y = np.zeros(2, np.float32)
            xx = x.copy() if isinstance(x, np.ndarray) and \
                x.flags.writeable and x is not z and x.base is None else x
            try:
                p.interpret(x=xx, z=z, y=y)
            except (ValueError, TypeError):   # refused
                y = None
            ys.append(y)
        if ys[0] is not None and (ys[1] is None or
                                  not np.array_equal(*ys)):
            return False
    return True


@pytest.mark.parametrize("x_scalar", [False, True])
def test_written_argument_only_read_by_the_original_not_proven(x_scalar):
    for wo, ws in itertools.product(WRITES, WRITES):
        o, s = _rw("o", wo, x_scalar), _rw("s", ws, x_scalar)
        v = exo_hl.validate(o, s)
        if not _rw_alike(o, s, x_scalar):
            assert not v.proven, (wo, ws, v)
        if wo == ws:
            assert v.proven, (wo, ws, v)
