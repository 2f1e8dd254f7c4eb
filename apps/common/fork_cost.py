"""Measured cost of an OpenMP parallel region on this machine.

    python apps/common/fork_cost.py [--threads 2]

Whether two threads pay on a small product depends on what a parallel
region costs, and that differs between machines far more than the caches
do: 0.6-0.7 us on the 2-core Zen 5 (threads spinning between regions,
libgomp), while on the 2-core Xeon the threaded SGEMM kernel behaved as
if each call paid 40-80 us (apps/sgemm/tuning.py, ``PAR_MIN``). So the
apps' thresholds for threads come from this measurement, not from a
constant tuned on one machine.

The probe is a small C program built with ``$CC -O2 -fopenmp`` (the
runtime the kernels are built with): back-to-back parallel regions, each
one write per thread and a barrier (what a threaded kernel's region
does), timed in batches of 200; the best batch is the cost (load only
makes batches slower). The result is stored in the tuning database under
this machine's signature (``fork_cost.t<threads>.v1``): measured once
per machine, the same value every later run (a record of another machine
is never used: ``TuningDB.lookup``). ``None`` when there is no compiler
with OpenMP or fewer than two threads.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from exo_hl.tune import TuningDB
from exo_hl.tune.machine import core_count

#: the database key's version: bump when the probe changes
VERSION = 1

PROBE = r"""
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static volatile int sink[64 * 64];

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2, batches = 60, per = 200;
    omp_set_num_threads(threads);
    double best = 1e30;
    int seen = 0;
    for (int b = 0; b < batches; b++) {
        double t0 = now();
        for (int r = 0; r < per; r++) {
#pragma omp parallel
            {
                int me = omp_get_thread_num();
                sink[64 * (me & 63)] = r;
#pragma omp barrier
                if (me == 0 && omp_get_num_threads() > seen)
                    seen = omp_get_num_threads();
            }
        }
        double t = (now() - t0) / per;
        if (t < best)
            best = t;
    }
    printf("%.6f %d\n", best * 1e6, seen);
    return 0;
}
"""


def default_threads() -> int:
    """The threads a kernel's parallel region opens: ``OMP_NUM_THREADS``
    (its first value) when above one, else the CPUs this process may run
    on (at one thread there is nothing to decide, and the benchmarks
    start at one and raise it at run time)."""
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) > 1:
        return int(env)
    return core_count()


def measure(threads: int) -> float | None:
    """The probe's cost of one region on ``threads`` threads, in us; None
    when it cannot be built or does not run ``threads`` threads."""
    from apps.common.peak import PeakUnavailable, build_probe
    with tempfile.TemporaryDirectory(prefix="exo_hl_fork_") as d:
        try:
            exe = build_probe(PROBE, d, "fork", "parallel-region",
                              ("-fopenmp",))
            out = subprocess.run([exe, str(threads)], capture_output=True,
                                 text=True, timeout=60)
        except (PeakUnavailable, OSError, subprocess.TimeoutExpired):
            return None
    try:
        us, seen = out.stdout.split()
        us, seen = float(us), int(seen)
    except ValueError:
        return None
    return us if out.returncode == 0 and seen == threads else None


def key(threads: int) -> str:
    return f"fork_cost.t{threads}.v{VERSION}"


def stored(key_: str, measure_fn, units: str, db: TuningDB = None,
           remeasure: bool = False) -> float | None:
    """The value of this machine's record ``key_``, else ``measure_fn()``
    (None: cannot be measured) stored under it: a machine fact measured
    once, so every later run decides the same way."""
    db = TuningDB() if db is None else db
    if not remeasure:
        rec = db.lookup(key_).record
        if rec is not None:
            return float(rec["value"])
    value = measure_fn()
    if value is not None:
        db.store(key_, {}, value, units=units)
    return value


def fork_cost_us(threads: int = None, db: TuningDB = None,
                 remeasure: bool = False) -> float | None:
    """This machine's cost of a parallel region on ``threads`` threads
    (default ``default_threads()``), in us: the stored record, else
    measured now (about 0.2 s with the build) and stored. None for one
    thread or when the probe cannot run (no OpenMP)."""
    threads = default_threads() if threads is None else threads
    if threads < 2:
        return None
    return stored(key(threads), lambda: measure(threads), "us", db,
                  remeasure)


def fma_peak_gflops(isa: str, db: TuningDB = None) -> float | None:
    """One core's FP32 FMA peak of ``isa`` (``peak.fma_peak``, 30 runs),
    stored like the fork cost; None when it cannot be measured."""
    from apps.common.peak import PeakUnavailable, fma_peak

    def run():
        try:
            return fma_peak(isa, runs=30)
        except PeakUnavailable:
            return None
    return stored(f"fma_peak.{isa}.v{VERSION}", run, "GFLOP/s", db)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--remeasure", action="store_true",
                    help="measure again and replace the stored record")
    a = ap.parse_args(argv)
    t = default_threads() if a.threads is None else a.threads
    us = fork_cost_us(t, remeasure=a.remeasure)
    if us is None:
        print(f"fork_cost.py: not measured on {t} thread(s) (one thread, "
              f"or no C compiler with OpenMP)", file=sys.stderr)
        return 2
    print(f"OpenMP parallel region with a barrier, {t} threads: "
          f"{us:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
