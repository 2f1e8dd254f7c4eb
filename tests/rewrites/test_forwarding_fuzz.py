"""Forwarding is exact along random schedules (docs/api.md §4).

The random scheduling steps of ``test_schedule_fuzz`` are applied to
procedures whose nodes carry unique markers (``test_cursor_forwarding``);
after every accepted step, and from the root to the end of each sequence,
every cursor (statement, block, gap, expression, argument) must forward to
the image of what it denoted, or be invalid. Bounded by a time budget.
"""
from __future__ import annotations

import random
import time

from exo_hl import SchedulingError, f32, proc, seq, size
from test_cursor_forwarding import branch_allocs, forwarding_failures, tagged
from test_schedule_fuzz import PROCS, Namer, random_step



@proc
def branch_scalars(N: size, x: f32[N], y: f32[N]):
    for i in seq(0, N):
        if i < 2:
            t: f32
            t = x[i] * 2.0
            y[i] = t
        else:
            u: f32
            u = x[i] + 1.0
            y[i] = u * 2.0
    v: f32[N]
    if N > 3:
        for j in seq(0, N):
            y[j] += 1.0
    else:
        for j in seq(0, N):
            v[j] = y[j]
            y[j] = v[j] + 2.0


# the schedule fuzz's procedures, and shapes forwarding got wrong: an
# allocation used in one branch of the if after it (sink_alloc put it in
# the else branch; its cursor went to the then-branch's allocation), and
# allocations and look-alike loops in both branches of ifs
CORPUS = PROCS + [branch_allocs, branch_scalars]


def test_forwarding_along_random_schedules():
    rng = random.Random(33)
    t0 = time.time()
    steps = checked = 0
    s = 0
    while time.time() - t0 < 25 and s < 150:
        p0 = tagged(CORPUS[s % len(CORPUS)])
        s += 1
        p, fresh, log = p0, Namer(), []
        for _ in range(4):
            desc, thunk = random_step(p, rng, fresh)
            steps += 1
            try:
                q = thunk()
            except SchedulingError:
                continue
            log.append(desc)
            bad = forwarding_failures(p, q)
            assert not bad, f"after {log}:\n" + "\n".join(bad[:5])
            checked += 1
            p = q
        if p is not p0:
            bad = forwarding_failures(p0, p)
            assert not bad, f"from the root through {log}:\n" + \
                "\n".join(bad[:5])
    print(f"forwarding fuzz: {s} sequences, {steps} steps, {checked} "
          f"accepted and checked")
    assert checked >= 20
