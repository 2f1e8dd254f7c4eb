"""Random ``replace`` problems: a sub-procedure and a caller block that is an
instance of its body, bound to random windows, points and control values,
then often mutated (an index off by one, a doubled stride, a transposed
window, another buffer, another constant, operator or bound). Whatever
``replace`` accepts must compute what the block did (interpreted; a sample
compiled too; ``EXO_HL_REPLACE_FUZZ_SEED`` / ``_S`` for other seeds and
longer runs): unification may find arguments the generator did not use
(the solver's own reading of a mutated block), never wrong ones.

The class this guards: arguments inferred by unification (window offsets,
slice dimensions, control values, scalars) that make the call's body
differ from the block; ``replace`` is a full equivalence only if they
are exact."""
from __future__ import annotations

import copy
import os
import random
import re
import time

from exo_hl import SchedulingError
from source_modules import load_source

# Templates: (parameters, body lines). An access is written ``{P:e0|e1}``:
# parameter P at callee index expressions e0, e1 (in i, j and the control
# parameters); the caller's text binds each to a buffer of its own.
_TEMPLATES = {
    "scale": ("dst: [f32][4], src: [f32][4]",
              ["for i in seq(0, 4):",
               "    {dst:i} = {src:i} * 2.0"]),
    "fma": ("dst: [f32][4], src: [f32][4], src2: [f32][4]",
            ["for i in seq(0, 4):",
             "    {dst:i} += {src:i} * {src2:i}"]),
    "rev": ("dst: [f32][4], src: [f32][4]",
            ["for i in seq(0, 4):",
             "    {dst:i} = {src:3 - i}"]),
    "outer": ("dst: [f32][2, 4], src: [f32][2, 4], src2: [f32][4]",
              ["for i in seq(0, 2):",
               "    for j in seq(0, 4):",
               "        {dst:i|j} += {src:i|j} * {src2:j}"]),
    "scalar": ("a: f32, dst: [f32][4], src: [f32][4]",
               ["for i in seq(0, 4):",
                "    {dst:i} = {src:i} * a"]),
    "sized": ("m: size, dst: [f32][m], src: [f32][m]",
              ["assert m <= 4",
               "for i in seq(0, m):",
               "    {dst:i} = {src:i} + {src:i}"]),
    "lane": ("k: index, dst: [f32][4], src: [f32][8]",
             ["assert k >= 0 and k < 4",
              "for i in seq(0, 4):",
              "    {dst:i} = {src:i + k}"]),
    "guard": ("k: index, dst: [f32][4], src: [f32][4]",
              ["for i in seq(0, 4):",
               "    if i < k:",
               "        {dst:i} = {src:i}"]),
    "two": ("dst: [f32][4], src: [f32][4]",
            ["for i in seq(0, 4):",
             "    {dst:i} = {src:i} + {src:i + 0}",
             "for i in seq(0, 4):",
             "    {dst:i} += {src:3 - i}"]),
}

# the caller: X, Y 8 x 16, Z 16 (each access of a parameter is bound to one)
_BUFS = {"X": 2, "Y": 2, "Z": 1}
_EXT = {("X", 0): 8, ("X", 1): 16, ("Y", 0): 8, ("Y", 1): 16, ("Z", 0): 16}
# offsets of a slice / points of a dimension, in the caller's r (0..3),
# c (0..1), as (text, max value)
_OFFS = {8: [("0", 0), ("r", 3), ("c + 1", 2), ("4", 4)],
         16: [("0", 0), ("4 * c", 4), ("r", 3), ("8", 8), ("4 * c + 1", 5),
              ("12", 12)]}
_PTS = {8: ["r", "c", "r + 1", "7", "2 * c"],
        16: ["r", "c", "4 * c + 3", "15"]}


def _param_ranks(params):
    return {m.group(1): m.group(2).count(",") + 1
            for m in re.finditer(r"(\w+): \[f32\]\[([^]]*)\]", params)}


def _accesses(lines):
    return [(m.group(1), m.group(2).split("|"))
            for ln in lines for m in re.finditer(r"\{(\w+):([^}]*)\}", ln)]


def _fill(lines, fmt):
    """``lines`` with the n-th access replaced by ``fmt(n, param, idx)``."""
    out, n = [], [0]

    def sub(m):
        s = fmt(n[0], m.group(1), m.group(2).split("|"))
        n[0] += 1
        return s
    for ln in lines:
        out.append(re.sub(r"\{(\w+):([^}]*)\}", sub, ln))
    return out


def _binding(rng, rank):
    """A caller buffer and, per caller dimension, ('slice', callee dim,
    offset) or ('point', expr) for a parameter of ``rank`` dimensions."""
    buf = rng.choice([b for b, r in _BUFS.items() if r >= rank])
    rb = _BUFS[buf]
    dims = sorted(rng.sample(range(rb), rank))
    spec = []
    for d in range(rb):
        ext = _EXT[(buf, d)]
        if d in dims:
            spec.append(["slice", dims.index(d), rng.choice(_OFFS[ext])[0]])
        else:
            spec.append(["point", rng.choice(_PTS[ext])])
    return buf, spec


def _mutate(rng, bindings):
    """Mutate one binding in place (a description), or a textual change
    (returned as ('text', old, new))."""
    kind = rng.choice(["off", "coef", "point", "buf", "transpose", "const",
                       "op", "bound", "one", "one", "none"])
    p = rng.choice(sorted(bindings))
    buf, spec = bindings[p]
    if kind == "off":
        d = rng.randrange(len(spec))
        if spec[d][0] == "slice":
            spec[d][2] = f"{spec[d][2]} + 1"
        else:
            spec[d][1] = f"{spec[d][1]} + 1"
    elif kind == "coef":
        for s in spec:
            if s[0] == "slice":
                s.append("2")       # callee index doubled
                break
    elif kind == "point":
        for s in spec:
            if s[0] == "point":
                s[1] = rng.choice(["r", "c", "0", "r + c"])
                break
    elif kind == "buf":
        others = [b for b, r in _BUFS.items() if r == len(spec) and b != buf]
        if others:
            bindings[p] = (rng.choice(others), spec)
    elif kind == "transpose":
        sl = [s for s in spec if s[0] == "slice"]
        if len(sl) == 2:
            sl[0][1], sl[1][1] = sl[1][1], sl[0][1]
    elif kind == "const":
        return kind, ("2.0", "3.0")
    elif kind == "op":
        return kind, rng.choice([("+=", "="), (" * ", " + "),
                                 ("3 - (ii)", "(ii)")])
    elif kind == "bound":
        return kind, ("seq(0, 4)", "seq(0, 3)")
    return kind, None


def _caller_access(bindings, param, idx, nudge=False):
    """The caller's access for ``param[idx]``; ``nudge``: this one access
    (not the parameter's others) one further along its first dimension."""
    if param not in bindings:      # a scalar or control parameter
        return param
    buf, spec = bindings[param]
    es = []
    if nudge:
        spec = [list(s) for s in spec]
        spec[0][-1 if spec[0][0] == "point" else 2] += " + 1"
    for s in spec:
        if s[0] == "point":
            es.append(s[1])
            continue
        e = idx[s[1]]
        if len(s) > 3:
            e = f"2 * ({e})"
        es.append(f"{s[2]} + ({e})")
    return f"{buf}[{', '.join(es)}]"


def _words(ln, subst):
    for v, val in subst.items():
        ln = re.sub(rf"\b{v}\b", val, ln)
    return ln


def _source(rng):
    name = rng.choice(sorted(_TEMPLATES))
    params, body = _TEMPLATES[name]
    bindings = {p: _binding(rng, r) for p, r in _param_ranks(params).items()}
    subst = {"i": "ii", "j": "jj"}
    if "m: size" in params:
        subst["m"] = rng.choice(["4", "3", "n"])
    if "k: index" in params:
        subst["k"] = "(" + rng.choice(["0", "1", "c", "r"]) + ")"
    if "a: f32" in params:
        subst["a"] = "s"

    plain = copy.deepcopy(bindings)
    kind, text = ("none", None)
    if rng.random() < 0.7:
        kind, text = _mutate(rng, bindings)
    callee = _fill(body, lambda n, p, idx: f"{p}[{', '.join(idx)}]")
    nudge = rng.randrange(len(_accesses(body))) if kind == "one" else -1
    caller = _fill([ln for ln in body if not ln.startswith("assert")],
                   lambda n, p, idx: _caller_access(bindings, p, idx,
                                                    n == nudge))
    out = [_words(ln, subst) for ln in caller]
    if text is not None:
        old, new = text
        hit = [k for k, ln in enumerate(out) if old in ln]
        if hit:
            k = rng.choice(hit)
            out[k] = out[k].replace(old, new, 1)
    unmutated = [_words(ln, subst) for ln in _fill(
        [ln for ln in body if not ln.startswith("assert")],
        lambda n, p, idx: _caller_access(plain, p, idx))]
    if unmutated == out:
        kind = "none"
    src = ["from __future__ import annotations",
           "from exo_hl import f32, index, proc, seq, size", "", "",
           "@proc", f"def g({params}):"]
    src += ["    " + ln for ln in callee]
    src += ["", "", "@proc",
            "def f(n: size, X: f32[8, 16], Y: f32[8, 16], Z: f32[16], "
            "s: f32):",
            "    assert n <= 4",
            "    for r in seq(0, 4):",
            "        for c in seq(0, 2):"]
    src += ["            " + ln for ln in out]
    return "\n".join(src) + "\n", f"{name}/{kind}"


def _load(tmp_path, text, n):
    mod = load_source(tmp_path, f"fuzz_replace_{n}", text)
    return mod.f, mod.g


def test_replace_accepts_only_exact_arguments(tmp_path, equiv):
    seed = int(os.environ.get("EXO_HL_REPLACE_FUZZ_SEED", 1414))
    budget = float(os.environ.get("EXO_HL_REPLACE_FUZZ_S", 20))
    rng = random.Random(seed)
    t0 = time.time()
    tried = accepted = compiled = invalid = 0
    kinds = {}
    while time.time() - t0 < budget and (tried < 400 or budget > 20):
        text, kind = _source(rng)
        tried += 1
        try:
            f, g = _load(tmp_path, text, tried)
        except Exception:          # the mutated caller is not valid
            invalid += 1
            continue
        body = f.find_loop("c").body()
        try:
            q = f.replace(body, g)
        except SchedulingError:
            continue
        accepted += 1
        kinds[kind] = kinds.get(kind, 0) + 1
        compile_it = compiled < 5 and rng.random() < 0.2
        compiled += compile_it
        try:
            equiv(f, q, [{"n": 1}, {"n": 3}, {"n": 4}], seed=tried,
                  compiled=compile_it)
        except AssertionError as e:
            raise AssertionError(f"replace gave a different procedure "
                                 f"({kind}):\n{text}\n{q}\n{e}") from None
    print(f"replace fuzz: {tried} tried, {invalid} invalid callers, "
          f"{accepted} accepted ({kinds}), {compiled} compiled")
    assert accepted >= 40
