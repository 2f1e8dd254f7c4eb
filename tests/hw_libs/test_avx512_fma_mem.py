"""hw_libs/avx512/fma_mem.py: the FMA whose vector operand stays in memory
(inline assembly) computes what ``mm512_fmadd_bcst_ps`` computes, bit for
bit, reads its ``b`` as a memory operand, and its C builds warning-free
with gcc and clang (both assembler dialects). Emulated on hosts without
AVX-512 (the portable form of the helper)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from exo_hl import DRAM, compile_procs, f32, proc, seq
from exo_hl.hw_libs.avx512 import (AVX512, mm512_fmadd_bcst_bmem_ps,
                                   mm512_fmadd_bcst_ps, mm512_loadu_ps,
                                   mm512_storeu_ps)


@proc
def two_fmas(x: f32[2, 16] @ DRAM, a: f32[2] @ DRAM, y: f32[2, 16] @ DRAM):
    """y[0] += a0 x0 + a1 x1 with x read by the FMAs from memory, y[1] the
    same with x in registers (``mm512_fmadd_bcst_ps``)."""
    t: f32[16] @ AVX512
    mm512_loadu_ps(t, y[0, 0:16])
    mm512_fmadd_bcst_bmem_ps(t, a[0:1], x[0, 0:16])
    mm512_fmadd_bcst_bmem_ps(t, a[1:2], x[1, 0:16])
    mm512_storeu_ps(y[0, 0:16], t)
    r: f32[2, 16] @ AVX512
    for i in seq(0, 2):
        mm512_loadu_ps(r[i, 0:16], x[i, 0:16])
    u: f32[16] @ AVX512
    mm512_loadu_ps(u, y[1, 0:16])
    mm512_fmadd_bcst_ps(u, a[0:1], r[0, 0:16])
    mm512_fmadd_bcst_ps(u, a[1:2], r[1, 0:16])
    mm512_storeu_ps(y[1, 0:16], u)


@proc
def axpy16(x: f32[16] @ DRAM, a: f32[1] @ DRAM, y: f32[16] @ DRAM):
    t: f32[16] @ AVX512
    mm512_loadu_ps(t, y[0:16])
    for i in seq(0, 16):
        t[i] += a[0] * x[i]
    mm512_storeu_ps(y[0:16], t)


def test_same_bits_as_the_register_fma():
    """Random floats (the fused rounding shows: a multiply then an add
    would differ in some lanes), both rows from one start: the two forms
    agree bit for bit; small integers: the interpreter agrees too."""
    f = two_fmas.compile()
    rng = np.random.default_rng(11)
    for data in ("float", "int"):
        if data == "float":
            x = rng.standard_normal((2, 16)).astype(np.float32)
            a = rng.standard_normal(2).astype(np.float32)
            y0 = rng.standard_normal(16).astype(np.float32)
        else:
            x = rng.integers(-8, 9, (2, 16)).astype(np.float32)
            a = rng.integers(-8, 9, 2).astype(np.float32)
            y0 = rng.integers(-8, 9, 16).astype(np.float32)
        y = np.stack([y0, y0])
        f(x=x, a=a, y=y)
        assert np.array_equal(y[0].view(np.uint32), y[1].view(np.uint32))
        fused = (y0.astype(np.float64) + np.float64(a[0]) * x[0]
                 ).astype(np.float32)
        assert np.array_equal(
            y[0], (fused.astype(np.float64) + np.float64(a[1]) * x[1])
            .astype(np.float32))
        if data == "int":
            want = np.stack([y0, y0])
            two_fmas.interpret(x=x, a=a, y=want)
            assert np.array_equal(y, want)


def test_replace_matches_its_body():
    p = axpy16.replace(axpy16.find_loop('i'), mm512_fmadd_bcst_bmem_ps)
    assert "mm512_fmadd_bcst_bmem_ps(t[0:16], a[0:1], x[0:16])" in str(p)


def _build(tmp_path, cc, flags):
    compile_procs([two_fmas], str(tmp_path), "fm")
    return subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror",
                           *flags, "-S", "-o", "fm.s", "fm.c"], cwd=tmp_path,
                          capture_output=True, text=True)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("flags", [["-O3", "-march=x86-64-v4"], ["-O2"],
                                   ["-O3", "-march=x86-64-v4",
                                    "-masm=intel"]])
def test_memory_operand_and_warning_free(tmp_path, cc, flags):
    """The FMA takes ``b`` as a 64-byte memory operand (the point: no
    register for it), in AT&T and Intel syntax; no warning."""
    r = _build(tmp_path, cc, flags)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    asm = (tmp_path / "fm.s").read_text()
    fmas = [ln.split(None, 1) for ln in asm.splitlines()
            if ln.strip().startswith("vfmadd231ps")]
    if "-masm=intel" in flags:
        mem = [ops for _, ops in fmas if "ZMMWORD PTR" in ops
               or "zmmword ptr" in ops]
    else:
        mem = [ops for _, ops in fmas if "(" in ops and "1to16" not in ops]
    assert len(mem) >= 2, fmas
