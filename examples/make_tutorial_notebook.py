"""Write ``examples/tutorial.ipynb``: the SGEMM tutorial as a notebook.

    python examples/make_tutorial_notebook.py

The notebook is generated (without outputs) so that it stays reviewable as
text; open it in Jupyter and run all cells. Each scheduling step displays
the new procedure (highlighted), what changed since the previous one, and
the speed of its compiled C; the last cells check the kernel against
numpy and time it on a larger problem.
"""
from __future__ import annotations

import os
import sys

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tutorial.ipynb")


def md(cell_id, text):
    return new_markdown_cell(text.strip("\n"), id=cell_id)


def code(cell_id, text, tags=()):
    c = new_code_cell(text.strip("\n"), id=cell_id)
    if tags:
        c.metadata["tags"] = list(tags)
    return c


def step(cell_id, call, comment=""):
    """A scheduling step: the new procedure, its diff from the last, and
    the measured speed of its compiled C."""
    note = f"  # {comment}" if comment else ""
    return code(cell_id, f"""
q = {call}{note}
display(q, p.diff(q))
print(speed(q))
p = q
""")


CELLS = [
    md("intro", """
# From a naive SGEMM to a register-blocked kernel

This notebook schedules the SGEMM of `apps/sgemm_quickstart` one checked
rewrite at a time (the same steps as `apps/sgemm_quickstart/schedule.py`
and the documentation's tutorial). After every step it shows the new
procedure, what changed, and how fast its compiled C runs on a small
problem; at the end it checks the kernel against numpy and times it on a
larger one.
"""),
    md("algorithm-md", """
## The algorithm

A procedure is a typed loop nest; `assert`s at the top are preconditions.
exo_hl reads the function's source, so annotations must stay unevaluated:
`from __future__ import annotations`.
"""),
    code("algorithm", """
from __future__ import annotations

import time

import numpy as np
from IPython.display import display

from exo_hl import DRAM, DRAM_STATIC, SchedulingError, f32, proc, seq, size


@proc
def sgemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
          B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert M % 4 == 0
    assert N % 16 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def gflops(fn, n, reps=3):
    # best-of-reps GFLOP/s of fn (a compiled SGEMM), M = N = K = n
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n), dtype=np.float32)
    B = rng.standard_normal((n, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn(n, n, n, A, B, C)
        best = min(best, time.perf_counter() - t)
    return 2.0 * n ** 3 / best / 1e9


def speed(q, n=128):
    # one line: the speed of q compiled to C
    return f"{q.name()}: {gflops(q.compile(), n):.2f} GFLOP/s (M = N = K = {n})"


p = sgemm
display(p)
print(speed(p))
"""),
    md("split-md", """
## 1. Tiles of 4 x 16

`split` with `tail='perfect'` must *prove* that the factor divides the trip
count; the preconditions `M % 4 == 0` and `N % 16 == 0` make it so.
"""),
    step("split-i", "p.split('i', 4, 'io', 'ii', tail='perfect')"),
    step("split-j", "p.split('j', 16, 'jo', 'ji', tail='perfect')"),
    md("error-md", """
A request that cannot be proven is refused with a `SchedulingError` that
names the statement, the check that failed and your call. Nothing says `K`
is a multiple of 8:
"""),
    code("error", """
p.split('k', 8, 'ko', 'ki', tail='perfect')
""", tags=["raises-exception"]),
    md("reorder-md", """
## 2. Tiles outside, the reduction around the tile

`reorder` swaps two directly nested loops once it has checked that their
iterations commute. Three swaps give the order `io, jo, k, ii, ji`.
"""),
    step("reorder-1", "p.reorder('ii', 'jo')"),
    step("reorder-2", "p.reorder('ji', 'k')"),
    step("reorder-3", "p.reorder('ii', 'k')"),
    md("stage-md", """
## 3. Keep the tile of C in a local buffer

`stage_mem` loads the 4 x 16 window of `C` into `C_reg` before the `k`
loop and stores it back after; `set_memory` puts it on the C stack.
"""),
    step("stage", "p.stage_mem(p.find_loop('k'), "
                  "'C[4*io:4*io+4, 16*jo:16*jo+16]', 'C_reg')"),
    step("memory", "p.set_memory('C_reg', DRAM_STATIC)"),
    md("unroll-md", """
## 4. Unroll the rows

Four 16-wide updates per `k`. Watch the speed: unrolling does not make this
plain-C kernel faster, and with gcc it can make it slower (the rolled tile
was auto-vectorized; the four unrolled rows may not be). Speed comes from
choosing the vector instructions yourself, next.
"""),
    step("unroll", "p.unroll('ii')"),
    step("rename", "p.rename('sgemm_4x16')"),
    code("history", """
print(p.history())
"""),
    md("check-md", """
## 5. Check and time it

The interpreter and the compiled C both agree with numpy (small integers
keep every reordered sum exact). Then both the naive and the scheduled
procedure are timed on a larger problem.
"""),
    code("check", """
rng = np.random.default_rng(0)
A1 = rng.integers(-3, 4, (32, 16)).astype(np.float32)
B1 = rng.integers(-3, 4, (16, 48)).astype(np.float32)
C1 = rng.integers(-3, 4, (32, 48)).astype(np.float32)
want = C1 + A1 @ B1
fast = p.compile()
for name, run in (("interpret", p.interpret), ("compiled C", fast)):
    got = C1.copy()
    run(M=32, N=48, K=16, A=A1, B=B1, C=got)
    assert np.array_equal(got, want), name
    print(f"{name:>10}: equal to numpy")
"""),
    code("time", """
n = 256
results = {"naive (C)": gflops(sgemm.compile(), n),
           "sgemm_4x16 (C)": gflops(fast, n)}
for name, rate in results.items():
    print(f"{name:<16} {rate:6.2f} GFLOP/s   (M = N = K = {n})")
"""),
    md("next-md", """
Next: select vector instructions explicitly with `replace` from a hardware
library (`exo_hl.hw_libs.avx2`, `exo_hl.hw_libs.avx512`). The
documentation's tutorial (`docs/tutorial.md`) and
`apps/sgemm_quickstart/schedule.py` take this kernel to an 8 x (2
registers) tile of broadcast-FMAs at about two thirds of the core's FMA
peak; `apps/sgemm` is the full kernel (packing, any size, threads).
"""),
]


def build() -> nbformat.NotebookNode:
    nb = new_notebook(cells=CELLS)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def main(argv=None) -> int:
    nb = build()
    nbformat.validate(nb)
    out = (argv or sys.argv[1:] or [OUT])[0]
    nbformat.write(nb, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
