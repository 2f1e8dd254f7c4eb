"""Compiling for a host that pretends to lack instruction sets, for the
tests that compare the emulation layer with the hardware (``compile()``
runs natively where the CPU has a feature; tests run with
EXO_HL_EMULATE=1, which emulates only what the host lacks)."""
from __future__ import annotations

import os


def compile_emulated(p, host="avx512f,avx512bw"):
    """``p.compile(emulate=True)`` with the host's features pretended to be
    only ``host`` (``EXO_HL_HOST_CPU``, restored afterwards), so that what
    ``p`` needs beyond them is emulated."""
    old = os.environ.get("EXO_HL_HOST_CPU")
    os.environ["EXO_HL_HOST_CPU"] = host
    try:
        return p.compile(emulate=True)
    finally:
        if old is None:
            del os.environ["EXO_HL_HOST_CPU"]
        else:
            os.environ["EXO_HL_HOST_CPU"] = old
