"""Commutes of two blocks proven at once (``checks._commute_apart``, one
query per buffer for the four conditions, terms renamed per side): the
fast path must give the verdicts and reasons of the checks one by one,
and must still refuse blocks that conflict through one statement deep
inside a loop nest."""
from __future__ import annotations

import pytest

from exo_hl import DRAM, config, f32, index, proc, seq, size
from exo_hl.caches import clear_all
from exo_hl.effects import api, checks, smt


@config
class Deep:
    k: index


@proc
def blocks(N: size, x: f32[64] @ DRAM, y: f32[64] @ DRAM,
           z: f32[64] @ DRAM, w: f32[64] @ DRAM):
    assert N >= 1
    for i in seq(0, 8):                             # 0: writes y[0..16)
        y[i] = x[i]
        y[i + 8] = x[i + 8]
    for i in seq(0, 8):                             # 1: reads y[16..48)
        z[i] = y[i + 16] + y[i + 24]
        z[i + 8] = y[i + 32] + y[i + 40]
    for i in seq(0, 8):                             # 2: like 0, and deep
        y[i] = x[i]                                 # inside writes y[40+i]
        y[i + 8] = x[i + 8]
        for j in seq(0, 4):
            for t in seq(0, 2):
                if j == 3 and t == 1:
                    y[40 + i] = 1.0
    for i in seq(0, 8):                             # 3: like 0, and deep
        y[i] = x[i]                                 # inside writes y[48+i]
        y[i + 8] = x[i + 8]
        for j in seq(0, 4):
            for t in seq(0, 2):
                if j == 3 and t == 1:
                    y[48 + i] = 1.0
    for i in seq(0, 8):                             # 4: reductions of w,
        w[i] += y[i + 16]                           # writes z[0..16)
        w[i + 8] += y[i + 24]
        w[i + 16] += x[i]
        z[i] = x[i]
        z[i + 8] = x[i + 8]
    for i in seq(0, 8):                             # 5: reductions of w,
        w[i] += x[i + 8]                            # deep inside one read
        w[i + 8] += x[i]                            # of w, writes of z
        w[i + 16] += x[i + 16]
        z[i + 48] = x[i]
        z[i + 56] = x[i + 8]
        for j in seq(0, 2):
            if j == 1:
                z[i + 32] = w[i + 16]
    for i in seq(0, 8):                             # 6: reductions of w,
        w[i] += z[i + 16]                           # reads z[16..48)
        w[i + 8] += z[i + 24]
        w[i + 16] += z[i + 32] + z[i + 40]
    Deep.k = 3                                      # 7: config write
    for i in seq(0, 8):                             # 8: reads the config
        z[i] = y[i + 16] + y[i + 24]                # deep inside
        for j in seq(0, 2):
            if j == 1:
                z[i + 8] = y[i + Deep.k + 32]


# (a, b, commutes): body[a] then body[b]
CASES = [
    (0, 1, True),      # y[0..16) written, y[16..48) read
    (2, 1, False),     # the deep write y[40+i] meets the read y[i+40]
    (1, 2, False),
    (3, 1, True),      # the deep write y[48+i] is past every read
    (4, 6, True),      # reductions of one location commute
    (6, 4, True),
    (5, 4, False),     # the deep read of w[i+16] meets a reduction of it
    (4, 5, False),
    (7, 8, False),     # config written, read deep inside
    (8, 7, False),
]


def _verdicts(apart_min, monkeypatch, spy=None):
    monkeypatch.setattr(checks, "APART_MIN_PAIRS", apart_min)
    clear_all()
    st = smt.solver().stats
    st.reset()
    ir = blocks.ir()
    b = ir.body
    out = []
    for i, j, _ in CASES:
        r = api.commutes(b[i], b[j], api.context(ir, (min(i, j), )))
        out.append((bool(r), r.reason))
    return out, st.queries


def test_fast_path_keeps_verdicts_and_reasons(monkeypatch):
    took = []
    real = checks._commute_apart

    def spy(*args):
        took.append(real(*args))
        return took[-1]
    monkeypatch.setattr(checks, "_commute_apart", spy)
    fast, q_fast = _verdicts(checks.APART_MIN_PAIRS, monkeypatch)
    one_by_one, q_slow = _verdicts(10 ** 9, monkeypatch)
    assert [ok for ok, _ in fast] == [ok for _, _, ok in CASES]
    assert fast == one_by_one
    # the fast path proved each commuting case (each has enough pairs to
    # take it) and refused the others, whose reasons are the checks' one
    # by one
    assert took[:len(CASES)] == [ok for _, _, ok in CASES]
    assert q_fast < q_slow
    reasons = dict(((i, j), r) for (i, j, _), (_, r) in zip(CASES, fast))
    assert "y[(40 + i)]" in reasons[2, 1] or "y[(i + 40)]" in reasons[2, 1]
    assert "w[" in reasons[5, 4]
    assert "Deep" in reasons[7, 8] or "k" in reasons[7, 8]


@pytest.mark.parametrize("deep", [40, 47, 48])
def test_one_deep_conflict_is_found(deep):
    """Single shifts of the deep write around the edge of the read range
    y[16..48): inside at 40 and 47 (i = 0), apart from 48 on."""
    @proc
    def shifted(x: f32[64] @ DRAM, y: f32[72] @ DRAM, z: f32[64] @ DRAM):
        for i in seq(0, 8):
            y[i] = x[i]
            y[i + 8] = x[i + 8]
            for j in seq(0, 4):
                if j == 3:
                    y[i + deep] = 1.0
        for i in seq(0, 8):
            z[i] = y[i + 16] + y[i + 24]
            z[i + 8] = y[i + 32] + y[i + 40]
    clear_all()
    ir = shifted.ir()
    r = api.commutes(ir.body[0], ir.body[1], api.context(ir, (0, )))
    assert bool(r) == (deep >= 48), r.reason


# ---------------------------------------------------------------------------
# generated pairs of blocks: windows of one buffer, reductions and
# assignments, config writes (direct and by a callee), calls


_GEN_HEADER = '''from __future__ import annotations
from exo_hl import *


@config
class GC:
    k: index


@proc
def g_red(n: size, a: [f32][n], b: [f32][n]):
    for t in seq(0, n):
        a[t] += b[t]


@proc
def g_set(v: index):
    GC.k = v
'''


def _gen_block(r, bufs):
    """Source lines of a random block (top-level lines are statements)."""
    B = r.choice(bufs)

    def idx(v):
        c = r.choice([0, 1, 2, 3, 4])
        return r.choice([f"{v} + {c}", f"{c} + {v}", f"2 * {v} + {c % 4}",
                         f"{v} / 2 + {c}", f"({v} + {c}) / 2", f"{c}",
                         f"GC.k + {v}"])
    kind = r.choice(["loop", "loop", "win", "call", "cfg", "red", "asg"])
    if kind == "loop":
        v = r.choice(["i", "j"])
        out = [f"for {v} in seq(0, {r.choice([2, 3, 4])}):"]
        for _ in range(r.choice([1, 2])):
            out.append(f"    {B}[{idx(v)}] {r.choice(['=', '+='])} "
                       f"{r.choice(bufs)}[{idx(v)}] * 2.0")
        if r.random() < 0.3:
            out += [f"    if {v} == 1:", f"        {r.choice(bufs)}[{idx(v)}] = 1.0"]
        return out
    if kind == "win":
        lo = r.choice([0, 1, 2, 4])
        return [f"w = {B}[{lo}:{lo + 4}]", "for i in seq(0, 4):",
                f"    w[i] {r.choice(['=', '+='])} "
                f"{r.choice(bufs)}[i + {r.choice([0, 3, 6])}]"]
    if kind == "call":
        lo, lo2 = r.choice([0, 1, 2, 4]), r.choice([0, 1, 2, 4])
        return [f"g_red(4, {B}[{lo}:{lo + 4}], "      # (views apart)
                f"{r.choice(bufs)}[{lo2 + 8}:{lo2 + 12}])"]
    if kind == "cfg":
        v = r.choice([0, 1, 2])
        return [r.choice([f"GC.k = {v}", f"g_set({v})"])]
    op = "+=" if kind == "red" else "="
    return [f"{B}[{r.randrange(6)}] {op} {r.choice(bufs)}[{r.randrange(6)}]"
            " + 1.0"]


def _gen_pairs(tmp_path, seed, count):
    """(procedure, number of statements of its first block after the
    leading config write) of ``count`` generated procedures."""
    from source_modules import load_source
    import random
    r = random.Random(seed)
    src, cuts = [_GEN_HEADER], []
    for k in range(count):
        bufs = ["x", "y"] if r.random() < 0.6 else ["x"]
        a, b = _gen_block(r, bufs), _gen_block(r, bufs)
        cuts.append(sum(not line.startswith(" ") for line in a))
        b = [line.replace("w = ", "w2 = ").replace("w[", "w2[")
             for line in b]
        src.append(f"\n\n@proc\ndef g{k}(x: f32[24], y: f32[24]):\n"
                   "    GC.k = 1\n" + "".join(f"    {line}\n"
                                            for line in a + b))
    mod = load_source(tmp_path, f"gen_commutes_{seed}", "".join(src))
    return [(getattr(mod, f"g{k}"), cuts[k]) for k in range(count)]


def test_generated_blocks_fast_path_and_swap(tmp_path, monkeypatch):
    """For generated pairs of blocks: the fast path (tried on every pair)
    and the checks one by one give the same verdict, and when they say
    the blocks commute, the swapped procedure computes the same outputs
    (interpret, random inputs)."""
    import numpy as np
    agree = swapped = 0
    for p, cut in _gen_pairs(tmp_path, 8, 24):
        ir = p.ir()
        a, b = ir.body[1:1 + cut], ir.body[1 + cut:]
        verdicts = []
        for apart_min in (0, 10 ** 9):
            monkeypatch.setattr(checks, "APART_MIN_PAIRS", apart_min)
            clear_all()
            verdicts.append(bool(api.commutes(a, b, api.context(ir, (1, )))))
        assert verdicts[0] == verdicts[1], p
        agree += 1
        if not verdicts[0]:
            continue
        q = p._derive(ir.update(body=ir.body[:1] + b + a), "edit")
        rng = np.random.default_rng(len(ir.body))
        for _ in range(2):
            x0 = rng.integers(-4, 5, 24).astype(np.float32)
            y0 = rng.integers(-4, 5, 24).astype(np.float32)
            outs = []
            for r in (p, q):
                x, y = x0.copy(), y0.copy()
                r.interpret(x=x, y=y)
                outs.append((x, y))
            np.testing.assert_array_equal(outs[0][0], outs[1][0])
            np.testing.assert_array_equal(outs[0][1], outs[1][1])
        swapped += 1
    assert agree == 24 and 5 <= swapped <= 20
