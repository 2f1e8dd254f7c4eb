"""Picking an instruction set for an app at run time.

An app describes each instruction set it has kernels for by an object with
``name`` and ``cpu_features()`` (the features its registers and
instructions need); ``choose_isa`` takes the best one this CPU runs, or a
named one, with a one-line reason either way. ``chooser`` gives an app's
entry point a ``choose_isa`` that remembers its answers.
"""
from __future__ import annotations

import functools
import os

from exo_hl.codegen_c.host_cpu import emulation_wanted, host_features

#: the environment variables a choice depends on (besides the CPU)
_ENV = ("EXO_HL_HOST_CPU", "EXO_HL_EMULATE")


def missing_features(isa) -> frozenset:
    need = isa.cpu_features()
    return frozenset(need - host_features(need))


def choose_isa(isas: dict, name: str = "auto"):
    """(isa, emulated, note) or (None, None, one-line error). ``isas``:
    {name: description}, best first; ``name``: 'auto' or one of them."""
    if name == "auto":
        for isa in isas.values():
            if not missing_features(isa):
                others = [f"no {o.name}: it lacks "
                          f"{', '.join(sorted(missing_features(o)))}"
                          for o in isas.values()
                          if o is not isa and missing_features(o)]
                why = f"; {'; '.join(others)}" if others else ""
                return isa, False, f"auto: the best this CPU has{why}"
        need = " or ".join("+".join(sorted(i.cpu_features()))
                           for i in isas.values())
        return None, None, (f"this CPU has none of the instruction sets "
                            f"this app targets ({need})")
    if name not in isas:
        return None, None, (f"unknown instruction set {name!r} (one of "
                            f"auto, {', '.join(isas)})")
    isa = isas[name]
    missing = missing_features(isa)
    if not missing:
        return isa, False, "requested"
    if emulation_wanted(None):
        return isa, True, (f"requested; this CPU lacks "
                           f"{', '.join(sorted(missing))}, so it runs "
                           f"through the emulation layer (EXO_HL_EMULATE): "
                           f"timings are not meaningful")
    alt = next((i.name for i in isas.values() if not missing_features(i)),
               None)
    hint = f"; --isa auto picks {alt} here" if alt else ""
    return None, None, (f"--isa {name} needs CPU feature(s) "
                        f"{', '.join(sorted(missing))}, which this CPU lacks "
                        f"(EXO_HL_EMULATE=1 runs it through emulation){hint}")


def chooser(isas: dict):
    """``choose_isa(name='auto')`` over ``isas``, each answer remembered
    per name and value of the environment variables it depends on: an
    entry point calls it on every call, and working it out again (the
    features of every instruction used, the host's CPU flags) took about
    180 us, 35 times a 64^3 SGEMM."""
    @functools.lru_cache(maxsize=None)
    def cached(name, env):
        return choose_isa(isas, name)

    def choose(name: str = "auto"):
        """(isa, emulated, note) or (None, None, one-line error)."""
        return cached(name, tuple(os.environ.get(v) for v in _ENV))
    return choose
