"""validate() drops a conversion to a type that holds every value of the
converted one (``datasem.holds_exactly``), so a round trip through a wider
temporary (``t: f64; t = x; y = t`` for ``y = x`` on f32) is proven, in
the symbolic execution at fixed sizes and in the size-parametric proof
alike (the latter knew only a temporary's element type before: unknown).

``holds_exactly`` is checked against the semantics' own conversions
(``datasem.convert``): every value of each 8- and 16-bit type, edge and
random values of the others, must come back unchanged (bits, signed zeros;
NaN stays NaN) where it says so, and some value must change where it
does not. The generator: every pair of data types as (argument,
temporary), one hop and two hops; proven exactly when every hop holds
the argument's values exactly, and then ``interpret()`` agrees on
adversarial inputs.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import exo_hl
from exo_hl.core_ir import datasem as D
from exo_hl.core_ir.nodes import IR
from exo_hl.frontend.decorators import parse_proc_source

SCOPE = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
TYPES = {"i8": IR.I8, "ui8": IR.UI8, "i16": IR.I16, "ui16": IR.UI16,
         "i32": IR.I32, "f16": IR.F16, "bf16": IR.BF16, "f32": IR.F32,
         "f64": IR.F64}
_NP = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16, "ui16": np.uint16,
       "i32": np.int32, "f16": np.float16, "f32": np.float32,
       "f64": np.float64}


def _values(name):
    """Values of type ``name`` as the interpreter holds them: all of them
    for 8 and 16 bits, edge and random ones otherwise."""
    rng = np.random.default_rng(5)
    if name in ("i8", "ui8", "i16", "ui16"):
        lo, hi = D.int_range(TYPES[name])
        return [int(v) for v in range(lo, hi + 1)]
    if name == "i32":
        return [-2**31, 2**31 - 1, 0, -1, 2**24 + 1, -(2**24 + 1)] + \
            [int(v) for v in rng.integers(-2**31, 2**31, 2000)]
    if name == "f16":
        return list(np.arange(2**16, dtype=np.uint16).view(np.float16))
    if name == "bf16":
        bits = np.arange(2**16, dtype=np.uint16)
        return list(D.bf16_bits_to_f32(bits))
    if name == "f32":
        edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 3.4e38,
                         1 + 2**-23, 65504.0, 65520.0], np.float32)
        return list(edge) + list(rng.standard_normal(2000).astype(
            np.float32) * np.float32(1e4))
    edge = np.array([0.0, -0.0, np.inf, np.nan, 5e-324, 1.7e308,
                     1 + 2**-52], np.float64)
    return list(edge) + list(rng.standard_normal(2000) * 1e30)


def _eval_type(name):
    return D.domain(TYPES[name]) if name == "bf16" else TYPES[name]


def _same(a, b):
    if isinstance(a, (int, np.integer)) or isinstance(b, (int, np.integer)):
        return float(a) == float(b)
    a, b = float(a), float(b)
    if np.isnan(a) or np.isnan(b):
        return np.isnan(a) and np.isnan(b)
    return a == b and np.signbit(a) == np.signbit(b)


@pytest.mark.parametrize("src", sorted(TYPES))
def test_holds_exactly_agrees_with_the_conversions(src):
    vals = _values(src)
    for dst in TYPES:
        exact = D.holds_exactly(TYPES[src], TYPES[dst])
        changed = None
        for v in vals:
            with np.errstate(over="ignore", invalid="ignore"):
                w = D.convert(v, _eval_type(src), TYPES[dst])
            if not _same(v, w):
                changed = v
                break
        if exact:
            assert changed is None, (
                f"{src} -> {dst} said exact, but {changed!r} changes")
        else:
            assert changed is not None, (
                f"{src} -> {dst} said inexact, but no value changes")


def _round_trip(src, hops):
    decls = "".join(f"        t{k}: {h}\n" for k, h in enumerate(hops))
    chain = "        t0 = x[i]\n" + "".join(
        f"        t{k} = t{k - 1}\n" for k in range(1, len(hops)))
    o = parse_proc_source(
        f"def o(n: size, x: {src}[n], y: {src}[n]):\n"
        f"    for i in seq(0, n):\n        y[i] = x[i]\n", SCOPE)
    s = parse_proc_source(
        f"def s(n: size, x: {src}[n], y: {src}[n]):\n"
        f"    for i in seq(0, n):\n" + decls + chain
        + f"        y[i] = t{len(hops) - 1}\n", SCOPE)
    return o, s


def _array(src, vals):
    """An argument array (bf16: its bits, as ``interpret()`` takes them)."""
    if src == "bf16":
        return D.f32_to_bf16_bits(np.array(vals, np.float32))
    return np.array(vals, _NP[src])


def _as_values(src, arr):
    return D.bf16_bits_to_f32(arr) if src == "bf16" else arr


_PAIRS = list(itertools.product(sorted(TYPES), sorted(TYPES)))
_TWO = [("f16", ("f32", "f64")), ("bf16", ("f64", "f32")),
        ("i8", ("f16", "i16")), ("i16", ("f32", "f16")),
        ("f32", ("f64", "f16")), ("ui8", ("bf16", "f16"))]


@pytest.mark.parametrize("src,hops", [(s, (t, )) for s, t in _PAIRS]
                         + _TWO)
def test_round_trips_are_proven_exactly_when_they_keep_every_value(
        src, hops):
    o, s = _round_trip(src, hops)
    exact = all(D.holds_exactly(TYPES[src], TYPES[h]) for h in hops)
    v = exo_hl.validate(o, s)
    if exact:
        assert v.status == "proven", f"{src} via {hops}: {v}"
        vals = _values(src)
        rng = np.random.default_rng(0)
        pick = [vals[k] for k in rng.integers(0, len(vals), 64)] + vals[:8]
        x = _array(src, pick)
        y1, y2 = np.zeros_like(x), np.zeros_like(x)
        o.interpret(len(x), x, y1)
        s.interpret(len(x), x, y2)
        assert all(_same(a, b) for a, b in zip(_as_values(src, y1),
                                               _as_values(src, y2)))
    else:
        assert v.status != "proven", f"{src} via {hops}: {v}"


def _chain(rng, src, hops, extra):
    """Body lines: ``x[i]`` through temporaries of types ``hops`` into
    ``y[i]``; ``extra``: a second writer of one temporary under a guard
    (``x[i] + x[i]``), or an accumulation into it."""
    lines = [f"        t{k}: {h}" for k, h in enumerate(hops)]
    prev = "x[i]"
    for k in range(len(hops)):
        lines.append(f"        t{k} = {prev}")
        if extra == k:
            lines.append(rng.choice([
                f"        if i % 2 == 0:\n            t{k} = x[i] + x[i]",
                f"        t{k} += x[i]",
                f"        t{k} = t{k}"]))
        prev = f"t{k}"
    lines.append(f"        y[i] = {prev}")
    return "\n".join(lines) + "\n"


def _proc_of(name, src, body):
    return parse_proc_source(
        f"def {name}(n: size, x: {src}[n], y: {src}[n]):\n"
        f"    for i in seq(0, n):\n" + body, SCOPE)


def test_dropped_conversions_never_prove_different_procedures():
    """The generator of the class: random chains of temporaries (a
    second guarded writer, an accumulation), the same chain with one more
    temporary of a random type inserted; whatever is proven computes the
    same bits (NaN: any NaN) in ``interpret()`` on the extreme values of
    each type and 2048 random ones."""
    import random
    rng = random.Random(2024)
    names = sorted(TYPES)
    proven = 0
    for trial in range(60):
        src = rng.choice(names)
        hops = [rng.choice(names) for _ in range(rng.randint(0, 2))]
        extra = rng.randrange(len(hops)) if hops and rng.random() < 0.4 \
            else None
        at = rng.randint(0, len(hops))
        more = hops[:at] + [rng.choice(names)] + hops[at:]
        e2 = None if extra is None else (extra if extra < at else extra + 1)
        seed = rng.random()
        o = _proc_of("o", src, _chain(random.Random(seed), src, hops, extra)
                     if hops else "        y[i] = x[i]\n")
        s = _proc_of("s", src, _chain(random.Random(seed), src, more, e2))
        v = exo_hl.validate(o, s)
        if not v.proven:
            continue
        proven += 1
        vals = _values(src)
        pick = vals[:64] + vals[-64:] + [vals[k] for k in np.random.default_rng(
            trial).integers(0, len(vals), 2048)]
        x = _array(src, pick)
        y1, y2 = np.zeros_like(x), np.zeros_like(x)
        with np.errstate(all="ignore"):
            o.interpret(len(x), x, y1)
            s.interpret(len(x), x, y2)
        a, b = _as_values(src, y1), _as_values(src, y2)
        bad = [k for k in range(len(a)) if not _same(a[k], b[k])]
        assert not bad, (f"proven but different at x = {pick[bad[0]]!r}:\n"
                         f"{o}\n{s}")
    print(f"round-trip chains: 60 tried, {proven} proven")
    assert proven >= 10
