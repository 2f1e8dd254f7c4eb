"""OpenMP for ``par`` loops (docs/api.md §6).

A ``par`` loop is emitted under ``#pragma omp parallel for``; the code is
parallel only when built with ``-fopenmp``. ``compile()`` builds with it by
default whenever the procedure (or anything it calls) has a ``par`` loop and
the C compiler supports it, which is probed once per compiler; without
support the build is serial and still correct, and a ``RuntimeWarning``
says so once per compiler (a par kernel that silently runs on one thread
cost a benchmark its two-thread rows: clang without libomp).
"""
from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import warnings

from ..caches import memo
from ..core_ir.nodes import IR
from ..core_ir.operators import is_parallel
from ..core_ir.traversal import walk_stmts
from .analysis import as_ir, reached_procs

#: the flag a build of code with ``par`` loops needs to run them in parallel
OPENMP_FLAG = "-fopenmp"

_PROBE = """\
int exo_hl_omp_probe(int n, float *x) {
    int s = 0;
#pragma omp parallel for
    for (int i = 0; i < n; i++) x[i] += 1.0f;
#ifdef _OPENMP
    s = 1;
#endif
    return s;
}
"""


def has_par_loops(procs) -> bool:
    """Does any of ``procs``, or a procedure they call, have a par loop?"""
    for p in reached_procs([as_ir(p) for p in procs]):
        for s in walk_stmts(p.body):
            if isinstance(s, IR.For) and is_parallel(s.mode):
                return True
    return False


@memo(maxsize=None)
def openmp_supported(cc: str) -> bool:
    """Can ``cc`` build (and link into a shared library) OpenMP code?"""
    with tempfile.TemporaryDirectory(prefix="exo_hl_omp_") as tmp:
        with open(os.path.join(tmp, "probe.c"), "w") as f:
            f.write(_PROBE)
        cmd = [*shlex.split(cc), OPENMP_FLAG, "-shared", "-fPIC", "-o",
               "probe.so", "probe.c"]
        try:
            r = subprocess.run(cmd, cwd=tmp, capture_output=True)
        except OSError:
            return False
        return r.returncode == 0


def openmp_flags(procedure, cc: str, openmp=None) -> list:
    """The extra build flags for ``procedure``: ``openmp=True`` forces
    ``-fopenmp``, ``False`` never uses it, ``None`` (the default) uses it
    when the procedure has par loops and ``cc`` supports it."""
    if openmp is None:
        par = has_par_loops([procedure])
        openmp = par and openmp_supported(cc)
        if par and not openmp:
            _warn_serial(cc)
    return [OPENMP_FLAG] if openmp else []


@memo(maxsize=None)
def _warn_serial(cc: str) -> None:
    """Once per compiler: its par loops will run on one thread."""
    warnings.warn(f"{cc!r} cannot build OpenMP code ({OPENMP_FLAG} fails "
                  f"to compile or link, e.g. clang without libomp): "
                  f"par loops run serially; use a compiler with OpenMP "
                  f"support or pass openmp=False to silence this",
                  RuntimeWarning, stacklevel=4)
