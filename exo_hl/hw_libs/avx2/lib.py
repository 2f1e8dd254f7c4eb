"""AVX2 + FMA as a user library: 256-bit register memory and instructions.

Written exactly as a user would write it (public ``exo_hl`` API only). The
memory ``AVX2`` holds ``__m256`` registers for f32 (8 lanes); a buffer
``f32[..., 8]`` becomes an array of registers that only the instructions
below may touch. Each instruction's body is its exact meaning (what
``interpret`` runs and what ``replace`` matches); its template is the
intrinsic emitted in C, and it declares the CPU features that intrinsic
needs.
"""
from __future__ import annotations

from exo_hl import DRAM, f32, instr, seq
from exo_hl import stride  # noqa: F401  (used inside instruction bodies)
from exo_hl.hw_libs.vector_registers import VectorRegisters

LANES = 8  # f32 lanes of one ymm register

_INCLUDE = "#include <immintrin.h>\n"
_AVX = {"avx2"}
_FMA = {"avx2", "fma"}


class AVX2(VectorRegisters):
    """256-bit vector registers: ``__m256`` (8 x f32).

    A buffer's last dimension must be exactly one register (8 floats) and
    its other sizes constant: ``t: f32[8]`` is one register,
    ``t: f32[6, 2, 8]`` an array of 12.
    """

    registers = {"float": ("__m256", LANES)}
    cpu_features = frozenset(_AVX)


# ---------------------------------------------------------------------------
# loads, stores, constants

@instr("{dst_data} = _mm256_loadu_ps(&{src_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_loadu_ps(dst: [f32][8] @ AVX2, src: [f32][8] @ DRAM):
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[i]


@instr("_mm256_storeu_ps(&{dst_data}, {src_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_storeu_ps(dst: [f32][8] @ DRAM, src: [f32][8] @ AVX2):
    assert stride(src, 0) == 1
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[i]


@instr("{dst_data} = _mm256_setzero_ps();", _INCLUDE, cpu_features=_AVX)
def mm256_setzero_ps(dst: [f32][8] @ AVX2):
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = 0.0


@instr("{dst_data} = _mm256_broadcast_ss(&{src_data});", _INCLUDE,
       cpu_features=_AVX)
def mm256_broadcast_ss(dst: [f32][8] @ AVX2, src: [f32][1] @ DRAM):
    """Broadcast one float from memory into all 8 lanes."""
    assert stride(dst, 0) == 1
    for i in seq(0, 8):
        dst[i] = src[0]


# ---------------------------------------------------------------------------
# fused multiply-add

@instr("{dst_data} = _mm256_fmadd_ps({a_data}, {b_data}, {dst_data});",
       _INCLUDE, cpu_features=_FMA)
def mm256_fmadd_ps(dst: [f32][8] @ AVX2, a: [f32][8] @ AVX2,
                   b: [f32][8] @ AVX2):
    """``dst += a * b`` lane-wise, one rounding (fused)."""
    assert stride(dst, 0) == 1
    assert stride(a, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] += a[i] * b[i]


@instr("{dst_data} = _mm256_fmadd_ps(_mm256_broadcast_ss(&{a_data}), "
       "{b_data}, {dst_data});", _INCLUDE, cpu_features=_FMA)
def mm256_fmadd_bcst_ps(dst: [f32][8] @ AVX2, a: [f32][1] @ DRAM,
                        b: [f32][8] @ AVX2):
    """``dst += a[0] * b``: the SGEMM micro-kernel's step (one element of A
    broadcast, times a register of B)."""
    assert stride(dst, 0) == 1
    assert stride(b, 0) == 1
    for i in seq(0, 8):
        dst[i] += a[0] * b[i]


INSTRS = (mm256_loadu_ps, mm256_storeu_ps, mm256_setzero_ps,
          mm256_broadcast_ss, mm256_fmadd_ps, mm256_fmadd_bcst_ps)
