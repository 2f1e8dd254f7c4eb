"""No AVX2 or AVX-512 instruction reads or writes outside its operands.

Each instruction runs through test_edge_values' wrappers (its memory
operands windows of arrays of exactly their size; masks of 1, all but
one and all lanes), with every array flush against an inaccessible page
after it and then before it (``tests/guard_pages``): a load of a whole
vector for a masked tail, or an emulated masked load or store touching
the inactive lanes, crashes the test (SIGSEGV) where a comparison of
values sees nothing. Natively (or as the host emulates), and the
AVX-512 ones also through the emulation layer as on a host of AVX2 only.
The outputs are compared with ``interpret()`` too.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import exo_hl
from exo_hl import ExoTypeError, SchedulingError
from exo_hl.errors import BoundsError
from exo_hl.frontend.decorators import parse_proc_source

from tests.guard_pages import guarded
from .emulation_tools import compile_emulated
from .test_edge_values import (LIBS, _NP, _bits, _inputs, _size_choices,
                               _wrapper)


def _cases():
    for lib_name, (lib, _, _) in sorted(LIBS.items()):
        for instr in lib.INSTRS:
            yield pytest.param(lib_name, instr,
                               id=f"{lib_name}-{instr.name()}")


@pytest.mark.parametrize("lib_name,instr", list(_cases()))
def test_instruction_touches_only_its_operands(lib_name, instr):
    lib, _, _ = LIBS[lib_name]
    scope = {n: getattr(exo_hl, n) for n in exo_hl.__all__}
    scope.update({n: getattr(lib, n) for n in lib.__all__})
    choices = _size_choices(instr, 16 if lib_name == "avx512" else 8)
    names = sorted(choices)
    rng = np.random.default_rng(11)
    calls = 0
    for vals in itertools.product(*(choices[n] for n in names)):
        sizes = dict(zip(names, vals))
        src, ins, outs = _wrapper(lib_name, instr, sizes)
        try:
            p = parse_proc_source(src, scope)
        except (SchedulingError, ExoTypeError, BoundsError):
            continue                     # a size the preconditions refuse
        runs = [p.compile()]
        if "avx512f" in instr.ir().instr.cpu_features:
            runs.append(compile_emulated(p, host="avx,avx2,fma,f16c"))
        for f, at in itertools.product(runs, ("end", "start")):
            args = {}
            for nm, t, n in ins + outs:
                shape = n if isinstance(n, tuple) else (n,)
                # exact factors for any multiply-add: the values are
                # compared with interpret() too
                data = (_inputs(t, int(np.prod(shape)), rng, 1)
                        .reshape(shape) if nm.startswith("x_") else 0)
                args[nm] = guarded(shape, _NP[t], at, data)
            want = {k: v.copy() for k, v in args.items()}
            with np.errstate(all="ignore"):
                p.interpret(**want)
            f(**args)
            for nm, t, _ in outs:
                assert np.array_equal(_bits(args[nm], t),
                                      _bits(want[nm], t)), \
                    (instr.name(), sizes, at, f, nm)
            calls += 1
    assert calls >= 2
