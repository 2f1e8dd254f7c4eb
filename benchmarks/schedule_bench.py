"""Scheduling-speed benchmark: how long each primitive takes on gemm-sized
procedures, and a 30-step register-tiling schedule of gemm end to end.

"cold" runs start with every cache cleared (``exo_hl.caches.clear_all``)
and a fresh Procedure object (its result is checked whole, not
incrementally); "warm" runs repeat the identical call so the caches answer. Times are medians over several runs.

Then the whole SGEMM schedule of ``apps/sgemm/schedule.py`` (about 360
checked rewrites), for each instruction set, cold: the CPU time of this
process (``time.process_time``, what matters on a machine shared with
other jobs) and the wall-clock time, the minimum over ``--sgemm-reps``
runs, and the SMT solver calls; then the conv schedule of
``apps/conv/schedule.py`` and the blocked SGEMM with ``par='cols'`` the
same way. ``--profile FILE`` writes the top of a cProfile (CPU time) of
one AVX-512 SGEMM schedule to FILE.

Run: python benchmarks/schedule_bench.py [--reps N] [--sgemm-reps N]
     [--only-sgemm] [--profile FILE]
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the final check multiplies with numpy: its BLAS single-threaded and with
# OPENBLAS_CORETYPE unset, set before exo_hl (which imports numpy) loads
from apps.common.blas_env import configure_blas  # noqa: E402
BLAS_NOTES = configure_blas()

from exo_hl import DRAM_STATIC, f32, proc, seq, size  # noqa: E402
from exo_hl.api import Procedure  # noqa: E402


@proc
def gemm(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
         C: f32[M, N]):
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]


@proc
def row_axpy(n: size, a: [f32][n], b: [f32][n]):
    for t in seq(0, n):
        b[t] += 2.0 * a[t]


@proc
def gemm_epilogue(M: size, N: size, K: size, A: f32[M, K], B: f32[K, N],
                  C: f32[M, N], D: f32[M, N]):
    for i in seq(0, M):
        for j in seq(0, N):
            for k in seq(0, K):
                C[i, j] += A[i, k] * B[k, j]
    for i in seq(0, M):
        for j in seq(0, N):
            if i < 4:
                D[i, j] = C[i, j] * 2.0
    for i in seq(0, M):
        row_axpy(N, C[i, 0:N], D[i, 0:N])


# ----------------------------------------------------------------------
# the 30-step schedule (the register tiling of tests/rewrites/
# test_end_to_end_gemm.py, then more work on the staged tile)
def _block_at_jo(p):
    jo = p.find_loop('jo')
    return (jo.body()[0], jo.body()[1])


SCHEDULE = [
    ("split", lambda p: p.split('i', 4, 'io', 'ii', tail='cut')),
    ("split", lambda p: p.split('j', 16, 'jo', 'ji', tail='cut')),
    ("fission_after", lambda p: p.fission_after('jo')),
    ("reorder", lambda p: p.reorder('ii', 'jo')),
    ("split", lambda p: p.split('k', 4, 'ko', 'ki', tail='cut')),
    ("fission_after", lambda p: p.fission_after('ko', n_lifts=2)),
    ("reorder", lambda p: p.reorder('ji', 'ko')),
    ("reorder", lambda p: p.reorder('ii', 'ko')),
    ("reorder", lambda p: p.reorder('ji', 'ki')),
    ("reorder", lambda p: p.reorder('ii', 'ki')),
    ("reorder", lambda p: p.reorder('ji #1', 'ki #1')),
    ("reorder", lambda p: p.reorder('ii #1', 'ki #1')),
    ("stage_mem", lambda p: p.stage_mem(
        _block_at_jo(p), 'C[4*io:4*io+4, 16*jo:16*jo+16]', 'Ct')),
    ("set_memory", lambda p: p.set_memory('Ct', DRAM_STATIC)),
    ("lift_alloc", lambda p: p.lift_alloc('Ct')),
    ("bind_expr", lambda p: p.bind_expr('A[4 * io + ii, 4 * ko + ki]', 'a')),
    ("expand_dim", lambda p: p.expand_dim('a', '16', 'ji')),
    ("lift_alloc", lambda p: p.lift_alloc('a', n_lifts=1)),
    ("fission_after", lambda p: p.fission_after('a[_] = _')),
    ("unroll", lambda p: p.unroll('ii')),
    ("unroll", lambda p: p.unroll('ii')),
    ("unroll", lambda p: p.unroll('ki')),
    ("unroll", lambda p: p.unroll('i0')),
    ("unroll", lambda p: p.unroll('i0')),
    ("split", lambda p: p.split('ji #4', 4, 'jt', 'jv', tail='perfect')),
    ("partition_loop", lambda p: p.partition_loop('ii', 1)),
    ("shift_loop", lambda p: p.shift_loop('ii #2', 1)),
    ("parallelize", lambda p: p.parallelize('io')),
    ("rename", lambda p: p.rename('gemm_4x16')),
    ("simplify", lambda p: p.simplify()),
]


def run_schedule(p0):
    """Apply SCHEDULE; return (final procedure, [(op, seconds)])."""
    p, times = p0, []
    for op, step in SCHEDULE:
        t0 = time.perf_counter()
        p = step(p)
        times.append((op, time.perf_counter() - t0))
    return p, times


# ----------------------------------------------------------------------
# single primitives on gemm-sized procedures (outside the schedule)
def _gemm_split():
    p = gemm.split('i', 4, 'io', 'ii', tail='cut')
    return p.split('j', 16, 'jo', 'ji', tail='cut')


SINGLE = [
    ("split(guard)", lambda: gemm, lambda p: p.split('k', 8, 'ko', 'ki')),
    ("split(cut)", lambda: gemm,
     lambda p: p.split('k', 8, 'ko', 'ki', tail='cut')),
    ("reorder", lambda: gemm, lambda p: p.reorder('j', 'k')),
    ("fission_after", _gemm_split, lambda p: p.fission_after('jo')),
    ("fuse_loop", lambda: gemm_epilogue,
     lambda p: p.fuse_loop('i #1', 'i #2')),
    ("reorder_stmts(reject)", lambda: gemm_epilogue,
     lambda p: _expect_error(lambda: p.reorder_stmts('i #1', 'i #2'))),
    ("parallelize", lambda: gemm, lambda p: p.parallelize('i')),
    ("bind_expr(cse)", lambda: gemm,
     lambda p: p.bind_expr('A[i, k]', 'a', cse=True)),
    ("partition_loop", lambda: gemm_epilogue,
     lambda p: p.partition_loop('i #1', 0)),
    ("add_guard", lambda: gemm, lambda p: p.add_guard('C[_] += _', 'k < 4')),
    ("lift_if", lambda: gemm_epilogue,
     lambda p: p.lift_if('if _: _')),
    ("inline", lambda: gemm_epilogue, lambda p: p.inline('row_axpy(_)')),
    ("remove_loop(reject)", lambda: gemm, lambda p: _expect_error(
        lambda: p.remove_loop('k'))),
    ("stage_mem", lambda: gemm,
     lambda p: p.stage_mem(p.find_loop('k'), 'C[i:i+1, j:j+1]', 'c')),
    ("simplify", _gemm_split, lambda p: p.simplify()),
]


def _expect_error(fn):
    from exo_hl import SchedulingError
    try:
        fn()
    except SchedulingError:
        return None
    raise AssertionError("expected a SchedulingError")


def clear_caches():
    """Empty every cache exo_hl keeps (SMT answers, effects, liftings,
    bounds proofs, block summaries, parsed patterns, ...)."""
    from exo_hl import caches
    caches.clear_all()


def fresh(p):
    """The same procedure without its per-object memo (cold analyses)."""
    return Procedure(p.ir())


def _timed(fn):
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _ms(x):
    return f"{1e3 * x:8.2f}"


def sgemm_schedules(reps):
    """Build the SGEMM schedule of each instruction set ``reps`` times,
    cold; print the minimum CPU and wall-clock times."""
    from apps.sgemm.schedule import ISAS, schedule
    from exo_hl.effects import smt
    print(f"SGEMM schedule (apps/sgemm/schedule.py), cold, min of {reps}:")
    print(f"  {'isa':8s} {'cpu s':>7s} {'wall s':>7s} {'rewrites':>8s} "
          f"{'solver calls':>12s}")
    for isa in ISAS.values():
        cpu, wall = [], []
        for _ in range(reps):
            clear_caches()
            st = smt.solver().stats
            st.reset()
            gc.collect()
            c0, w0 = time.process_time(), time.perf_counter()
            p = schedule(isa)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
        steps = 0
        while p is not None and p._parent is not None:
            steps += p._step is not None
            p = p._parent
        print(f"  {isa.name:8s} {min(cpu):7.2f} {min(wall):7.2f} {steps:8d} "
              f"{st.solver_calls:12d}")


def _cold_cpu(build, reps):
    """(min CPU s, min wall s, solver calls of the last run) of ``build()``
    run ``reps`` times, each with every cache cleared."""
    from exo_hl.effects import smt
    cpu, wall = [], []
    st = smt.solver().stats
    for _ in range(reps):
        clear_caches()
        st.reset()
        gc.collect()
        c0, w0 = time.process_time(), time.perf_counter()
        build()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall), st.solver_calls


def other_schedules(reps):
    """The conv schedule (apps/conv/schedule.py) per instruction set, and
    the blocked SGEMM whose column blocks are ``par`` (``par='cols'``: the
    scheduled kernel replaces the algorithm inside the par loop by
    ``call_eqv``), cold, min of ``reps``."""
    import dataclasses
    from apps.conv.schedule import ISAS as CONV_ISAS
    from apps.conv.schedule import schedule as conv_schedule
    from apps.sgemm.schedule import ISAS, schedule
    print(f"other schedules, cold, min of {reps}:")
    print(f"  {'schedule':28s} {'cpu s':>7s} {'wall s':>7s} "
          f"{'solver calls':>12s}")
    for isa in CONV_ISAS.values():
        c, w, n = _cold_cpu(lambda: conv_schedule(isa), reps)
        print(f"  {'conv ' + isa.name:28s} {c:7.2f} {w:7.2f} {n:12d}")
    for isa in ISAS.values():
        cols = dataclasses.replace(isa, nc=4 * isa.nr, par="cols")
        c, w, n = _cold_cpu(lambda: schedule(cols), reps)
        name = f"sgemm {isa.name} NC={cols.nc} par=cols"
        print(f"  {name:28s} {c:7.2f} {w:7.2f} {n:12d}")


def profile_sgemm(path, top=60):
    """A cProfile (CPU time) of one cold AVX-512 SGEMM schedule: the
    functions by cumulative, then by own time, written to ``path``."""
    import cProfile
    import io
    import pstats
    from apps.sgemm.schedule import AVX512, schedule
    clear_caches()
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    schedule(AVX512)
    prof.disable()
    out = io.StringIO()
    st = pstats.Stats(prof, stream=out)
    st.sort_stats("cumulative").print_stats(top)
    st.sort_stats("tottime").print_stats(top // 2)
    text = out.getvalue().replace(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + "/",
        "")
    with open(path, "w") as f:
        f.write(text)
    print(f"profile of the AVX-512 SGEMM schedule written to {path}")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sgemm-reps", type=int, default=3)
    ap.add_argument("--only-sgemm", action="store_true",
                    help="only the SGEMM schedule timings (and --profile)")
    ap.add_argument("--profile", metavar="FILE",
                    help="write a profile of the SGEMM schedule to FILE")
    args = ap.parse_args(argv)
    reps = args.reps
    for line in BLAS_NOTES:
        print(line)
    if args.only_sgemm:
        sgemm_schedules(args.sgemm_reps)
        other_schedules(args.sgemm_reps)
        if args.profile:
            profile_sgemm(args.profile)
        return

    print(f"single primitives on gemm-sized procedures "
          f"(median of {reps}, ms)")
    print(f"  {'primitive':22s} {'cold':>8s} {'warm':>8s}")
    for name, setup, op in SINGLE:
        base = setup()
        cold, warm = [], []
        for _ in range(reps):
            clear_caches()
            cold.append(_timed(lambda: op(fresh(base))))
            warm.append(_timed(lambda: op(base)))
        print(f"  {name:22s} {_ms(statistics.median(cold))} "
              f"{_ms(statistics.median(warm))}")

    assert len(SCHEDULE) == 30
    per_op_cold, per_op_warm = defaultdict(list), defaultdict(list)
    totals_cold, totals_warm = [], []
    final = None
    for _ in range(reps):
        clear_caches()
        final, times = run_schedule(fresh(gemm))
        totals_cold.append(sum(t for _, t in times))
        for op, t in times:
            per_op_cold[op].append(t)
        _, times = run_schedule(gemm)
        totals_warm.append(sum(t for _, t in times))
        for op, t in times:
            per_op_warm[op].append(t)

    print(f"\n30-step register tiling of gemm: per-primitive median per call "
          f"(ms)")
    print(f"  {'primitive':22s} {'calls':>5s} {'cold':>8s} {'warm':>8s}")
    for op in sorted(per_op_cold):
        n = len(per_op_cold[op]) // reps
        print(f"  {op:22s} {n:5d} {_ms(statistics.median(per_op_cold[op]))} "
              f"{_ms(statistics.median(per_op_warm[op]))}")
    print(f"  {'TOTAL (30 steps)':22s} {'':5s} "
          f"{_ms(statistics.median(totals_cold))} "
          f"{_ms(statistics.median(totals_warm))}")

    # the schedule must still be right: one quick numeric check
    import numpy as np
    M, N, K = 13, 35, 9
    rng = np.random.default_rng(0)
    A = rng.integers(-4, 5, (M, K)).astype(np.float32)
    B = rng.integers(-4, 5, (K, N)).astype(np.float32)
    C = rng.integers(-4, 5, (M, N)).astype(np.float32)
    expect = C + A @ B
    t0 = time.perf_counter()
    final.compile()(M, N, K, A, B, C)
    assert (C == expect).all(), "scheduled gemm disagrees with numpy"
    print(f"\nfinal procedure compiled and checked against numpy "
          f"({_ms(time.perf_counter() - t0)} ms incl. C compile or cache)")

    print()
    sgemm_schedules(args.sgemm_reps)
    other_schedules(args.sgemm_reps)
    if args.profile:
        profile_sgemm(args.profile)


if __name__ == "__main__":
    main()
