"""``bind_const`` changes only the binding it makes, whatever the other
nests name their scalars: random procedures whose nests each hold a scalar
named like the new binding (or like its renamed spelling ``name_1``), of
f64 or f32, and one nest with the constant to bind, at a random place.
``bind_const`` found its binding by name and so changed (precision, place)
the first nest's scalar instead. Checked: every other nest's scalar keeps
its type and place, the new binding is out of the loops with the
asked precision, and the results are bit-equal (interpret)."""
from __future__ import annotations

import random
import re

import numpy as np

import exo_hl
from exo_hl.frontend.decorators import parse_proc_source
from exo_hl.stdlib import bind_const


def _source(rng, k):
    """A procedure of ``k`` nests with scalars named 'c' or 'c_1' and one
    nest (at a random place) reading the literal 0.5; its outputs
    (name, dtype)."""
    target = rng.randrange(k + 1)
    args, nests, outs = ["n: size", "x: f32[n]"], [], []
    for j in range(k + 1):
        if j == target:
            args.append("z: f32[n]")
            outs.append(("z", np.float32))
            nests.append(f"    for t in seq(0, n):\n"
                         f"        z[t] = x[t] * 0.5")
            continue
        name, prec = rng.choice(["c", "c_1"]), rng.choice(["f32", "f64"])
        args.append(f"y{j}: {prec}[n]")
        outs.append((f"y{j}", np.float64 if prec == "f64" else np.float32))
        nests.append(f"    for i{j} in seq(0, n):\n"
                     f"        {name}: {prec}\n"
                     f"        {name} = 0.1\n"
                     f"        y{j}[i{j}] = {name} * 3.0")
    src = f"def names_{k}_{target}({', '.join(args)}):\n" + "\n".join(nests)
    return src + "\n", outs


def _scalars(p):
    """The types of the scalar allocations inside loops, in order (their
    names may be respelled: the new binding above them makes a later
    nest's 'c' read as 'c_2', the same symbol)."""
    return [m.group(1) for m in re.finditer(
        r"^ {8}\w+: (f32|f64) @ DRAM$", str(p), re.M)]


def test_bind_const_leaves_other_nests_scalars_alone():
    rng = random.Random(5)
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    n = 4
    x = np.float32([1.0, -3.0, 0.25, 7.0])
    for case in range(16):
        src, outs = _source(rng, rng.randint(1, 3))
        p = parse_proc_source(src, scope)
        q = bind_const(p, p.find("0.5"), "c")
        text = str(q)
        assert len(_scalars(p)) == len(outs) - 1
        assert _scalars(q) == _scalars(p), (src, text)
        # the new binding: out of the loops, an f32, the one 0.5 left
        bound = re.findall(r"^    (\w+): f32 @ DRAM\n    \1 = 0\.5$", text,
                           re.M)
        assert len(bound) == 1 and text.count("0.5") == 1, text
        runs = []
        for r in (p, q):
            args = {"n": n, "x": x.copy()}
            for o, dt in outs:
                args[o] = np.zeros(n, dt)
            r.interpret(**args)
            runs.append([args[o].tobytes() for o, _ in outs])
        assert runs[0] == runs[1], src
