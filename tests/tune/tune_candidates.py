"""Templates and benchmarks for tests/tune/test_tune.py: top-level
functions of an importable module, as ``tune`` requires (the candidates'
processes import them by name).

One parameter, ``case``, picks what the candidate does: a good schedule
(``tile4``, ``tile8``: value = the tile), a schedule ``split`` refuses
(``refused``: a perfect split of an unknown ``n``), a benchmark that kills
its process (``abort``: SIGABRT; ``segv``: a read of address 0) or one
that never returns (``hang``), or a schedule that takes minutes to build
(``slowbuild``).
"""
from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from exo_hl import f32, proc, seq, size


@proc
def axpy(n: size, x: f32[n], y: f32[n]):
    for i in seq(0, n):
        y[i] += 2.0 * x[i]


def template(params):
    case = params["case"]
    if case == "refused":
        return axpy.split('i', 4, 'io', 'ii', tail='perfect')
    if case == "slowbuild":
        time.sleep(300)
    tile = int(case[4:]) if case.startswith("tile") else 2
    return axpy.split('i', tile, 'io', 'ii', tail='cut')


def bench(compiled, params):
    """Checks the kernel, then 'measures' a value (deterministic: the
    tile), or misbehaves as the case asks."""
    case = params["case"]
    x = np.arange(37, dtype=np.float32)
    y = np.ones(37, dtype=np.float32)
    compiled(37, x, y)
    assert np.array_equal(y, 1 + 2 * x)
    if case == "abort":
        os.abort()
    if case == "segv":
        ctypes.string_at(0)
    if case == "hang":
        while True:
            time.sleep(0.1)
    return float(case[4:])


def template_xy(params):
    """For the seeded searches: any point builds (no compile needed)."""
    return axpy.split('i', params["t"], 'io', 'ii', tail='cut')


def bench_xy(p, params):
    """A deterministic landscape over (t, u) (``compile=False``: ``p`` is
    the Procedure)."""
    assert p.name() == "axpy"
    if os.environ.get("EXO_HL_TEST_UNSET"):    # the spec's unset_env failed
        return -100.0
    return -abs(params["t"] - 6) - abs(params["u"] - 3) * 0.5


def tune_spec(options):
    """For ``exo-hl tune tests/tune/tune_candidates.py``."""
    return {"template": template_xy, "bench": bench_xy,
            "space": {"t": range(1, 9), "u": [int(options.get("u", 3))]},
            "key": "axpy.cli.v1", "units": "score", "compile": False,
            "initial": [{"t": 6, "u": 3}], "about": "the test landscape",
            "n_startup": int(options.get("n_startup", 10)),
            "unset_env": tuple(filter(None, [options.get("unset")])),
            "compile_opts": ({"cflags": options["cflags"]}
                             if "cflags" in options else None)}


def template_p(params):
    """For the confirmation tests: any point builds (``compile=False``)."""
    return axpy


class ScriptedBench:
    """A fake benchmark whose values follow a script: the n-th
    measurement of point ``params['p']``, counted over all processes (a
    file per measurement under ``directory``), returns ``script[p][n]``
    (the last value repeats), so a point's first measurement (the
    search's) can be lucky or unlucky and the later ones (the
    confirmation's) tell the truth. Points in ``crash`` raise from their
    second measurement on. Picklable, as ``tune`` needs."""

    def __init__(self, directory, script, crash=()):
        self.directory, self.script = str(directory), dict(script)
        self.crash = tuple(crash)

    def __call__(self, p, params):
        point = params["p"]
        d = os.path.join(self.directory, point)
        os.makedirs(d, exist_ok=True)
        n = len(os.listdir(d))
        open(os.path.join(d, str(n)), "w").close()
        if point in self.crash and n >= 1:
            raise RuntimeError("a flaky benchmark")
        values = self.script[point]
        return float(values[min(n, len(values) - 1)])


def odd_t_only(params):
    """For the ``valid`` test: even tiles are "points the schedule cannot
    build" (a reason), 1 is refused with a bare False."""
    if params["t"] == 1:
        return False
    return None if params["t"] % 2 else f"t={params['t']} is even"


def bench_odd(p, params):
    """Like ``bench_xy``, but an even ``t`` reaching it fails the test:
    ``valid`` should have kept it from being built."""
    assert params["t"] % 2 == 1 and params["t"] != 1, params
    return -abs(params["t"] - 6)
