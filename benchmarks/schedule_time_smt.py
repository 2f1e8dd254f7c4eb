"""Cold build time of the AVX-512 SGEMM schedule, one fresh process per
build (so nothing is warm: imports done, caches empty), CPU seconds of the
build alone (``time.process_time``). ``--tree DIR`` adds a second source
tree (e.g. a worktree of the base commit); builds alternate between the
trees so both see the same load. ``--profile FILE`` writes a cProfile of
one build (top by cumulative and by own time).

Run: python benchmarks/schedule_time_smt.py [--reps N] [--tree OLD]
     [--isa avx512] [--profile FILE]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import gc, sys, time
from apps.common.blas_env import configure_blas
configure_blas()
from apps.sgemm.schedule import ISAS, schedule
isa = ISAS[sys.argv[1]]
gc.collect()
if len(sys.argv) > 2:
    import cProfile, io, pstats
    prof = cProfile.Profile(time.process_time)
    prof.enable(); schedule(isa); prof.disable()
    out = io.StringIO()
    st = pstats.Stats(prof, stream=out)
    st.sort_stats("cumulative").print_stats(60)
    st.sort_stats("tottime").print_stats(30)
    open(sys.argv[2], "w").write(out.getvalue())
else:
    c0 = time.process_time()
    schedule(isa)
    print(time.process_time() - c0)
"""


def build(tree, isa, profile=None):
    env = dict(os.environ, PYTHONPATH=tree)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(k, None)
    args = [sys.executable, "-c", CHILD, isa] + ([profile] if profile else [])
    out = subprocess.run(args, cwd=tree, env=env, check=True,
                         capture_output=True, text=True).stdout
    return None if profile else float(out.split()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tree", help="a second source tree to compare with")
    ap.add_argument("--isa", default="avx512")
    ap.add_argument("--profile", metavar="FILE")
    a = ap.parse_args(argv)
    if a.profile:
        build(HERE, a.isa, os.path.abspath(a.profile))
        return
    trees = [HERE] + ([os.path.abspath(a.tree)] if a.tree else [])
    times = {t: [] for t in trees}
    for _ in range(a.reps):
        for t in trees:
            times[t].append(build(t, a.isa))
    print(f"load average {os.getloadavg()}")
    for t, ts in times.items():
        print(f"{t}: median {statistics.median(ts):.2f} s CPU  "
              + " ".join(f"{x:.2f}" for x in ts))


if __name__ == "__main__":
    main()
