"""Scaling benchmark: cost of scheduling operations as a procedure grows.

A dot product ``for k in seq(0, K): C[0] += A[k] * B[k]`` (and a variant
accumulating into a local ``acc``) is fully unrolled into K statements, for
K in {250, 500, 1000, 2000, 4000}. Timed on each size:

  unroll         the unroll itself (K statements out of one loop)
  reorder_stmts  swap two statements near the start
  bind_expr      name ``A[r] * B[r]`` of one statement
  set_memory     move the local ``acc`` (K statements use it) to another
                 memory
  simplify, str, c_code_str, compile()   whole-procedure operations
                 (compile() with an empty build cache: gcc really runs)

One-statement rewrites are given ready-made cursors (finding a statement by
pattern scans the whole procedure by nature and is not what is measured),
and are repeated 61 times (they take about a millisecond). Every
operation is repeated with the sizes taking turns (so that a change of
load on a shared machine affects all sizes alike). Each
repetition works on a different statement or memory so that no repetition
can be answered by a cache of an earlier identical result; the unroll
repetitions forget the memo of proven procedures first. The last
line of each table gives the growth exponent log(t2/t1)/log(K2/K1) between
the two largest sizes (1 = linear, 0 = constant). Then each goal is
marked met or missed: a one-statement rewrite takes <= 20 ms at K=2000 with
exponent <= 0.2; unroll, str and c_code_str have exponent <= 1.1; str costs
<= 0.15 ms per statement; compile() of K=4096 statements takes < 3 s (timed
once more at that size).

Times are CPU time of the process and of the C compiler it runs (so that
other load on a shared machine hardly disturbs them); ``--wall`` measures
wall-clock time instead.

Run: python benchmarks/scale_bench.py [--sizes 250,500,...] [--reps N]
     [--rounds R] [--no-compile] [--wall]
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from exo_hl import DRAM, f32, proc, seq, size  # noqa: E402
from exo_hl.cursors import ExprCursor, StmtCursor  # noqa: E402


@proc
def dot(K: size, A: f32[K], B: f32[K], C: f32[1]):
    for k in seq(0, K):
        C[0] += A[k] * B[k]


@proc
def dot_local(K: size, A: f32[K], B: f32[K], C: f32[1]):
    acc: f32
    acc = 0.0
    for k in seq(0, K):
        acc += A[k] * B[k]
    C[0] = acc


#: distinct memories (all plain DRAM underneath) so that every set_memory
#: repetition makes a different procedure
_N1 = 61   # repetitions of each one-statement rewrite
_MEMS = [type(f"BenchMem{i}", (DRAM, ), {}) for i in range(_N1)]


def _forget_results():
    """Drop memo tables of already-proven whole procedures (not the
    structural caches), so each timed unroll really checks its result."""
    from exo_hl import api
    from exo_hl.effects import bounds
    known = getattr(api, "_KNOWN_WELL_FORMED", None)
    if known is not None:
        known.clear()
    proven = getattr(bounds, "_proven", None)
    if proven is not None and hasattr(proven, "cache_clear"):
        proven.cache_clear()


def _cpu():
    """CPU seconds of this process and its finished children (the C
    compiler): unlike wall time, hardly disturbed by other load on the
    machine."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ch.ru_utime + ch.ru_stime


_CLOCK = [_cpu]


def _time(fn):
    gc.collect()
    clock = _CLOCK[0]
    t0 = clock()
    out = fn()
    return clock() - t0, out


def prepare(K):
    """{op: [thunk per repetition]} for size K: the whole-procedure
    operations (``reps`` repetitions of unroll, 3 of the others) and the
    one-statement rewrites (``_N1`` repetitions, each on a different
    statement or to a different memory); and the unrolled procedure."""
    p = dot.partial_eval(K=K)
    pl = dot_local.partial_eval(K=K)
    q = p.unroll(StmtCursor(p, (("body", 0), )))
    ql = pl.unroll(StmtCursor(pl, (("body", 2), )))
    assert len(q.ir().body) == K and len(ql.ir().body) == K + 3

    def unroll():
        _forget_results()
        return p.unroll(StmtCursor(p, (("body", 0), )))
    n = _N1
    cur = [(StmtCursor(q, (("body", r), )), StmtCursor(q, (("body", r + 1), )))
           for r in range(n)]
    ecur = [ExprCursor(q, (("body", r), ), (("rhs", None), ))
            for r in range(n)]
    acur = StmtCursor(ql, (("body", 0), ))
    whole = {"unroll": unroll, "simplify": q.simplify,
             "str": lambda: str(q), "c_code_str": q.c_code_str}
    one = {
        "reorder_stmts": [lambda r=r: q.reorder_stmts(*cur[r])
                          for r in range(n)],
        "bind_expr": [lambda r=r: q.bind_expr(ecur[r], "t")
                      for r in range(n)],
        "set_memory": [lambda r=r: ql.set_memory(acur, _MEMS[r])
                       for r in range(n)],
    }
    return whole, one, q


def interleaved(ops_by_size):
    """Median time of each operation on each size, the sizes taking turns
    at every repetition: a change of the machine's load during the run
    shifts all sizes alike instead of skewing their ratio (which is what
    the growth exponent is)."""
    times = {K: {op: [] for op in ops} for K, ops in ops_by_size.items()}
    reps = max(len(t) for ops in ops_by_size.values() for t in ops.values())
    for r in range(reps):
        for K, ops in ops_by_size.items():
            for op, thunks in ops.items():
                if r < len(thunks):
                    times[K][op].append(_time(thunks[r])[0])
    return {K: {op: statistics.median(ts) for op, ts in by_op.items()}
            for K, by_op in times.items()}


def measure(sizes, reps, do_compile):
    """{K: {operation: median time}} for one sweep."""
    whole, one, procs = {}, {}, {}
    for K in sizes:
        w, one[K], procs[K] = prepare(K)
        whole[K] = {op: [fn] * (reps if op == "unroll" else min(reps, 3))
                    for op, fn in w.items()}
    rows = interleaved(whole)
    for K, row in interleaved(one).items():
        rows[K].update(row)
    if do_compile:
        for K in sizes:
            rows[K]["compile"] = _compile(procs[K])
    for K in sizes:
        print(f"K={K}: " + ", ".join(f"{k} {1e3 * v:.1f}ms"
                                     for k, v in rows[K].items()),
              flush=True)
    return rows


def _compile(q):
    """Time of ``q.compile()`` with a fresh build cache (so that the C
    compiler really runs)."""
    with tempfile.TemporaryDirectory() as d:
        saved = os.environ.get("EXO_HL_CACHE")
        os.environ["EXO_HL_CACHE"] = d
        try:
            return _time(lambda: q.compile())[0]
        finally:
            if saved is None:
                del os.environ["EXO_HL_CACHE"]
            else:
                os.environ["EXO_HL_CACHE"] = saved


def _compile_time(K):
    p = dot.partial_eval(K=K)
    return _compile(p.unroll(StmtCursor(p, (("body", 0), ))))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="250,500,1000,2000,4000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--wall", action="store_true",
                    help="wall-clock time instead of CPU time")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat the whole sweep; keep each cell's smallest "
                    "median (steadier on a busy machine)")
    args = ap.parse_args(argv)
    if args.wall:
        _CLOCK[0] = time.perf_counter
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = {}
    for rnd in range(args.rounds):
        for K, row in measure(sizes, args.reps, not args.no_compile).items():
            old = rows.get(K, row)
            rows[K] = {k: min(v, old[k]) for k, v in row.items()}
    order = ["unroll", "reorder_stmts", "bind_expr", "set_memory",
             "simplify", "str", "c_code_str", "compile"]
    ops = [op for op in order if op in rows[sizes[0]]]
    clock = "wall-clock" if args.wall else "CPU"
    print(f"\nmedian {clock} time (ms) by number of unrolled statements K")
    print(f"  {'operation':14s}" + "".join(f"{K:>10d}" for K in sizes)
          + "   exponent")
    for op in ops:
        line = f"  {op:14s}" + "".join(f"{1e3 * rows[K][op]:10.2f}"
                                       for K in sizes)
        if len(sizes) >= 2:
            k1, k2 = sizes[-2], sizes[-1]
            t1, t2 = rows[k1][op], rows[k2][op]
            expo = math.log(t2 / t1) / math.log(k2 / k1)
            line += f"   {expo:8.2f}"
        print(line)
    if len(sizes) >= 2:
        print(f"\n(exponent between K={sizes[-2]} and K={sizes[-1]})")
        print()
        goals(rows, sizes, not args.no_compile)


def _exponent(rows, op, k1, k2):
    return math.log(rows[k2][op] / rows[k1][op]) / math.log(k2 / k1)


def goals(rows, sizes, do_compile):
    """Print whether each scheduling-cost goal is met."""
    k1, k2 = sizes[-2], sizes[-1]

    def say(ok, text):
        print(f"  [{'met' if ok else 'MISSED'}] {text}")
    print("goals:")
    at = 2000 if 2000 in rows else k1
    for op in ("reorder_stmts", "bind_expr", "set_memory"):
        t, e = rows[at][op], _exponent(rows, op, k1, k2)
        say(t <= 0.020 and e <= 0.2,
            f"{op}: {1e3 * t:.2f} ms at K={at} (<= 20 ms), exponent "
            f"{e:.2f} (<= 0.2)")
    for op in ("unroll", "str", "c_code_str"):
        e = _exponent(rows, op, k1, k2)
        say(e <= 1.1, f"{op}: exponent {e:.2f} (<= 1.1)")
    per = rows[k2]["str"] / k2
    say(per <= 0.15e-3, f"str: {1e3 * per:.3f} ms per statement at K={k2} "
        f"(<= 0.15 ms)")
    if do_compile:
        t = _compile_time(4096)
        say(t < 3.0, f"compile() at K=4096: {t:.2f} s (< 3 s)")


if __name__ == "__main__":
    main()
