"""validate() assumes of a control argument only what interpret() and the
C enforce: a ``size`` is >= 1; an ``index`` or ``int`` may be any 32-bit
value, negative included (the decoration's bounds checks do not assume
more: ``y[k]`` with ``k: index`` needs ``0 <= k`` proven). A proof that
assumed ``index >= 0`` called ``if k >= 0: y[0] = x[0]`` and the unguarded
write equivalent, which differ at ``k = -1`` in both interpret() and C.

The generator: for each control type and threshold, a procedure guarded
by ``k >= c`` against the unguarded one; whenever some admitted value of
``k`` makes interpret() differ, the verdict must not be proven (and when
the difference is at a small value, it is refuted).
"""
from __future__ import annotations

import numpy as np
import pytest

import exo_hl
from exo_hl.frontend.decorators import parse_proc_source

SCOPE = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
VALUES = {"size": (-1, 0, 1, 2, 3), "index": (-3, -1, 0, 1, 2),
          "int": (-3, -1, 0, 1, 2), "bool": (True, False)}


def _pair(ty, guard):
    o = parse_proc_source(
        f"def o(k: {ty}, x: f32[2], y: f32[2]):\n"
        f"    if {guard}:\n        y[0] = x[0]\n", SCOPE)
    s = parse_proc_source(
        f"def s(k: {ty}, x: f32[2], y: f32[2]):\n    y[0] = x[0]\n", SCOPE)
    return o, s


def _differs_at(o, s, ty):
    """The admitted values of ``k`` at which interpret() runs differ."""
    out = []
    for k in VALUES[ty]:
        ys = []
        for p in (o, s):
            y = np.zeros(2, np.float32)
            try:
                p.interpret(k=k, x=np.ones(2, np.float32), y=y)
            except ValueError:          # not a value of the type
                y = None
            ys.append(y)
        if ys[0] is not None and not np.array_equal(ys[0], ys[1]):
            out.append(k)
    return out


def _guards(ty):
    if ty == "bool":
        return ["k", "not k"]
    return [f"k >= {c}" for c in (-2, -1, 0, 1, 2)] + ["k > -1", "k != 0"]


@pytest.mark.parametrize("ty", sorted(VALUES))
def test_no_proof_where_an_admitted_argument_value_differs(ty):
    for guard in _guards(ty):
        o, s = _pair(ty, guard)
        v = exo_hl.validate(o, s)
        bad = _differs_at(o, s, ty)
        if bad:
            assert v.status != "proven", (ty, guard, bad, v)
            if any(k in (-1, 0, 1, True, False) for k in bad):
                # among the cheapest sizes the runs try
                assert v.status == "refuted", (ty, guard, bad, v)
        else:
            assert v.status == "proven", (ty, guard, v)


def test_negative_index_argument_refuted():
    o, s = _pair("index", "k >= 0")
    assert _differs_at(o, s, "index") == [-3, -1]
    v = exo_hl.validate(o, s)
    assert v.status == "refuted", v
    assert v.counterexample.sizes["k"] < 0
