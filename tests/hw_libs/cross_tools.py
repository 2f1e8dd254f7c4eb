"""Whether a cross target's tools are here, for the tests that need them;
and what the NEON and RVV edge-value tests share: running generated
wrappers under qemu against ``interpret()`` bit for bit.

A test calls ``need_target(name)`` first. Without the cross compiler or
qemu-user it is skipped with the reason (the tools are optional system
packages, installed by ``.ci/run``), unless ``EXO_HL_REQUIRE_CROSS=1``
is set (``.ci/run`` sets it after installing them): then it fails, so CI
never passes by skipping what it could run.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import exo_hl

from exo_hl.codegen_c.cross import TARGETS
from exo_hl.core_ir.nodes import IR


def need_target(name):
    missing = TARGETS[name].missing_tools()
    if not missing:
        return
    msg = (f"target {name!r} needs {', '.join(missing)} (Debian: apt-get "
           f"install gcc-aarch64-linux-gnu qemu-user clang-19 "
           f"gcc-riscv64-linux-gnu libc6-dev-riscv64-cross)")
    if os.environ.get("EXO_HL_REQUIRE_CROSS", "").strip() in ("1", "true",
                                                              "yes"):
        pytest.fail(f"EXO_HL_REQUIRE_CROSS is set but {msg}")
    pytest.skip(msg)


def library_scope(lib):
    """The names a wrapper's source may use: exo_hl's and ``lib``'s."""
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    scope.update({n: getattr(lib, n) for n in lib.__all__})
    return scope


def size_value(e, sizes):
    """The value of a size expression of an instruction's signature (a
    literal or a size argument, looked up in ``sizes``)."""
    if isinstance(e, IR.Const):
        return e.val
    if isinstance(e, IR.Read) and not e.idx:
        return sizes[e.name.name]
    raise NotImplementedError(f"size expression {e}")


def bits(a):
    """The bit patterns of a float array as comparable numbers, every NaN
    -1 (a NaN's sign and payload are unspecified, docs/semantics.md)."""
    u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    b = a.view(u).astype(np.float64)   # exact up to 2**53; NaN -> -1
    return np.where(np.isnan(a), -1, b)


def check_against_interpret(prog, calls):
    """Run ``calls``, ``[(label, proc, args, output names)]``, in order in
    one process of the cross build ``prog`` and assert that every output
    equals what ``interpret()`` writes on a copy of the same arguments, bit
    for bit; the number of calls."""
    wants = []
    for _, p, args, _ in calls:
        want = {a: v.copy() for a, v in args.items()}
        with np.errstate(all="ignore"):
            p.interpret(**want)
        wants.append(want)
    prog.run_many([(p, args) for _, p, args, _ in calls])
    for (label, _, got, outs), want in zip(calls, wants):
        for nm in outs:
            assert np.array_equal(bits(got[nm]), bits(want[nm])), (
                f"{label}: {nm} {prog.target} {got[nm]} interpret "
                f"{want[nm]} on "
                f"{ {k: v for k, v in got.items() if k.startswith('x_')} }")
    return len(calls)
