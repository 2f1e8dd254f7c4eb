"""``make_instr(c_template, c_global="", cpu_features=())``: turn a procedure into an @instr.

The body stays as the instruction's semantic specification (what
``interpret``, the effect analysis and ``replace`` read); calls compile to
``c_template`` instead of a call to a generated C function. This is the
user's assertion that the template implements the body, exactly as with
``@instr``; the compiler checks only that every ``{placeholder}`` names an
argument (``{x}`` or ``{x_data}``). Provenance records the derivation, so the
instruction stays known-equivalent to the procedure it came from.
"""
from __future__ import annotations

from ..core_ir.cpu_features import normalize_features
from ..core_ir.nodes import IR
from ..errors import ExoTypeError, SchedulingError
from ..provenance import derive
from . import _common as C


def make_instr(proc, c_template, c_global="", cpu_features=()):
    pir = proc.ir()
    if not isinstance(c_template, str) or not c_template.strip():
        raise C._proc_error(proc, "make_instr: the C template must be a "
                            f"non-empty string, got {c_template!r}")
    if not isinstance(c_global, str):
        raise C._proc_error(proc, "make_instr: c_global must be a string, "
                            f"got {c_global!r}")
    try:
        feats = normalize_features(cpu_features, "make_instr cpu_features")
    except TypeError as e:
        raise C._proc_error(proc, f"make_instr: {e}") from None
    new_ir = pir.update(instr=IR.Instr(c_template, c_global, feats))
    from ..frontend.parser import check_instr_template
    try:
        check_instr_template(new_ir, c_template)
    except ExoTypeError as e:
        raise SchedulingError(f"make_instr: {e}") from None
    return derive(proc, new_ir, "make_instr")
