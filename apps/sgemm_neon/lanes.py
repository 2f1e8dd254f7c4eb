"""By-lane multiply-adds with the lane fixed, for instruction selection.

``neon_vfmla_lane_4xf32(dst, a, b, lane)`` takes the lane as an argument;
``replace`` infers a call from the loop it replaces, and for
``C[.., ji] += B_reg[jm, ji] * A_reg[io, 2]`` it infers lane 0 and a window
of ``A_reg`` starting at 2, which the bounds check refuses. With the lane a
constant of the instruction's body there is one reading: these four
user-defined instructions (user code, like any library) emit the same
``vfmaq_laneq_f32`` with a literal lane.
"""
from __future__ import annotations

from exo_hl import f32, instr, seq
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.hw_libs.neon import Neon

_INCLUDE = "#include <arm_neon.h>\n"
_TEMPLATE = ("{dst_data} = vfmaq_laneq_f32({dst_data}, {a_data}, {b_data}, "
             "%d);")


@instr(_TEMPLATE % 0, _INCLUDE, cpu_features={"neon"})
def fmla_lane0(dst: [f32][4] @ Neon, a: [f32][4] @ Neon, b: [f32][4] @ Neon):
    """``dst += a * b[0]``, fused."""
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] += a[i] * b[0]


@instr(_TEMPLATE % 1, _INCLUDE, cpu_features={"neon"})
def fmla_lane1(dst: [f32][4] @ Neon, a: [f32][4] @ Neon, b: [f32][4] @ Neon):
    """``dst += a * b[1]``, fused."""
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] += a[i] * b[1]


@instr(_TEMPLATE % 2, _INCLUDE, cpu_features={"neon"})
def fmla_lane2(dst: [f32][4] @ Neon, a: [f32][4] @ Neon, b: [f32][4] @ Neon):
    """``dst += a * b[2]``, fused."""
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] += a[i] * b[2]


@instr(_TEMPLATE % 3, _INCLUDE, cpu_features={"neon"})
def fmla_lane3(dst: [f32][4] @ Neon, a: [f32][4] @ Neon, b: [f32][4] @ Neon):
    """``dst += a * b[3]``, fused."""
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 4):
        dst[i] += a[i] * b[3]


FMLA_LANES = (fmla_lane0, fmla_lane1, fmla_lane2, fmla_lane3)
