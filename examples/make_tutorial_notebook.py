"""Write ``examples/tutorial.ipynb``: the SGEMM tutorial as a notebook.

    python examples/make_tutorial_notebook.py

    python examples/make_tutorial_notebook.py --execute   # with outputs

The notebook is generated so that its sources stay reviewable as text; the
committed one is written with ``--execute``: run in a fresh kernel, its
outputs stored, so that it reads on GitHub without running it.
``tests/test_notebook.py`` re-executes it and checks that the stored
outputs are current (timings normalized). Each scheduling step displays
the new procedure (highlighted) and what changed since the previous one;
the last cells check the kernel against numpy and time it side by side
with the naive loop nest and numpy's BLAS.
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


def step(cell_id, calls, timed=False):
    """A scheduling step: the new procedure and its diff from the last
    (and, ``timed``, the measured speed of its compiled C)."""
    lines = calls.strip("\n").splitlines()
    body = "\n".join([f"q = {lines[0]}"] + [f"q = {ln}" for ln in lines[1:]])
    speed = "\nprint(speed(q))" if timed else ""
    return code(cell_id, f"""
{body}
display(q, p.diff(q)){speed}
p = q
""")


CELLS = [
    md("intro", """
# From a naive SGEMM to a kernel of vector instructions

This notebook is the documentation's tutorial (`docs/tutorial.md`) as a
notebook: it schedules the SGEMM of `apps/sgemm_quickstart` one checked
rewrite at a time, to an 8 x (2 registers) tile of AVX-512 broadcast-FMAs
selected from the shipped library (the same steps as
`apps/sgemm_quickstart/schedule.py`). After every step it shows the new
procedure and what changed; it times the naive loop nest and the final
kernel, checks the kernel against numpy and compares it with numpy's BLAS.

The stored outputs were produced on a 2-core Intel Xeon with AVX-512
shared with other jobs: the GFLOP/s figures are from that machine (rerun
the notebook to measure yours; on a CPU without AVX-512 the kernel runs
through exo_hl's emulation layer, correct but slow).
"""),
    md("algorithm-md", """
## The algorithm

A procedure is a typed loop nest; `assert`s at the top are preconditions.
exo_hl reads the function's source, so annotations must stay unevaluated:
`from __future__ import annotations`.
"""),
    code("algorithm", """
from __future__ import annotations

import os
import time

import numpy as np
from IPython.display import display

from exo_hl import DRAM, SchedulingError, f32, proc, seq, size
from exo_hl.codegen_c.host_cpu import host_features
from exo_hl.hw_libs import avx512
from exo_hl.stdlib import replace_all

# without AVX-512 the compiled kernel runs on the emulation layer
EMULATE = not host_features({"avx512f"})


@proc
def sgemm(M: size, N: size, K: size, A: f32[M, K] @ DRAM,
          B: f32[K, N] @ DRAM, C: f32[M, N] @ DRAM):
    assert M % 8 == 0
    assert N % 32 == 0
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


def gflops(fn, n, reps=3):
    # best-of-reps GFLOP/s of fn (an SGEMM), M = N = K = n
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
    rate = gflops(q.compile(emulate=EMULATE), n)
    return f"{q.name()}: {rate:.2f} GFLOP/s (M = N = K = {n})"


p = sgemm
display(p)
print(speed(p))
"""),
    md("split-md", """
## 1. Tiles of 8 x 32

`split` with `tail='perfect'` must *prove* that the factor divides the trip
count; the precondition `M % 8 == 0` makes it so.
"""),
    step("split-i", "p.split('i', 8, 'io', 'ii', tail='perfect')"),
    md("error-md", """
A request that cannot be proven is refused with a `SchedulingError` that
names the statement, the check that failed and your call. Nothing says `K`
is a multiple of 8:
"""),
    code("error", """
p.split('k', 8, 'ko', 'ki', tail='perfect')
""", tags=["raises-exception"]),
    md("split-j-md", """
`N % 32 == 0` is asserted too, so `j` splits by 32, and each 32 into two
registers of 16 lanes:
"""),
    step("split-j", """
p.split('j', 32, 'jo', 'jm', tail='perfect')
q.split('jm', 16, 'jm', 'ji', tail='perfect')
"""),
    md("reorder-md", """
## 2. Tiles outside, the reduction around the tile

`reorder` swaps two directly nested loops once it has checked that their
iterations commute. Four swaps give the order `io, jo, k, ii, jm, ji`.
"""),
    step("reorder", """
p.reorder('ii', 'jo')
q.reorder('ji', 'k').reorder('jm', 'k').reorder('ii', 'k')
"""),
    md("stage-md", """
## 3. Keep the tiles in vector registers

`stage_mem` loads the 8 x 32 window of `C` into `C_reg` before the `k`
loop and stores it back after; `divide_dim` cuts its 32 columns into
2 x 16 and `set_memory` puts it in the AVX-512 library's registers. The
row of `B` that each step of `k` reads goes into two registers the same
way.
"""),
    step("stage-c", """
p.stage_mem(p.find_loop('k'), 'C[8*io:8*io+8, 32*jo:32*jo+32]', 'C_reg')
q.divide_dim('C_reg', 1, 16).set_memory('C_reg', avx512.AVX512)
"""),
    step("stage-b", """
p.stage_mem(p.find_loop('ii'), 'B[k, 32*jo:32*jo+32]', 'B_reg')
q.divide_dim('B_reg', 0, 16).set_memory('B_reg', avx512.AVX512)
"""),
    md("select-md", """
## 4. Select the instructions

Registers are touched only by the library's instructions. Each instruction
is a procedure whose body is its exact meaning; `replace` swaps a loop for
a call after proving the loop does what the body does, and
`stdlib.replace_all` tries every instruction of the library on every loop.
The copies into and out of registers first go one register at a time.
"""),
    step("select", """
p.split('i1', 16, 'i1o', 'i1i', tail='perfect')
q.split('i2', 16, 'i2o', 'i2i', tail='perfect')
q.split('i1', 16, 'i1o', 'i1i', tail='perfect')
replace_all(q, avx512.INSTRS)
"""),
    md("unroll-md", """
Finally the loops over registers are unrolled, so that every register index
is a constant and the C compiler keeps the 16 accumulators in registers:
"""),
    step("unroll", """
p.unroll('jm').unroll('ii').unroll('i2o')
q.rename('sgemm_8x2v')
""", timed=True),
    code("history", """
print(p.history())
"""),
    md("check-md", """
## 5. Check and time it

The interpreter and the compiled C both agree with numpy (small integers
keep every reordered sum exact). Then the naive procedure, the kernel and
numpy's BLAS are timed side by side at M = N = K = 512.
"""),
    code("check", """
rng = np.random.default_rng(0)
A1 = rng.integers(-3, 4, (32, 16)).astype(np.float32)
B1 = rng.integers(-3, 4, (16, 64)).astype(np.float32)
C1 = rng.integers(-3, 4, (32, 64)).astype(np.float32)
want = C1 + A1 @ B1
fast = p.compile(emulate=EMULATE)
for name, run in (("interpret", p.interpret), ("compiled C", fast)):
    got = C1.copy()
    run(M=32, N=64, K=16, A=A1, B=B1, C=got)
    assert np.array_equal(got, want), name
    print(f"{name:>10}: equal to numpy")
"""),
    code("time", """
def numpy_sgemm(M, N, K, A, B, C):
    C += A @ B


n = 512
results = {"naive": gflops(sgemm.compile(), n, reps=1),
           "sgemm_8x2v": gflops(fast, n),
           "numpy": gflops(numpy_sgemm, n)}
for name, rate in results.items():
    print(f"{name:<11} {rate:7.2f} GFLOP/s   (M = N = K = {n})")
print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
"""),
    md("next-md", """
Next: `apps/sgemm_quickstart/run.py` times this kernel against the core's
FMA peak (about two thirds of it on the machine above), and `apps/sgemm`
is the full kernel (packing, any size, threads) at BLAS speed. The
documentation's reference pages list every instruction of the AVX2 and
AVX-512 libraries.
"""),
]


def build() -> nbformat.NotebookNode:
    nb = new_notebook(cells=CELLS)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def execute(nb, timeout=600) -> nbformat.NotebookNode:
    """``nb`` run top to bottom in a fresh kernel, outputs stored."""
    import nbclient
    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": HERE}})
    client.execute()
    return nb


def main(argv=None) -> int:
    """``[OUT] [--execute]``: write the notebook (sources only), or with
    ``--execute`` run it and store its outputs (what is committed)."""
    args = list(sys.argv[1:] if argv is None else argv)
    run = "--execute" in args
    args = [a for a in args if a != "--execute"]
    nb = build()
    if run:
        nb = execute(nb)
    nbformat.validate(nb)
    out = (args or [OUT])[0]
    nbformat.write(nb, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
