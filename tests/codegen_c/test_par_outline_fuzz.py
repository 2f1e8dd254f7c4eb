"""Random ``par`` loops through the C backend's outlining (outline.py,
proc_emit's ``call_outlined``): the compiled C, run on every thread
OpenMP gives, computes what ``interpret()`` does, bit for bit.

The generator (seeded) writes procedures whose par loops (``par`` or
``par_dynamic``) have bounds that may be empty or start past 0 (``n - n``,
``m + 3`` with ``m`` down to -3), bodies with private data scalars,
heap (``DRAM``) and stack (``DRAM_STATIC``) allocations, seq and nested
par loops, calls of a procedure that has its own par loop or takes a
window of a row, and runs of two or three consecutive par loops (one
parallel region with barriers) where a later loop reads rows an earlier
one wrote in other iterations (so a missing barrier shows), sometimes
inside a seq loop. Every procedure is accepted by the checks (race-free
by construction); the outputs are compared exactly.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from source_modules import load_source

W = 8   # row length

HEADER = f'''\
from __future__ import annotations
from exo_hl import (proc, f32, size, index, seq, par, par_dynamic, DRAM,
                    DRAM_STATIC)


@proc
def row_scale(r: [f32][{W}], o: [f32][{W}]):
    for j in seq(0, {W}):
        o[j] = r[j] * 0.5 + 1.0


@proc
def row_par(r: [f32][{W}], o: [f32][{W}]):
    for j in par(0, {W}):
        o[j] = r[j] - 2.0
'''


class _Gen:
    def __init__(self, rng):
        self.rng = rng
        self.tmp = 0

    def bounds(self):
        return self.rng.choice([("0", "n"), ("0", "n"), ("1", "n"),
                                ("n - n", "n"), ("n", "n"), ("m + 3", "n"),
                                ("0", "n - 1"), ("m + 3", "m + 3")])

    def kind(self):
        return self.rng.choice(["par", "par", "par_dynamic"])

    def body(self, src, dst, d):
        """Statements (at indent ``d``) of one iteration ``i``: reads row
        ``i`` of ``src`` (and any row of x), writes row ``i`` of ``dst``."""
        r, ind = self.rng, "    " * d
        self.tmp += 1
        t = f"t{self.tmp}"
        pick = r.randrange(7)
        if src == dst and pick in (4, 5):
            pick = 6        # a call may not take two views of one row
        if pick == 0:           # private scalar reduction
            return [f"{ind}{t}: f32", f"{ind}{t} = 0.0",
                    f"{ind}for j in seq(0, {W}):",
                    f"{ind}    {t} += {src}[i, j] * x[0, j]",
                    f"{ind}for j in seq(0, {W}):",
                    f"{ind}    {dst}[i, j] = {t} + {src}[i, j]"]
        if pick in (1, 2):      # a row buffer on the heap or the stack
            mem = "DRAM" if pick == 1 else "DRAM_STATIC"
            return [f"{ind}{t}: f32[{W}] @ {mem}",
                    f"{ind}for j in seq(0, {W}):",
                    f"{ind}    {t}[j] = {src}[i, {W - 1} - j]",
                    f"{ind}for j in seq(0, {W}):",
                    f"{ind}    {dst}[i, j] = {t}[j] * 3.0 - {src}[i, j]"]
        if pick == 3:           # nested par loop
            return [f"{ind}for j in {self.kind()}(0, {W}):",
                    f"{ind}    {dst}[i, j] = {src}[i, j] + x[n - 1, j]"]
        if pick == 4:
            return [f"{ind}row_scale({src}[i, :], {dst}[i, :])"]
        if pick == 5:
            return [f"{ind}row_par({src}[i, :], {dst}[i, :])"]
        return [f"{ind}for j in seq(0, {W}):",
                f"{ind}    {dst}[i, j] = {src}[i, j] * {src}[i, j]"]

    def run_of_loops(self, d):
        """1-3 consecutive par loops; loop k > 0 reads the rows of the
        buffer loop k-1 wrote, mirrored (other iterations' rows)."""
        ind, out = "    " * d, []
        bufs = ["x", "y", "z", "u"][:self.rng.randint(2, 4)]
        for src, dst in zip(bufs, bufs[1:]):
            lo, hi = self.bounds()
            out.append(f"{ind}for i in {self.kind()}({lo}, {hi}):")
            if src == "x":
                out += self.body(src, dst, d + 1)
            else:       # reads row n-1-i, written by another iteration
                out += [f"{ind}    for j in seq(0, {W}):",
                        f"{ind}        {dst}[i, j] = {src}[n - 1 - i, j] "
                        f"+ {dst}[i, j]"]
                out += self.body(dst, dst, d + 1) if \
                    self.rng.random() < 0.3 else []
        return out

    def proc(self, name):
        lines = [f"@proc",
                 f"def {name}(n: size, m: index, x: f32[n, {W}], "
                 f"y: f32[n, {W}], z: f32[n, {W}], u: f32[n, {W}]):",
                 "    assert m >= -3",
                 "    assert m <= 0"]
        for _ in range(self.rng.randint(1, 2)):
            if self.rng.random() < 0.3:
                lines.append("    for k in seq(0, 2):")
                lines += self.run_of_loops(2)
            else:
                lines += self.run_of_loops(1)
        return "\n".join(lines) + "\n"


def _values(rng, n):
    return [rng.integers(-8, 8, (n, W)).astype(np.float32) / 4
            for _ in range(4)]


@pytest.mark.parametrize("block", range(3))
def test_outlined_par_loops_compute_what_interpret_does(tmp_path, block):
    rng = random.Random(1400 + block)
    gen = _Gen(rng)
    texts = [gen.proc(f"par_fuzz_{block}_{k}") for k in range(8)]
    mod = load_source(tmp_path, f"par_fuzz_{block}",
                      HEADER + "\n\n" + "\n\n".join(texts))
    nrng = np.random.default_rng(block)
    for k, text in enumerate(texts):
        p = getattr(mod, f"par_fuzz_{block}_{k}")
        fast = p.compile()
        for n, m in ((1, 0), (5, -3), (6, -1), (9, 0)):
            want = _values(nrng, n)
            got = [a.copy() for a in want]
            p.interpret(n, m, *want)
            fast(n, m, *got)
            for a, b, nm in zip(want, got, "xyzu"):
                assert np.array_equal(a.view(np.uint32), b.view(np.uint32)), \
                    f"{nm} differs, n={n} m={m}\n{text}"
