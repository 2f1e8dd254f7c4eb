"""Cold build time of one SGEMM schedule, in fresh processes.

Each rep starts a new Python process that imports exo_hl and the SGEMM
app, then times one ``apps.sgemm.schedule.schedule(ISA)`` with
``time.process_time`` (CPU s of that process: what matters on a machine
shared with other jobs); the parent prints every rep, the median and the
load average. Nothing is cached between reps (a fresh process each).
``--profile FILE`` also writes the top of a cProfile of one cold build.
``--old DIR`` times a second checkout (e.g. a ``git worktree`` of the
base commit) interleaved with this one, rep by rep, for an A/B on a
loaded machine.

Run: python benchmarks/schedule_time.py [--isa avx512] [--reps 5]
     [--old DIR] [--profile FILE]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r"""
import sys, time
sys.path.insert(0, {root!r})
from apps.common.blas_env import configure_blas
configure_blas()
from apps.sgemm.schedule import ISAS, schedule
isa = ISAS[{isa!r}]
c0 = time.process_time()
schedule(isa)
print(time.process_time() - c0)
"""

_PROFILE = r"""
import sys, time, io, cProfile, pstats
sys.path.insert(0, {root!r})
from apps.common.blas_env import configure_blas
configure_blas()
from apps.sgemm.schedule import ISAS, schedule
isa = ISAS[{isa!r}]
prof = cProfile.Profile(time.process_time)
prof.enable()
schedule(isa)
prof.disable()
out = io.StringIO()
st = pstats.Stats(prof, stream=out)
st.sort_stats("cumulative").print_stats({top})
st.sort_stats("tottime").print_stats({top} // 2)
print(out.getvalue().replace({root!r} + "/", ""))
"""


def _env(root):
    env = dict(os.environ)
    env["PYTHONPATH"] = root
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(k, None)
    return env


def one_build(root, isa) -> float:
    """CPU s of one cold build of ``isa``'s schedule in a fresh process."""
    out = subprocess.run([sys.executable, "-c",
                          _CHILD.format(root=root, isa=isa)],
                         env=_env(root), capture_output=True, text=True,
                         check=True, cwd=root)
    return float(out.stdout.strip().splitlines()[-1])


def profile(root, isa, path, top=60):
    out = subprocess.run([sys.executable, "-c",
                          _PROFILE.format(root=root, isa=isa, top=top)],
                         env=_env(root), capture_output=True, text=True,
                         check=True, cwd=root)
    with open(path, "w") as f:
        f.write(out.stdout)
    print(f"profile written to {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--isa", default="avx512")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--old", help="a second checkout to time, interleaved")
    ap.add_argument("--profile", metavar="FILE")
    args = ap.parse_args(argv)
    roots = [("new", ROOT)]
    if args.old:
        roots.append(("old", os.path.abspath(args.old)))
    times = {name: [] for name, _ in roots}
    print(f"load average before: {os.getloadavg()}")
    for _ in range(args.reps):
        for name, root in roots:
            t = one_build(root, args.isa)
            times[name].append(t)
            print(f"  {name} {t:.2f}", flush=True)
    for name, ts in times.items():
        print(f"{args.isa} {name}: median {statistics.median(ts):.2f} CPU s "
              f"over {len(ts)} cold builds: "
              + " ".join(f"{t:.2f}" for t in ts))
    print(f"load average after: {os.getloadavg()}")
    if args.profile:
        profile(ROOT, args.isa, args.profile)


if __name__ == "__main__":
    main()
