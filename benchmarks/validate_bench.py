"""Translation validation of every shipped schedule, and of mutants.

For each shipped schedule (its final procedure against the app's
algorithm): the verdict of ``exo_hl.validate`` and its time (CPU of this
process and wall clock; the machine is shared, so CPU is the figure to
read). Then ``--mutants N`` random single-statement mutations of the
scheduled SGEMM (an index off by one, operands swapped, a guard dropped, a
loop bound moved, a literal negated; ``exo_hl.validate.mutate``), each
validated with a counterexample search first (at sizes that reach the
register tiles and the tails), and how many were refuted, proven (the
mutation did not change the result) or left unknown.

``--rlimits`` also prints, per schedule, the number of Z3 queries and the
largest share of Z3's resource count one query used (the figure the
default ``rlimit`` of ``exo_hl/validate/limits.py`` is calibrated on).

Run: python benchmarks/validate_bench.py [--only NAME ...] [--mutants N]
     [--skip-schedules] [--isa avx2|avx512] [--rlimits]
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import exo_hl  # noqa: E402


def _blur():
    from apps.blur import blur as B
    return [(f"blur {k}", B.blur, f) for k, f in B.SCHEDULES.items()]


def _unsharp():
    from apps.unsharp import unsharp as U
    return [(f"unsharp {k}", U.unsharp, f) for k, f in U.SCHEDULES.items()]


def _sgemm(isa):
    from apps.sgemm import schedule as S
    return [(f"sgemm {isa}", S.sgemm, lambda: S.schedule(S.ISAS[isa]))]


def _conv(isa):
    from apps.conv import schedule as C
    return [(f"conv {isa}", C.conv, lambda: C.schedule(C.ISAS[isa]))]


def _gemmini():
    from apps.gemmini_conv import conv as GC
    from apps.gemmini_matmul import matmul as GM
    # the Gemmini schedules hoist configuration writes: equal modulo the
    # accelerator's config state (as their derivation records), not as is
    return [("gemmini matmul", GM.matmul, GM.schedule),
            ("gemmini conv", GC.conv, GC.schedule),
            ("gemmini matmul (modulo config)", GM.matmul, GM.schedule),
            ("gemmini conv (modulo config)", GC.conv, GC.schedule)]


def cases():
    return (_blur() + _unsharp() + _sgemm("avx2") + _sgemm("avx512")
            + _conv("avx2") + _conv("avx512") + _gemmini())


def _timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def _rlimit_count():
    import z3
    s = z3.Solver()
    s.check()
    return s.statistics().get_key_value("rlimit count")


class _QueryUse:
    """Z3 resource units used by each query of the parametric proof (the
    context's count is cumulative: the difference across each query)."""

    def __init__(self):
        from exo_hl.validate import parametric
        self.mod, self.orig, self.used = parametric, parametric._valid, []

    def __enter__(self):
        def counted(*args, **kw):
            c0 = _rlimit_count()
            out = self.orig(*args, **kw)
            self.used.append(_rlimit_count() - c0)
            return out
        self.mod._valid = counted
        return self

    def __exit__(self, *exc):
        self.mod._valid = self.orig


def run_schedules(only, rlimits=False):
    rows = []
    for name, algo, build in cases():
        if only and not any(o in name for o in only):
            continue
        sched, bc, _ = _timed(build)
        opts = {"modulo": "config"} if "modulo config" in name else {}
        with _QueryUse() if rlimits else contextlib.nullcontext() as q:
            v, vc, vw = _timed(lambda: exo_hl.validate(algo, sched, **opts))
        rows.append((name, v.status, vc, vw, bc, v.condition))
        use = (f" {len(q.used)} queries, largest {max(q.used, default=0)} "
               f"units |" if rlimits else "")
        print(f"| {name} | {v.status} | {vc:.1f} | {vw:.1f} | {bc:.1f} |"
              f"{use} {v.condition[:160]} |", flush=True)
    return rows


#: the mutated schedule is the shipped one with a k block of 4 instead of
#: hundreds (the same steps), so that these small sizes reach every path:
#: register tiles, the 4-, 2- and 1-row tails, the column tails (whole
#: registers and masked), full k blocks and the k tail
MUTANT_KC = 4
MUTANT_SIZES = {
    # M = 7, 8, 10: the 1-, 2- and 4-row tails of the 6-row tile (M = 13
    # left the 2-row tail unreached: a mutant of its loop bound was unknown)
    "avx2": [{"M": 7, "N": 17, "K": 9}, {"M": 8, "N": 33, "K": 5},
             {"M": 10, "N": 27, "K": 6}],
    "avx512": [{"M": 11, "N": 53, "K": 9}, {"M": 8, "N": 37, "K": 5},
               {"M": 7, "N": 19, "K": 4}],
}


def run_mutants(n, isa, seed, prove, part=(0, 1)):
    """Validate ``n`` random mutants of the ``isa`` SGEMM schedule: a
    counterexample search first (at MUTANT_SIZES), then, for a mutant no
    run refutes, the parametric proof (``prove``): a mutation that does
    not change the result must be proven, not left unknown."""
    from apps.sgemm import schedule as S
    from exo_hl.validate.mutate import random_mutants
    import dataclasses
    cfg = S.ISAS[isa]
    cfg = dataclasses.replace(cfg, kc=MUTANT_KC,
                              prefetch=min(cfg.prefetch, MUTANT_KC - 1))
    sched = S.schedule(cfg)
    count = collections.Counter()
    rows = []
    t0 = time.process_time()
    for k, (site, m) in enumerate(random_mutants(sched.ir(), n, seed)):
        if k % part[1] != part[0]:
            continue
        v, vc, _ = _timed(lambda: exo_hl.validate(
            S.sgemm, m, sizes=MUTANT_SIZES[isa], prove_first=False,
            prove=prove, max_sizes=1))
        count[v.status] += 1
        count[(site[0], v.status)] += 1
        rows.append((k, site, v, vc))
        print(f"  mutant {k:3d} {site[0]:6s} {str(site[1:]):16s} "
              f"{v.status:8s} {vc:6.1f} s  {v.condition[:110]}", flush=True)
    total = time.process_time() - t0
    print(f"\nmutants of the {isa} SGEMM (KC={MUTANT_KC}): "
          f"{dict(count)}; {total:.0f} s CPU")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--mutants", type=int, default=100)
    ap.add_argument("--isa", default="avx512")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-schedules", action="store_true")
    ap.add_argument("--runs-only", action="store_true",
                    help="no parametric proof of mutants that no run "
                    "refutes (fast; they stay unknown)")
    ap.add_argument("--part", default="0/1",
                    help="K/P: only mutants numbered K modulo P (to split "
                    "the run over processes)")
    ap.add_argument("--rlimits", action="store_true",
                    help="per schedule: Z3 queries and the most resource "
                    "units one used")
    a = ap.parse_args(argv)
    print(f"load average: {os.getloadavg()}")
    if not a.skip_schedules:
        extra = (" Z3 queries (resource units) |", "---|") if a.rlimits \
            else ("", "")
        print("| schedule | verdict | validate CPU s | wall s | build CPU s "
              f"|{extra[0]} condition |\n|---|---|---|---|---|{extra[1]}---|")
        run_schedules(a.only, a.rlimits)
    if a.mutants:
        k, p = map(int, a.part.split("/"))
        run_mutants(a.mutants, a.isa, a.seed, not a.runs_only,
                    part=(k, p))
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
