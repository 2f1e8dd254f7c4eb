"""Random procedures of look-alike nests: a stdlib helper pointed at one nest
(``'i #k'`` or a cursor) transforms that nest and no other (audit 13b).

Each procedure is two to four nests sharing their loop names (``i`` over
``j``, or ``j`` alone), each writing a buffer of its own, some after a loop-invariant
``z[0] = 1.0`` (which ``vectorize``'s literal binding hoists), all at the
top, in a loop, or split between the branches of an ``if``. A helper is
applied to a random nest, by pattern or by cursor; when it is accepted,
every other nest prints as before, the named one does not, and the result
computes what the procedure does (interpreted; a sample compiled too),
and its C can be generated (no loop left staged in vector memory).
The helpers fixed by this audit (``vectorize`` binding a literal,
``tile`` given a ``j`` of another nest, ``vectorize_reduction``
selecting outside its loop) each failed here before their fix."""
from __future__ import annotations

import random
import time

from exo_hl import SchedulingError
from exo_hl.hw_libs.avx2 import AVX2, INSTRS
from exo_hl.stdlib import (parallel_outer, tile, unroll_and_jam, vectorize,
                           vectorize_reduction)
from source_modules import load_source

_KINDS = {
    # name: (the statement inside the nest, its depth: `for i: for j:`
    # or `for j:` alone)
    "scale": ("o{k}[i, j] = x[i, j] * 2.0", 2),
    "add": ("o{k}[i, j] = x[i, j] + x[j, i]", 2),
    "sum": ("s{k}[i] += x[i, j] * x[i, j]", 2),
    "transpose": ("o{k}[i, j] = x[j, i]", 2),
    "dot": ("s{k}[0] += x[0, j] * x[1, j]", 1),
    "row": ("o{k}[0, j] = x[1, j] * 2.0", 1),
    "lanes": ("o{k}[i, j] = x[i, j] + x[i + 1, j]", 2),
    "row2": ("o{k}[0, j] = x[1, j] + x[2, j]", 1),
}


def _source(rng, n_nests):
    """The text of a random procedure ``f`` and its nests' kinds."""
    kinds = [rng.choice(sorted(_KINDS)) for _ in range(n_nests)]
    wrap = rng.choice(["top", "loop", "if"])
    args = ["n: size", "x: f32[16, 16]", "z: f32[1]"]
    nests = []
    for k, kind in enumerate(kinds):
        stmt, depth = _KINDS[kind]
        args.append(f"s{k}: f32[16]" if stmt.startswith("s") else
                    f"o{k}: f32[16, 16]")
        pre = ["z[0] = 1.0"] if rng.random() < 0.4 else []
        loops = ["for i in seq(0, 8):"] if depth == 2 else []
        # j runs 8 times, or n times (a tail for cut and mask)
        hi = rng.choice(["8", "n"])
        loops.append("    " * (depth - 1) + f"for j in seq(0, {hi}):")
        nests.append(pre + loops + ["    " * depth + stmt.format(k=k)])
    body = ["assert n <= 16"]
    if wrap == "if":
        cut = rng.randint(1, n_nests - 1) if n_nests > 1 else 1
        body.append("if n > 4:")
        body += ["    " + ln for nest in nests[:cut] for ln in nest]
        body.append("else:")
        body += ["    " + ln for nest in nests[cut:] for ln in nest] or \
            ["    z[0] = 1.0"]
    elif wrap == "loop":
        body.append("for r in seq(0, 2):")
        body += ["    " + ln for nest in nests for ln in nest]
    else:
        body += [ln for nest in nests for ln in nest]
    text = ("from __future__ import annotations\n"
            "from exo_hl import f32, proc, seq, size\n\n\n@proc\n"
            f"def f({', '.join(args)}):\n"
            + "".join(f"    {ln}\n" for ln in body))
    return text, kinds


def _load(tmp_path, text, n):
    mod = load_source(tmp_path, f"fuzz_nests_{n}", text)
    return mod.f


def _nest_texts(p, kinds):
    """The text of each nest (the outermost loop around each nest's
    write), None for a nest whose write is no longer that deep."""
    out = []
    for k, kind in enumerate(kinds):
        stmt, depth = _KINDS[kind]
        try:
            c = p.find(stmt.format(k=k).split("]")[0] + "] " +
                       ("+= _" if "+=" in stmt else "= _"))
            for _ in range(depth):
                c = c.parent()
            out.append(c.text())
        except SchedulingError:     # now a call, or not as deep
            out.append(None)
    return out


def _helper(rng, p, kinds, t):
    """(description, call) of a random helper on nest ``t`` of ``p``."""
    by_cursor = rng.random() < 0.5
    # every nest has one j loop; the 2-deep ones an i loop too
    k_of = {"j": t, "i": sum(_KINDS[kd][1] == 2 for kd in kinds[:t])}

    def loop(name):
        pat = f"{name} #{k_of[name]}"
        return p.find_loop(pat) if by_cursor else pat
    how = rng.choice(["tile", "unroll_and_jam", "parallel_outer",
                      "vectorize", "vectorize_reduction"])
    if _KINDS[kinds[t]][1] == 1 and how in ("tile", "unroll_and_jam"):
        how = "vectorize"
    if how == "tile":
        j = loop("j") if rng.random() < 0.7 else "j"     # 'j': inside i
        return how, lambda: tile(p, loop("i"), j, 4, 4, tail="perfect")
    if how == "unroll_and_jam":
        return how, lambda: unroll_and_jam(p, loop("i"), 2)
    if how == "parallel_outer":
        return how, lambda: parallel_outer(p, loop("j"))
    if how == "vectorize":
        tail = rng.choice(["perfect", "cut", "mask"])
        return f"vectorize({tail})", lambda: vectorize(
            p, loop("j"), 8, AVX2, INSTRS, tail=tail)
    return how, lambda: vectorize_reduction(p, loop("j"), 8, AVX2, INSTRS)


def test_helpers_transform_the_named_nest_only(tmp_path, equiv):
    rng = random.Random(1313)
    t0 = time.time()
    tried = accepted = compiled = 0
    by_helper = {}
    while time.time() - t0 < 18 and tried < 250:
        n_nests = rng.randint(2, 4)
        text, kinds = _source(rng, n_nests)
        p = _load(tmp_path, text, tried)
        t = rng.randrange(n_nests)
        how, call = _helper(rng, p, kinds, t)
        tried += 1
        try:
            q = call()
        except SchedulingError:
            continue
        accepted += 1
        by_helper[how] = by_helper.get(how, 0) + 1
        before, after = _nest_texts(p, kinds), _nest_texts(q, kinds)
        where = f"{how} on nest {t} of\n{text}\ngave\n{q}"
        for k in range(n_nests):
            if k != t:
                assert after[k] == before[k], f"nest {k} changed: {where}"
        assert after[t] != before[t], f"nest {t} unchanged: {where}"
        q.c_code_str()      # vector memory left unselected: MemGenError
        compile_it = compiled < 4 and rng.random() < 0.3
        compiled += compile_it
        equiv(p, q, [{"n": 3}, {"n": 13}, {"n": 16}], compiled=compile_it)
    print(f"stdlib target fuzz: {tried} tried, {accepted} accepted, "
          f"{compiled} compiled; accepted by helper: {by_helper}")
    assert accepted >= 15
