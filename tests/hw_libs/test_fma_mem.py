"""hw_libs/{avx512,avx2}/fma_mem.py: the FMA whose vector operand stays in
memory (inline assembly) computes what ``mm512_fmadd_bcst_ps`` /
``mm256_fmadd_bcst_ps`` compute, bit for bit, reads its ``b`` as a
memory operand (the AVX2 one where the build has 16 ymm registers), and
its C builds warning-free with gcc and clang (both assembler dialects).
Emulated on hosts without AVX-512 (the portable form of the helper)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from exo_hl import DRAM, compile_procs, f32, proc, seq
from exo_hl.hw_libs.avx2 import (AVX2, mm256_fmadd_bcst_bmem_ps,
                                 mm256_fmadd_bcst_ps, mm256_loadu_ps,
                                 mm256_storeu_ps)
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
def two_fmas8(x: f32[2, 8] @ DRAM, a: f32[2] @ DRAM, y: f32[2, 8] @ DRAM):
    """``two_fmas`` on AVX2 registers."""
    t: f32[8] @ AVX2
    mm256_loadu_ps(t, y[0, 0:8])
    mm256_fmadd_bcst_bmem_ps(t, a[0:1], x[0, 0:8])
    mm256_fmadd_bcst_bmem_ps(t, a[1:2], x[1, 0:8])
    mm256_storeu_ps(y[0, 0:8], t)
    r: f32[2, 8] @ AVX2
    for i in seq(0, 2):
        mm256_loadu_ps(r[i, 0:8], x[i, 0:8])
    u: f32[8] @ AVX2
    mm256_loadu_ps(u, y[1, 0:8])
    mm256_fmadd_bcst_ps(u, a[0:1], r[0, 0:8])
    mm256_fmadd_bcst_ps(u, a[1:2], r[1, 0:8])
    mm256_storeu_ps(y[1, 0:8], u)


@proc
def axpy16(x: f32[16] @ DRAM, a: f32[1] @ DRAM, y: f32[16] @ DRAM):
    t: f32[16] @ AVX512
    mm512_loadu_ps(t, y[0:16])
    for i in seq(0, 16):
        t[i] += a[0] * x[i]
    mm512_storeu_ps(y[0:16], t)


@pytest.mark.parametrize("lanes", [16, 8])
def test_same_bits_as_the_register_fma(lanes):
    """Random floats (the fused rounding shows: a multiply then an add
    would differ in some lanes), both rows from one start: the two forms
    agree bit for bit; small integers: the interpreter agrees too."""
    p = two_fmas if lanes == 16 else two_fmas8
    f = p.compile()
    rng = np.random.default_rng(11)
    for data in ("float", "int"):
        if data == "float":
            x = rng.standard_normal((2, lanes)).astype(np.float32)
            a = rng.standard_normal(2).astype(np.float32)
            y0 = rng.standard_normal(lanes).astype(np.float32)
        else:
            x = rng.integers(-8, 9, (2, lanes)).astype(np.float32)
            a = rng.integers(-8, 9, 2).astype(np.float32)
            y0 = rng.integers(-8, 9, lanes).astype(np.float32)
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
            p.interpret(x=x, a=a, y=want)
            assert np.array_equal(y, want)


def test_replace_matches_its_body():
    p = axpy16.replace(axpy16.find_loop('i'), mm512_fmadd_bcst_bmem_ps)
    assert "mm512_fmadd_bcst_bmem_ps(t[0:16], a[0:1], x[0:16])" in str(p)


def _build(tmp_path, cc, flags):
    compile_procs([two_fmas, two_fmas8], str(tmp_path), "fm")
    return subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror",
                           *flags, "-S", "-o", "fm.s", "fm.c"], cwd=tmp_path,
                          capture_output=True, text=True)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("flags", [["-O3", "-march=haswell"], ["-O2"],
                                   ["-O3", "-march=haswell", "-masm=intel"],
                                   ["-O3", "-march=x86-64-v4"]])
def test_memory_operand_and_warning_free(tmp_path, cc, flags):
    """The FMAs take ``b`` as a memory operand (the point: no register
    for it), in AT&T and Intel syntax: AVX-512's always, AVX2's where the
    build has 16 ymm registers (with AVX-512VL, x86-64-v4, the helper is
    the intrinsic); no warning."""
    r = _build(tmp_path, cc, flags)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    asm = (tmp_path / "fm.s").read_text()
    fmas = [ln.split(None, 1)[1].split("#")[0] for ln in asm.splitlines()
            if ln.strip().startswith("vfmadd231ps")]      # (no comment)
    if "-masm=intel" in flags:
        mem = [ops for ops in fmas if "word ptr" in ops.lower()]
    else:
        mem = [ops for ops in fmas if "(" in ops and "1to" not in ops]
    zmm = [ops for ops in mem if "zmm" in ops]
    assert len(zmm) >= 2, fmas
    if "x86-64-v4" not in " ".join(flags):     # (else the compiler's
        assert len(mem) - len(zmm) >= 2, fmas  # choice: the intrinsic)
